"""The Hub Space of the semantic_similarity evaluate module (paraamr.metric_modules.space)."""

from pathlib import Path

from paraamr.metric_modules import space

space(Path(__file__).with_name("semantic_similarity.py")).launch()
