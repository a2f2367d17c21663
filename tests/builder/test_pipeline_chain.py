"""The whole chain where every stage has an effect: hand-written multi-node AMR graphs (many foci)
through re-focusing, the tiny realizer, perplexity and the filters, thresholds set from the data
so that each filter keeps some candidates and drops others. Expected outcomes are computed
independently from the unfiltered run (and, for relative perplexity, from the LM directly)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from entries import generate as main

from paraamr.builder.pipeline import Generator, Stages, _prefetch
from paraamr.builder.stages import load_stages
from paraamr.models.catalog import MAX_BATCH_SIZES
from paraamr.settings import RecordSettings

GRAPHS = Path(__file__).parent / "data" / "graphs.amr"


def _blocks() -> list[str]:
    from paraamr.amr import read_graphs

    return [block for _, block in read_graphs(GRAPHS.read_text().splitlines())]


@pytest.fixture(scope="module")
def tiny(tiny_models, tmp_path_factory):
    """The tiny models, with the generator overfit for a few seconds on the fixture's re-rooted
    graphs, each paired with its concepts in linearization order as the target sentence. The shared
    tiny generator says one sentence whatever the graph (so every candidate would be a duplicate);
    this one says something different for each focus (the real amrlib T5 code path either way)."""
    import shutil

    import torch
    from amrlib.models.generate_xfm.model_input_helper import ModelInputHelper
    from transformers import AutoTokenizer, T5ForConditionalGeneration

    from paraamr import amr

    folder = tmp_path_factory.mktemp("trained-generator") / "realizer"
    shutil.copytree(tiny_models["realizer"], folder)
    tok = AutoTokenizer.from_pretrained(folder)
    model = T5ForConditionalGeneration.from_pretrained(folder)
    pairs = []
    for block in _blocks()[:6]:
        for v in amr.variants(amr.decode(block), oneline=True):
            words = [i.target.split("-")[0] for i in amr.decode(v.penman).instances()]
            pairs.append((ModelInputHelper.gstring_to_oneline(v.penman), " ".join(words) + " ."))
    enc = tok([a for a, _ in pairs], padding=True, return_tensors="pt")
    labels = tok([b for _, b in pairs], padding=True, return_tensors="pt").input_ids
    labels[labels == tok.pad_token_id] = -100
    torch.manual_seed(0)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a tiny model: more threads only contend on a shared machine
    opt = torch.optim.Adam(model.parameters(), lr=2e-2)
    model.train()
    for _ in range(40):
        model(**enc, labels=labels).loss.backward()
        opt.step()
        opt.zero_grad()
    torch.set_num_threads(threads)
    model.eval()
    model.save_pretrained(folder)
    return {**tiny_models, "realizer": folder}


@pytest.fixture(scope="module")
def stages(tiny) -> Stages:
    """The model stages, loaded once (from settings) and shared by every generator of this module."""
    return load_stages(_settings(tiny))


def _settings(tiny, **kw) -> RecordSettings:
    return RecordSettings(
        parser_model=str(tiny["parser"]),
        realizer_model=str(tiny["realizer"]),
        lm_model=str(tiny["lm"]),
        amr_input=str(GRAPHS),
        **kw,
    )


def _generator(stages: Stages, settings: RecordSettings) -> Generator:
    return Generator(stages, settings, window=4)


@pytest.fixture(scope="module")
def unfiltered(tiny, stages):
    gen = _generator(stages, _settings(tiny, max_perplexity=None))
    records = list(gen.generate_from_amr(_blocks()))
    return records, gen


def _between(values) -> float:
    """A threshold that splits ``values``: midway between the lowest and the highest."""
    assert max(values) > min(values), values
    return (min(values) + max(values)) / 2


def _kept(records) -> list[tuple]:
    return [(r["id"], p["focus"], p["para_text"]) for r in records for p in r["paraphrases"]]


def test_every_stage_has_an_effect(unfiltered):
    records, gen = unfiltered
    assert [r["id"] for r in records] == ["g1", "g2", "g3", "g4", "g5", "g6"]
    assert [(f["id"], f["stage"]) for f in gen.failures] == [("g-bad", "input"), ("g1", "input")]
    assert "not valid PENMAN" in gen.failures[0]["reason"] and gen.failures[1]["reason"] == "duplicate"
    st = gen.stats
    assert st.inputs == 8 == st.records + sum(st.failures.values())
    assert st.candidates >= 25  # every graph has several foci
    assert st.paraphrases == len(_kept(records)) >= 4
    assert st.candidates == st.paraphrases + sum(st.dropped.values())
    for r in records:
        assert r["amr"].startswith(f"# ::id {r['id']}")
        for p in r["paraphrases"]:
            assert "# ::focus " in p["amr"] and p["perplexity"] > 1 and p["para_text"].strip()
            assert p["focus"] in r["amr"]  # the concept of the new root is in the source graph


def test_perplexity_threshold_keeps_some_and_drops_the_rest(tiny, stages, unfiltered):
    records, _ = unfiltered
    ppl = [p["perplexity"] for r in records for p in r["paraphrases"]]
    threshold = _between(ppl)
    gen = _generator(stages, _settings(tiny, max_perplexity=threshold))
    filtered = list(gen.generate_from_amr(_blocks()))
    expected = [
        (r["id"], p["focus"], p["para_text"])
        for r in records
        for p in r["paraphrases"]
        if p["perplexity"] <= threshold
    ]
    assert _kept(filtered) == expected and 0 < len(expected) < len(ppl)
    assert gen.stats.dropped["perplexity"] == len(ppl) - len(expected)


def test_relative_perplexity_uses_the_sources_own(tiny, stages, unfiltered):
    records, _ = unfiltered
    sources = {r["id"]: stages.lm.perplexity([r["text"]])[0] for r in records}
    ratios = [p["perplexity"] / sources[r["id"]] for r in records for p in r["paraphrases"]]
    ratio = _between(ratios)
    gen = _generator(stages, _settings(tiny, max_perplexity=None, max_relative_perplexity=ratio))
    filtered = list(gen.generate_from_amr(_blocks()))
    expected = [
        (r["id"], p["focus"], p["para_text"])
        for r in records
        for p in r["paraphrases"]
        if p["perplexity"] <= ratio * sources[r["id"]]
    ]
    assert _kept(filtered) == expected and 0 < len(expected) < len(ratios)


def test_similarity_scores_and_filters(tiny, stages, unfiltered):
    from paraamr.models.embedder import Embedder

    records, _ = unfiltered
    embedder = Embedder("all-MiniLM-L6-v2")
    pairs = [(r["text"], p["para_text"]) for r in records for p in r["paraphrases"]]
    sims = embedder.similarity([a for a, _ in pairs], [b for _, b in pairs])
    cut = _between(sims)
    gen = _generator(
        Stages(**{**vars(stages), "embedder": embedder}),
        _settings(tiny, max_perplexity=None, similarity_model="all-MiniLM-L6-v2", min_similarity=cut),
    )
    filtered = list(gen.generate_from_amr(_blocks()))
    kept = [p for r in filtered for p in r["paraphrases"]]
    assert 0 < len(kept) < len(pairs) and all(
        -1 <= p["similarity"] <= 1 and p["similarity"] >= cut for p in kept
    )
    assert gen.stats.dropped["similarity"] == sum(s < cut for s in sims)


def test_a_graph_without_its_sentence_gets_no_score_and_stops_nothing(tiny, stages):
    """A graph given without ``# ::snt`` has no source to compare: its paraphrases' similarity and
    quality are None (dropped under a minimum); before, the quality scorer stopped the whole run
    ('sources[1] is empty') and the embedder scored against the empty string."""
    from paraamr.models.embedder import Embedder
    from paraamr.quality import QualityScorer

    graphs = ["# ::snt The boy wants to go.\n(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b))",
              "(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b))"]  # fmt: skip
    scorers = {"embedder": Embedder("all-MiniLM-L6-v2"), "quality": QualityScorer("all-MiniLM-L6-v2")}
    models = {"similarity_model": "all-MiniLM-L6-v2", "quality_model": "all-MiniLM-L6-v2"}
    gen = _generator(Stages(**{**vars(stages), **scorers}), _settings(tiny, max_perplexity=None, **models))
    with_text, without = list(gen.generate_from_amr(graphs))
    assert with_text["paraphrases"] and without["paraphrases"] and without["text"] == ""
    assert all(p["similarity"] is not None and p["quality"] is not None for p in with_text["paraphrases"])
    assert all(p["similarity"] is None and p["quality"] is None for p in without["paraphrases"])
    strict = _generator(gen.stages, _settings(tiny, max_perplexity=None, min_quality=-1, **models))
    assert not next(iter(strict.generate_from_amr(graphs[1:])))["paraphrases"]
    assert strict.stats.dropped["quality failed"] == len(without["paraphrases"])


def test_a_graph_that_is_no_text_is_a_failure_row_and_the_others_go_on(tiny, stages):
    """Before: None, a number or NaN among the graphs raised AttributeError ('splitlines'), bytes a
    TypeError, and the good graphs of the same call were never yielded."""
    gen = _generator(stages, _settings(tiny, max_perplexity=None))
    good = _blocks()[0]
    failures: list = []
    graphs = [good, None, 3, float("nan"), good.encode()]
    records = list(gen.generate_from_amr(graphs, on_failure=failures.append, dedup=False))
    assert len(records) == 2 and records[0] == records[1]  # the str and the bytes of one graph
    assert [(f["stage"], f["text"], f["reason"]) for f in failures] == [
        ("input", "", "column 'graph' missing"),
        ("input", "3", "column 'graph' not a string (int)"),
        ("input", "NaN", "column 'graph' not a string (float)"),
    ]


def test_amr_input_run_writes_pairs_and_the_filter_counts(tiny, unfiltered, tmp_path, capsys):
    from datasets import load_dataset

    records, _ = unfiltered
    ppl = sorted(p["perplexity"] for r in records for p in r["paraphrases"])
    threshold = _between(ppl)
    out = tmp_path / "amr"
    models = ["--parser-model", "/nonexistent/not/needed", "--realizer-model", str(tiny["realizer"])]
    args = ["--amr-input", str(GRAPHS), "--output", str(out), *models, "--lm-model", str(tiny["lm"])]
    args += ["--no-progress", "--window", "4", "--license", "cc-by-4.0", "--max-perplexity"]
    assert main([*args, str(threshold)]) == 0
    cache = tmp_path / "hf-cache"  # a fresh datasets cache: see test_load_dataset_reads_both_configs
    pairs = load_dataset(str(out), "pairs", cache_dir=str(cache))
    default = load_dataset(str(out), cache_dir=str(cache))
    assert sum(len(pairs[s]) for s in pairs) == sum(p <= threshold for p in ppl) > 0
    assert sorted(i for s in default for i in default[s]["id"]) == [r["id"] for r in records]
    assert set(default) == {"train"}
    summary = json.loads((out / "summary.json").read_text())
    assert summary["counts"]["dropped_by_reason"]["perplexity"] == sum(p > threshold for p in ppl)
    assert summary["counts"]["failures_by_stage"] == {"input": 2}
    assert "license: cc-by-4.0" in (out / "README.md").read_text()
    assert "dropped: perplexity" in capsys.readouterr().err
    failures = [json.loads(line) for f in (out / "failures").glob("*.jsonl") for line in f.open()]
    assert sorted(f["id"] for f in failures) == ["g-bad", "g1"]
    shards = [pq.read_table(f).num_rows for f in (out / "data" / "default").glob("*.parquet")]
    assert sum(shards) == 6


def test_python_api_turns_a_text_no_file_could_hold_into_a_failure():
    """``Generator.generate`` checks each text as a file's rows are checked: a lone surrogate (a
    ``str`` no UTF-8 holds) is a failure row naming it, never a crash, and the other text goes on."""
    from paraamr.builder.pipeline import Generator, Stages
    from paraamr.settings import RecordSettings

    class Stub:
        def parse(self, texts):
            return ["(s / say-01 :ARG0 (m / man))" for _ in texts]

        def realize(self, graphs):
            return ["The man said." for _ in graphs]

    gen = Generator(Stages(parser=Stub(), realizer=Stub()), RecordSettings(), window=4)
    records = list(gen.generate(["The man spoke.", "A lone \ud800 surrogate."]))
    assert [r["text"] for r in records] == ["The man spoke."]
    (failure,) = gen.failures
    assert failure["stage"] == "input" and failure["reason"].startswith("a lone surrogate (U+D800)")
    # an item that is no string is a failure row too (before: AttributeError 'NoneType' ... 'encode')
    gen.failures.clear()
    assert [r["text"] for r in gen.generate([None, 3, "The man spoke again."])] == ["The man spoke again."]
    reasons = [f["reason"] for f in gen.failures]
    assert reasons == ["column 'text' missing", "column 'text' not a string (int)"]
    # one string alone is refused (before: each of its characters was a sentence, 'H', 'i', ...)
    with pytest.raises(TypeError, match="texts is one string; give a list"):
        next(gen.generate("Hi there."))
    with pytest.raises(TypeError, match="graphs is one string; give a list"):
        next(gen.generate_from_amr("(s / say-01)"))


def test_max_batch_size_reaches_every_model_stage(tiny):
    """``--max-batch-size`` (RunSettings) is the cap of each stage's device-filling batches."""
    from paraamr.settings import RunSettings

    models = {"parser_model": tiny["parser"], "realizer_model": tiny["realizer"], "lm_model": tiny["lm"]}
    record = RecordSettings(**{k: str(v) for k, v in models.items()}, input="-")
    loaded = load_stages(record, RunSettings(max_batch_size=7))
    assert [s.max_batch_size for s in (loaded.parser, loaded.realizer, loaded.lm)] == [7, 7, 7]
    assert load_stages(_settings(tiny)).realizer.max_batch_size == MAX_BATCH_SIZES["realizer"]


def test_the_prefetch_keeps_one_window_ready_while_it_makes_the_next():
    """While the model stages work on window k, window k+1 waits ready and k+2 is being made (the
    parse of the front half may take as long as the back half: one window of slack), no further."""
    made = []

    def windows():
        for i in range(10):
            made.append(i)
            yield i

    ahead = _prefetch(windows())
    assert next(ahead) == 0
    deadline = time.monotonic() + 10
    while len(made) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.2)  # room to run further, were it unbounded
    assert made == [0, 1, 2]
    assert list(ahead) == list(range(1, 10))
