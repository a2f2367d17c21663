"""``Generator`` drops a repeated source within one call, never across calls (a notebook cell run
twice gives its records twice), and keeps every repeat with ``dedup=False``."""

from __future__ import annotations

from paraamr.builder.pipeline import Generator, Stages
from paraamr.settings import RecordSettings

GRAPHS = [
    "# ::id a\n(w / want-01 :ARG0 (b / boy))",
    "# ::id b\n(s / sleep-01 :ARG0 (g / girl))",
    "# ::id a\n(w / want-01 :ARG0 (b / boy))",
]


class Words:
    """A realizer stage: the concepts of the graph in order (a different text per focus)."""

    def realize(self, graphs: list[str]) -> list[str]:
        return [" ".join(part.split()[0] for part in g.split("/ ")[1:]) for g in graphs]


def _generator() -> Generator:
    return Generator(Stages(realizer=Words()), RecordSettings(), window=2)


def test_repeat_within_a_call_is_a_duplicate_failure() -> None:
    gen = _generator()
    assert [r["id"] for r in gen.generate_from_amr(GRAPHS)] == ["a", "b"]
    assert [(f["id"], f["reason"]) for f in gen.failures] == [("a", "duplicate")]


def test_a_second_call_gives_the_same_records() -> None:
    gen = _generator()
    first = list(gen.generate_from_amr(GRAPHS[:2]))
    second = list(gen.generate_from_amr(GRAPHS[:2]))
    assert first == second and len(first) == 2 and gen.failures == []
    assert gen.stats.inputs == 4 == gen.stats.records


def test_dedup_false_keeps_every_repeat() -> None:
    gen = _generator()
    records = list(gen.generate_from_amr(GRAPHS, dedup=False))
    assert [r["id"] for r in records] == ["a", "b", "a"] and gen.failures == []


def test_repeated_blank_lines_are_each_empty_not_duplicates() -> None:
    """Blank lines share an id: the second was a 'duplicate', so the summary counted blank lines
    among the repeated sentences."""

    class Parse:
        def parse(self, texts: list[str]) -> list[str]:
            return ["(b / boy)" for _ in texts]

    gen = Generator(Stages(parser=Parse(), realizer=Words()), RecordSettings(), window=2)
    records = list(gen.generate(["", "A boy.", " ", "", "A boy."]))
    assert len(records) == 1
    assert [f["reason"] for f in gen.failures] == ["empty or whitespace-only"] * 3 + ["duplicate"]


def test_a_text_of_no_visible_character_is_a_failure_not_a_record() -> None:
    """Before: a line of zero-width spaces or of control characters was parsed and kept as a record
    (evaluate and quality already refused such texts)."""

    class Parse:
        def parse(self, texts: list[str]) -> list[str]:
            return ["(b / boy)" for _ in texts]

    gen = Generator(Stages(parser=Parse(), realizer=Words()), RecordSettings(), window=2)
    records = list(gen.generate(["\u200b\u200b", "\x07\x1b", "A boy.", "\u00a0"]))
    assert [r["text"] for r in records] == ["A boy."]
    assert [f["reason"] for f in gen.failures] == ["no visible character"] * 2 + ["empty or whitespace-only"]
