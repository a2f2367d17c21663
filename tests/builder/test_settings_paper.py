"""``--preset paper`` step for step: every node a focus, penman's own linearization, the realizer's
input untagged; the three recorded in summary.json, refused to mix on resume; local model folders
allowed under the preset."""

from __future__ import annotations

import json
from pathlib import Path

import penman
import pytest
from entries import generate as main
from penman.models.amr import model

from paraamr import amr
from paraamr import settings as settings_module
from paraamr.builder.pipeline import Generator, Stages
from paraamr.commands.generate import build_parser, settings_from_args
from paraamr.errors import UsageError
from paraamr.settings import RecordSettings

GRAPHS = Path(__file__).parent / "data" / "graphs.amr"
#: A graph with each structural concept off the root: a name, a coordination, a question's gap.
STRUCTURAL = (
    "# ::id g-structural\n# ::snt Did John or Mary go?\n"
    '(g / go-02 :ARG0 (o / or :op1 (p / person :name (n / name :op1 "John")) '
    ':op2 (p2 / person :name (n2 / name :op1 "Mary"))) :polarity (a / amr-unknown))'
)


class Recorder:
    """A realizer that keeps what it is given and says the focus concept's word."""

    def __init__(self) -> None:
        self.inputs: list[str] = []

    def realize(self, graphs: list[str]) -> list[str]:
        self.inputs += graphs
        return [f"{g.split('/', 1)[1].split()[0]} {i}." for i, g in enumerate(graphs, len(self.inputs))]


def _blocks() -> list[str]:
    blocks = [block for _, block in amr.read_graphs(GRAPHS.read_text().splitlines())]
    return [*blocks, STRUCTURAL]


def _penman_at(text: str, focus: str) -> str:
    """penman's own linearization, from penman alone (one line, as the pipeline writes them)."""
    graph = penman.decode(text, model=model)
    graph.metadata = {k: v for k, v in graph.metadata.items() if k != "focus"} | {"focus": focus}
    return penman.encode(graph, top=focus, model=model, indent=None)


def test_under_the_preset_every_linearization_is_penmans_at_every_node():
    recorder = Recorder()
    gen = Generator(Stages(realizer=recorder), RecordSettings.paper(amr_input=str(GRAPHS)), window=3)
    records = list(gen.generate_from_amr(_blocks()))
    expected = []
    for record in records:
        graph = penman.decode(record["amr"], model=model)
        order = dict.fromkeys(s for s, _, _ in graph.triples)
        expected += [_penman_at(record["amr"], v) for v in order if v != graph.top]
        for para in record["paraphrases"]:
            assert para["amr"] == _penman_at(record["amr"], para["amr"].split("(", 1)[1].split()[0])
    assert recorder.inputs == expected and len(expected) == 37
    # the structural concepts are foci too (the default rule leaves them out)
    structural = next(r for r in records if r["id"] == "g-structural")
    assert {p["focus"] for p in structural["paraphrases"]} >= {"name", "or", "amr-unknown"}
    default = Generator(Stages(realizer=Recorder()), RecordSettings(tagging="untagged"), window=3)
    (plain,) = default.generate_from_amr([STRUCTURAL])
    assert {p["focus"] for p in plain["paraphrases"]} == {"person"}


@pytest.mark.slow
def test_the_preset_records_its_steps_and_takes_local_models(tiny_models, tmp_path):
    out = tmp_path / "paper"
    args = [
        "--preset", "paper", "--amr-input", str(GRAPHS), "--output", str(out),
        "--realizer-model", str(tiny_models["realizer"]), "--lm-model", str(tiny_models["lm"]),
        "--no-progress", "--window", "4",
    ]  # fmt: skip
    assert main(args) == 0
    summary = json.loads((out / "summary.json").read_text())
    s, counts = summary["settings"], summary["counts"]
    assert (s["foci_rule"], s["linearization"], s["tagging"]) == ("every-node", "penman", "untagged")
    assert s["max_perplexity"] is None and s["parser_model"] == "parse_xfm_bart_large"
    assert counts["realized_by_input"] == {"untagged": counts["candidates"]} and counts["candidates"] > 25
    card = (out / "README.md").read_text()
    assert "| foci_rule | `every-node` |" in card and "| linearization | `penman` |" in card
    assert "written by penman (`penman.encode`) and realized, untagged," in card
    # a Hub id other than the preset's is still refused; a local folder is not
    with pytest.raises(UsageError, match="--preset paper sets --lm-model gpt2"):
        settings_from_args(
            build_parser().parse_args(["--preset", "paper", "--input", "x", "--lm-model", "smollm2"])
        )


@pytest.mark.slow
def test_auto_tagging_follows_the_machine_and_a_resume_may_not_mix(
    tiny_models, tmp_path, monkeypatch, capsys
):
    monkeypatch.setattr(settings_module, "spacy_installed", lambda: False)
    assert RecordSettings().tagging == "untagged"
    out = tmp_path / "run"
    args = [
        "--amr-input", str(GRAPHS), "--output", str(out), "--no-progress",
        "--realizer-model", str(tiny_models["realizer"]), "--lm-model", str(tiny_models["lm"]),
    ]  # fmt: skip
    assert main(args) == 0
    assert json.loads((out / "summary.json").read_text())["settings"]["tagging"] == "untagged"
    monkeypatch.setattr(settings_module, "spacy_installed", lambda: True)  # a spaCy model, now
    assert RecordSettings().tagging == "tagged"
    capsys.readouterr()
    assert main(args) == 1
    err = capsys.readouterr().err
    assert "--tagging was 'untagged', now 'tagged' (give --tagging untagged to resume as it was)" in err
    assert main([*args, "--tagging", "untagged"]) == 0  # as it was: the run is done, nothing changes


def test_tagged_without_a_spacy_model_is_refused_before_anything_is_written(
    tiny_models, tmp_path, monkeypatch, capsys
):
    monkeypatch.setattr(settings_module, "spacy_installed", lambda: False)
    out = tmp_path / "never"
    args = [
        "--amr-input", str(GRAPHS), "--output", str(out), "--no-progress", "--tagging", "tagged",
        "--realizer-model", str(tiny_models["realizer"]), "--lm-model", str(tiny_models["lm"]),
    ]  # fmt: skip
    assert main(args) == 1
    assert "--tagging tagged needs a spaCy English model" in capsys.readouterr().err
    assert not out.exists()


def test_the_preset_takes_local_copies_of_its_models(tmp_path):
    copy = tmp_path / "gpt2-copy"
    copy.mkdir()
    parse = build_parser().parse_args
    paper = settings_from_args(parse(["--preset", "paper", "--input", "x", "--lm-model", str(copy)]))[0]
    assert paper == RecordSettings.paper(input=paper.input, lm_model=str(copy))
    with pytest.raises(UsageError, match="--preset paper sets --lm-model gpt2"):  # not on disk: a Hub id
        settings_from_args(parse(["--preset", "paper", "--input", "x", "--lm-model", str(tmp_path / "none")]))
