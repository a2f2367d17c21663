"""The Hub Space of the ted_diversity evaluate module (paraamr.metric_modules.space)."""

from pathlib import Path

from paraamr.metric_modules import space

space(Path(__file__).with_name("ted_diversity.py")).launch()
