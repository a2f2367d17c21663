"""The Hub Space of the lexical_diversity evaluate module (paraamr.metric_modules.space)."""

from pathlib import Path

from paraamr.metric_modules import space

space(Path(__file__).with_name("lexical_diversity.py")).launch()
