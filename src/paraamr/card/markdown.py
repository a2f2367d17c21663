"""Text that a card embeds: one-line Markdown cells, code spans, numbers, cut example texts.

Data a card shows goes through :func:`md` or :func:`code`, so no input breaks its Markdown or injects HTML.

>>> md("a | <b> *c*\\n d")
'a \\\\| &lt;b&gt; \\\\*c\\\\* d'
>>> code("a_b`c"), number(0.5), number(None), size_category(177410)
("`a_b'c`", '0.5', 'none', '100K<n<1M')
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["MAX_SHOWN_CHARS", "code", "cut", "md", "number", "size_category"]

#: Longest text a card shows of one example (a source, a paraphrase, a setting).
MAX_SHOWN_CHARS = 300
_SIZES = [
    (10**3, "n<1K"),
    (10**4, "1K<n<10K"),
    (10**5, "10K<n<100K"),
    (10**6, "100K<n<1M"),
    (10**7, "1M<n<10M"),
    (10**8, "10M<n<100M"),
    (10**9, "100M<n<1B"),
]


def size_category(instances: int) -> str:
    """The Hub's ``size_categories`` value for a number of rows.

    >>> size_category(15543606)
    '10M<n<100M'
    """
    for bound, name in _SIZES:
        if instances < bound:
            return name
    return "1B<n<10B"


def cut(text: Any, limit: int = MAX_SHOWN_CHARS) -> str:
    """``text`` on one line, cut to ``limit`` characters (an ellipsis says it was cut).

    >>> cut("a  b\\nc"), cut("x" * 10, 4)
    ('a b c', 'xxx…')
    """
    text = " ".join(str(text)[: limit * 4].split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def md(text: Any) -> str:
    """``text`` safe inside a Markdown table cell or line: one line, cut, no markup, no HTML."""
    text = cut(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return re.sub(r"([\\`*_\[\]|#])", r"\\\1", text)


def code(text: Any) -> str:
    """``text`` as a Markdown code span, cut (no escapes work inside one: backticks become quotes)."""
    return "`" + cut(text).replace("`", "'") + "`"


def number(value: Any) -> str:
    """A setting's value as the card prints it: ``none``, ``yes``/``no``, floats in short form."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)
