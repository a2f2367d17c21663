"""The Hub Space of the paraphrase_quality evaluate module (paraamr.metric_modules.space)."""

from pathlib import Path

from paraamr.metric_modules import space

space(Path(__file__).with_name("paraphrase_quality.py")).launch()
