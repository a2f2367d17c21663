"""The Hub dataset card (README.md) of a ParaAMR folder, rendered from the template in the package.

:func:`write_card` writes it from the folder's shards, ``summary.json`` and Table-2 row
(:func:`update_card_metrics`).

>>> text = render_card(summary=None, stats=None, license="cc-by-nc-4.0", splits=["train"])
>>> from huggingface_hub import DatasetCard
>>> data = DatasetCard(text).data
>>> data.license, [c["config_name"] for c in data.configs], data.configs[1]["data_files"][0]["path"]
('cc-by-nc-4.0', ['default', 'pairs'], 'data/pairs/train-?????-of-?????.parquet')
>>> "{{" in text or "More Information Needed" in text
False
"""

from paraamr.card.markdown import code, cut, md, size_category
from paraamr.card.render import (
    TEMPLATE,
    card_for_repo,
    configs,
    evaluation_card,
    render,
    render_card,
    template_text,
    update_card_metrics,
    write_card,
)
from paraamr.card.sections import with_dataset_info
from paraamr.card.settings import record_settings

__all__ = [
    "TEMPLATE",
    "card_for_repo",
    "code",
    "configs",
    "cut",
    "evaluation_card",
    "md",
    "record_settings",
    "render",
    "render_card",
    "size_category",
    "template_text",
    "update_card_metrics",
    "with_dataset_info",
    "write_card",
]
