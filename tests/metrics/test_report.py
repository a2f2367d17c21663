"""evaluate_pairs (distinct sentences parsed once, in parallel, embedded once) gives the values of
the straightforward per-pair loop (tests/metrics/metrics_per_pair_loop.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from metrics_per_pair_loop import per_pair_loop, uncached

from paraamr.metrics.parsers import LinkGrammarParser
from paraamr.metrics.report import Pair, evaluate_pairs, read_pairs

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def embedder():
    from paraamr.models.embedder import Embedder

    return Embedder("all-MiniLM-L6-v2", device="cpu")


def test_evaluate_pairs_equals_the_per_pair_loop(embedder, tmp_path):
    pairs = read_pairs(DATA / "release_sample.jsonl")
    # sources with several paraphrases, a repeated pair, a sentence that differs only in spacing
    pairs += [pairs[0], Pair("extra", pairs[1].source.replace(" ", "  "), pairs[2].paraphrase)]
    loop_parser = LinkGrammarParser(processes=1)
    try:
        expected = per_pair_loop(
            [(p.source, p.paraphrase) for p in pairs], embedder=embedder, parse=uncached(loop_parser)
        )
    finally:
        loop_parser.close()
    with LinkGrammarParser(processes=2, cache_dir=tmp_path) as parser:
        result = evaluate_pairs(pairs, embedder=embedder, parser=parser)
        assert parser.calls == result["distinct_sentences"] < 2 * len(pairs)
    for key in ("bleu_diversity", "jaccard_diversity", "ted3", "tedf"):
        assert result["scores"][key] == pytest.approx(expected[key], abs=1e-9), key
    assert result["scores"]["semantic_similarity"] == pytest.approx(expected["semantic_similarity"], abs=1e-4)
    assert set(result["timings"]) == {"parse", "embed", "lexical", "ted"}
    with LinkGrammarParser(processes=1, cache_dir=tmp_path) as again:  # a later run: all from disk
        assert evaluate_pairs(pairs, embedder=embedder, parser=again)["scores"] == result["scores"]
        assert again.calls == 0


def test_references_with_a_byte_order_mark_read_as_without(tmp_path):
    """A references file saved with a UTF-8 BOM: the first reference has no BOM."""
    from paraamr.metrics.report import with_references

    refs = tmp_path / "refs.txt"
    refs.write_bytes(b"\xef\xbb\xbfThe boy left.\nA cat sat.\n")
    pairs = [Pair("x", "a", "b", index=0), Pair("y", "c", "d", index=1)]
    assert [p.reference for p in with_references(pairs, refs)] == ["The boy left.", "A cat sat."]
    # a line is what ends at \n (or \r\n): U+2028, a form feed or U+0085 are text (before: 4 lines)
    refs.write_text("The boy\u2028left.\x0c\r\nA cat\x85 sat.", encoding="utf-8")
    assert [p.reference for p in with_references(pairs, refs)] == ["The boy\u2028left.\x0c", "A cat\x85 sat."]


def test_json_lines_of_pairs_read_as_the_same_pairs_in_two_columns(tmp_path):
    """The pair lines ``quality score`` reads (examples/pairs.jsonl, a ``pairs`` row each) were
    refused by evaluate: 'line 1: "paraphrases" must be a list, got NoneType'."""
    import json

    from paraamr.errors import InputError

    examples = Path(__file__).resolve().parents[2] / "examples" / "pairs.jsonl"
    rows = [json.loads(line) for line in examples.read_text(encoding="utf-8").splitlines() if line.strip()]
    tsv = tmp_path / "pairs.tsv"
    tsv.write_text("".join(f"{r['text']}\t{r['para_text']}\n" for r in rows), encoding="utf-8")
    as_lines, as_columns = read_pairs(examples), read_pairs(tsv)
    assert [(p.source, p.paraphrase) for p in as_lines] == [(p.source, p.paraphrase) for p in as_columns]
    assert as_lines[1].where == f"{examples}, line 2"
    with_ppl = tmp_path / "ppl.jsonl"
    with_ppl.write_text('{"text": "a", "para_text": "b", "perplexity": 42}\n{"id": 1}\n', encoding="utf-8")
    with pytest.raises(
        InputError, match=r'ppl\.jsonl, line 2: not a pair \(strings "text" and "para_text"\)'
    ):
        read_pairs(with_ppl)
    with_ppl.write_text('{"text": "a", "para_text": "b", "perplexity": 42, "id": "r1"}\n', encoding="utf-8")
    assert (read_pairs(with_ppl)[0].perplexity, read_pairs(with_ppl)[0].id) == (
        42.0,
        "r1",
    )  # --max-perplexity
    with_ppl.write_text('{"text": "a", "para_text": "b", "perplexity": -20}\n', encoding="utf-8")
    with pytest.raises(
        InputError, match=r'line 1: "perplexity" must be a finite number > 0 or None, got -20'
    ):
        read_pairs(with_ppl)  # it passed every --max-perplexity, as in a release line before


def test_a_tab_separated_file_keeps_its_quotes_and_its_long_lines(tmp_path):
    """ParaNMT's tokenized text starts fields with '"': read as CSV quoting, lines 1-2 became one
    pair and the next ones were named a line early; a field over the csv module's 128 KiB limit
    stopped the whole file. Now every line is its pair, as written; the long one fails --max-chars."""
    lines = [
        '" I know .\tI know it .',
        'She said " no " .\tShe refused .',
        '"Hi," he said.\t"Hello," he said.',
    ]
    lines.append("The cat sat.\t" + "word " * 30_000)
    path = tmp_path / "q.tsv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    pairs = read_pairs(path)
    assert [(p.where, p.source + "\t" + p.paraphrase) for p in pairs] == [
        (f"{path}, line {n}", line) for n, line in enumerate(lines, start=1)
    ]


def test_a_first_row_in_no_layout_says_which_layouts_there_are(tmp_path):
    """Before: 'line 1: expected 2 columns (source, paraphrase) as on its first row, got 3 columns'."""
    from paraamr.errors import InputError

    path = tmp_path / "three.tsv"
    path.write_text("a\tb\tc\n")
    with pytest.raises(InputError, match=r"line 1: got 3 columns, in none of the layouts read \(2 columns "):
        read_pairs(path)
    path.write_text("a\tb\nc\td\te\n")
    with pytest.raises(InputError, match=r"line 2: expected 2 columns \(source, paraphrase\) as on its"):
        read_pairs(path)


def test_the_card_note_says_which_pairs_were_scored_in_the_tables_names():
    """The note under a card's row named the measures by their keys ("semantic_similarity 90.82-97.40,
    ted3 ...") beside a table of titles, and hid --max-perplexity: the card's statistics count every
    pair, the row only those kept."""
    from paraamr.metrics.report import card_note

    intervals = {"semantic_similarity": (90.82, 97.4), "ted3": (1.0, 2.5), "tedf": (None, None)}
    result = {"pairs": 6, "intervals": intervals}
    settings = {
        "options": {"sample": None, "seed": 0, "max_perplexity": 120.0},
        "unit": "sources",
        "selection": {"dropped": 5, "input_pairs": 11, "without_perplexity": 0},
    }
    assert card_note(result, settings) == (
        "Computed with `paraamr evaluate` over 6 pairs, those whose paraphrase has perplexity at most 120 "
        "(5 of 11 left out); scores ×100, TED unnormalized. 95% intervals (cluster bootstrap over sources): "
        "Semantic similarity 90.82–97.40, TED-3 1.00–2.50."
    )
    # pairs kept without a perplexity are named (before: counted among "at most 120", unsaid)
    settings["selection"]["without_perplexity"] = 1
    assert "at most 120 (5 of 11 left out; 1 without a perplexity kept);" in card_note(result, settings)
    # the sources drawn as many as there were (before: '100 sources drawn' of 5), and the split scored
    settings = {"options": {"sample": 100, "seed": 0, "split": "validation"}, "unit": "sources", "sources": 5}
    assert card_note({"pairs": 3}, settings).startswith(
        "Computed with `paraamr evaluate` over 3 pairs of split validation, 5 of 5 sources drawn with seed 0;"
    )
