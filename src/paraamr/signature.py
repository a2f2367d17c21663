"""Signatures: how a score was computed, sacrebleu style (``name|key:value|key:value``).

A :class:`Signature` is an optional name and ordered ``key: value`` fields. ``str`` formats it;
:meth:`Signature.parse` reads it back. A value may hold ``:`` (``lib:sentence-transformers:3.0``
is the key ``lib`` with the value ``sentence-transformers:3.0``); neither keys nor values may
hold ``|``. Booleans are written ``yes``/``no`` as sacrebleu does; other values with ``str``.

>>> sig = Signature("ppl", model="gpt2", bos=True, version="0.1.0")
>>> str(sig)
'ppl|model:gpt2|bos:yes|version:0.1.0'
>>> Signature.parse(str(sig)) == sig, sig.fields, sig["model"]
(True, {'model': 'gpt2', 'bos': 'yes', 'version': '0.1.0'}, 'gpt2')
>>> Signature.parse("nrefs:1|tok:13a").extend(Signature(case="lc"), paraamr="0.1.0")
Signature.parse('nrefs:1|tok:13a|case:lc|paraamr:0.1.0')
>>> Signature.parse("tok:13a").extend(tok="intl")
Traceback (most recent call last):
...
ValueError: signature field 'tok' given twice: '13a' and 'intl'
>>> Signature.parse("ppl|model:gpt2|oops")
Traceback (most recent call last):
...
ValueError: signature 'ppl|model:gpt2|oops': part 3 ('oops') is not key:value
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

__all__ = ["Signature"]


def _value(value: object) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _check(kind: str, text: str, *, colon: bool) -> str:
    bad = "|\n" + ("" if colon else ":")
    if not text or text != text.strip() or any(c in text for c in bad):
        raise ValueError(f"signature {kind} {text!r}: must be non-empty, unpadded, without {bad!r}")
    return text


class Signature:
    """An optional ``name`` and ordered fields: ``Signature(name, **fields)``; immutable."""

    __slots__ = ("_fields", "_name")

    def __init__(self, name: str | None = None, /, **fields: object) -> None:
        self._name = None if name is None else _check("name", name, colon=False)
        self._fields = {
            _check("key", k, colon=False): _check("value", _value(v), colon=True) for k, v in fields.items()
        }

    @classmethod
    def parse(cls, text: str | Signature) -> Signature:
        """The signature that ``str`` formats as ``text`` (a leading part without ``:`` is the name)."""
        if isinstance(text, Signature):
            return text
        if not isinstance(text, str):
            raise ValueError(f"signature: expected str, got {type(text).__name__}")
        parts = text.split("|") if text else []
        name = parts.pop(0) if parts and ":" not in parts[0] else None
        fields: dict[str, str] = {}
        for number, part in enumerate(parts, start=2 if name is not None else 1):
            key, colon, value = part.partition(":")
            if not colon:
                raise ValueError(f"signature {text!r}: part {number} ({part!r}) is not key:value")
            if key in fields:
                raise ValueError(f"signature {text!r}: field {key!r} given twice")
            fields[key] = value
        return cls(name, **fields)

    @property
    def name(self) -> str | None:
        """The name (``ppl``), or None.

        >>> Signature("ppl").name = "b|c:d"  # doctest: +IGNORE_EXCEPTION_DETAIL
        Traceback (most recent call last):
        ...
        AttributeError: property 'name' of 'Signature' object has no setter
        """
        return self._name

    @property
    def fields(self) -> dict[str, str]:
        """The fields in order (a copy)."""
        return dict(self._fields)

    def extend(self, *parts: Signature | Mapping[str, object] | str, **fields: object) -> Signature:
        """A new signature: these fields, then those of ``parts`` (signatures, their strings or
        mappings; a part's name is not kept) and ``fields``. A key given twice with different values
        is a ValueError; with the same value it is kept once."""
        merged = dict(self._fields)
        for part in [*parts, fields]:
            if isinstance(part, str | Signature):
                part = Signature.parse(part).fields
            for key, value in part.items():
                value = _value(value)
                if merged.setdefault(key, value) != value:
                    raise ValueError(f"signature field {key!r} given twice: {merged[key]!r} and {value!r}")
        return Signature(self.name, **merged)

    def __getitem__(self, key: str) -> str:
        return self._fields[key]

    def __contains__(self, key: object) -> bool:
        return key in self._fields

    def __iter__(self) -> Iterator[str]:
        return iter(self._fields)

    def __str__(self) -> str:
        parts = [f"{k}:{v}" for k, v in self._fields.items()]
        return "|".join([self.name, *parts] if self.name is not None else parts)

    def __repr__(self) -> str:
        return f"Signature.parse({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        """Equal to a signature with the same name and fields in the same order, or to its string."""
        if isinstance(other, Signature | str):
            return str(self) == str(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(str(self))
