"""paraamr.signature.Signature: formatting, parsing back, merging, equality."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from paraamr.signature import Signature

_CATEGORIES = ("Cs", "Zs", "Cc")
_KEY = st.text(st.characters(blacklist_characters="|:", blacklist_categories=_CATEGORIES), min_size=1)
_VALUE = st.text(st.characters(blacklist_characters="|", blacklist_categories=_CATEGORIES), min_size=1)


@given(st.one_of(st.none(), _KEY), st.dictionaries(_KEY, _VALUE, max_size=6))
def test_round_trip(name, fields):
    sig = Signature(name, **fields)
    text = str(sig)
    assert Signature.parse(text) == sig
    assert Signature.parse(text).fields == fields
    assert Signature.parse(text).name == name


def test_format_matches_sacrebleu_style():
    from sacrebleu.metrics import BLEU

    bleu = BLEU(effective_order=True)
    bleu.sentence_score("a b c", ["a b c"])
    text = bleu.get_signature().format()
    sig = Signature.parse(text)
    assert sig.name is None and sig["tok"] == "13a" and str(sig) == text


def test_equality_order_and_strings():
    a = Signature("ted", convention="aesop", norm=False)
    assert a == "ted|convention:aesop|norm:no"
    assert a != Signature("ted", norm=False, convention="aesop")  # order is part of a signature
    assert a != Signature(convention="aesop", norm=False)
    assert len({a, Signature.parse(str(a))}) == 1
    assert a.fields == {"convention": "aesop", "norm": "no"}
    a.fields["norm"] = "yes"  # a copy
    assert a["norm"] == "no"


@pytest.mark.parametrize(
    "make",
    [
        lambda: Signature("a|b"),
        lambda: Signature("a:b"),
        lambda: Signature(x="a|b"),
        lambda: Signature(**{"a:b": 1}),
        lambda: Signature(x=""),
        lambda: Signature.parse("x:1|x:2"),
        lambda: Signature.parse("x:1||y:2"),
        lambda: Signature.parse(3),
    ],
)
def test_bad_input_is_a_value_error(make):
    with pytest.raises(ValueError, match="signature"):
        make()


def test_extend_keeps_name_and_order():
    base = Signature("ppl", model="gpt2")
    merged = base.extend("lib:x:1|scale:x100", {"scale": "x100"}, version="0.1")
    assert str(merged) == "ppl|model:gpt2|lib:x:1|scale:x100|version:0.1"
    assert str(base) == "ppl|model:gpt2"
