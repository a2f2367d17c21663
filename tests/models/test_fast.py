"""The CTranslate2 backend: the same outputs as transformers in float32, conversion once and safely,
the settings amrlib intends, and everything as before without ctranslate2.

Tolerances: float32 CTranslate2 and torch sum in different orders, so perplexities agree to a
relative 1e-5 and unit embeddings to 1e-5 per component (measured: 3e-7 and 4e-7); token ids
agree exactly (greedy and 4 beams, on the tiny models in the real formats).
"""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from paraamr.errors import InputError
from paraamr.models import fast as fast_module
from paraamr.models import tiny
from paraamr.models.fast import Seq2SeqModel, converted, converted_copies, resolve_backend
from paraamr.models.lm import PerplexityScorer
from paraamr.models.parser import Parser
from paraamr.models.realizer import Realizer

pytest.importorskip("ctranslate2", reason="the fast path needs ctranslate2 (CI installs it)")

SENTENCES = [
    tiny.PAPER_TEXT,
    tiny.GARBLED_TEXT,
    "the boy want to go to the city",
    "i see a dog",
    "he said she thought they ran",
]
GRAPHS = [
    tiny.PAPER_AMR,
    "(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-01 :ARG0 b))",
    "(s / see-01 :ARG0 (i / i) :ARG1 (d / dog))",
    "(t / think-01 :ARG0 (s / she) :polarity -)",
]


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, Path]:
    """Tiny models of this module's own (their converted copies sit beside them)."""
    made = tiny.make_tiny(tmp_path_factory.mktemp("fast"))
    return {**made, "random-realizer": _random_realizer(made["realizer"])}


def _random_realizer(trained: Path) -> Path:
    """The tiny realizer's folder with fresh random weights (T5 at initializer_factor 20, as the
    benchmarks build it): unlike the trained one, it writes a different sentence for each graph."""
    import torch
    from transformers import AutoConfig, T5ForConditionalGeneration

    folder = trained.parent / "random-realizer"
    shutil.copytree(trained, folder)
    config = AutoConfig.from_pretrained(folder)
    config.initializer_factor = 20.0
    torch.manual_seed(0)
    T5ForConditionalGeneration(config).save_pretrained(folder)
    return folder


def _ids(rows, eos: int) -> list[list[int]]:
    """Generated ids after the decoder start token, up to and including the first EOS."""
    out = []
    for row in rows:
        row = list(row)[1:]
        out.append(row[: row.index(eos) + 1] if eos in row else row)
    return out


@pytest.mark.parametrize("kind", ["parser", "random-realizer"])
@pytest.mark.parametrize("beams", [1, 4])
def test_float32_generates_the_same_token_ids(models, kind, beams):
    import torch
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    source = models[kind]
    tokenizer = AutoTokenizer.from_pretrained(source)
    model = AutoModelForSeq2SeqLM.from_pretrained(source).eval()
    fast = Seq2SeqModel(model, converted(source, tokenizer), "cpu", "float32")
    texts = SENTENCES if kind == "parser" else [tiny.PAPER_AMR, *GRAPHS[1:], *SENTENCES[2:]]
    enc = tokenizer(texts, padding=True, return_tensors="pt")
    kwargs = {
        "max_length": 64,
        "num_beams": beams,
        "num_return_sequences": beams,
        "early_stopping": beams > 1,
    }
    with torch.inference_mode():
        out = model.generate(**enc, **kwargs, output_scores=True, return_dict_in_generate=True)
    got = fast.generate(enc.input_ids, enc.attention_mask, **kwargs)
    eos = model.generation_config.eos_token_id
    want, got = _ids(out.sequences.tolist(), eos), _ids(got, eos)
    assert len(got) == len(want) == len(texts) * beams
    if beams == 1:
        assert got == want
    else:
        # the random realizer's beams loop to the length limit and tie (a detour scores the same
        # wherever it sits; which of the tied ones a beam keeps is arbitrary): there the scores
        # are compared rank by rank
        source = [[str(t) for t in row if t != tokenizer.pad_token_id] for row in enc.input_ids.tolist()]
        results = fast.translator.translate_batch(
            source,
            target_prefix=[[str(model.generation_config.forced_bos_token_id)]] * len(texts)
            if model.generation_config.forced_bos_token_id is not None
            else None,
            beam_size=beams,
            num_hypotheses=beams,
            max_decoding_length=63,
            max_input_length=0,
            return_end_token=True,
            return_scores=True,
        )
        theirs = out.sequences_scores.tolist()
        ours = [s for r in results for s in r.scores]
        assert ours == pytest.approx(theirs, abs=1e-3)
        if kind == "parser":  # its beams end with EOS: nothing ties, the ids are the same
            assert got == want
    assert len({tuple(r) for r in want}) > (len(texts) if beams > 1 else 1)  # not all one output


@pytest.mark.slow
@pytest.mark.parametrize("beams", [1, 4])
def test_parser_and_realizer_outputs_equal_transformers(models, beams):
    slow = Parser(models["parser"], backend="transformers", num_beams=beams)
    fast = Parser(models["parser"], backend="ctranslate2", num_beams=beams)
    assert (fast.backend, fast.compute_type) == ("ctranslate2", "float32")
    assert fast.parse(SENTENCES) == slow.parse(SENTENCES)
    assert fast.parse([tiny.PAPER_TEXT])[0].startswith(f"# ::snt {tiny.PAPER_TEXT}\n(")
    for kind in ("realizer", "random-realizer"):
        slow_r = Realizer(models[kind], backend="transformers", use_tense=False, num_beams=beams)
        fast_r = Realizer(models[kind], backend="ctranslate2", use_tense=False, num_beams=beams)
        assert fast_r.realize(GRAPHS) == slow_r.realize(GRAPHS)
    assert len(set(fast_r.realize(GRAPHS))) > 1


def test_perplexity_within_tolerance(models):
    texts = [
        "the boy want to go .",
        "i know this price",
        "he said she thought they ran . the dog saw a cat",
        "",
    ]
    slow = PerplexityScorer(models["lm"], backend="transformers").perplexity(texts)
    fast = PerplexityScorer(models["lm"], backend="ctranslate2").perplexity(texts)
    assert fast[3] == slow[3]  # the empty text fails alike
    for a, b in zip(fast[:3], slow[:3], strict=True):
        assert a == pytest.approx(b, rel=1e-5)
    assert len(set(slow[:3])) == 3


def test_decoder_layouts_run_as_asked_and_outputs_do_not_depend_on_threads(models, monkeypatch):
    """``team`` runs one worker of every thread, ``halves`` two workers (one with one thread); torch
    keeps its thread count (CTranslate2 sets the loading thread's OpenMP count, which torch shares);
    in a layout, the outputs are the same to the bit whatever the threads, and the layouts differ
    only in a score's last bits (a half's padding is not the whole batch's)."""
    import torch

    sentences, graphs = SENTENCES * 2, GRAPHS * 2
    texts = ["the boy want to go .", "i know this price", "he said she thought they ran", "a dog"] * 2

    def run(layout: str, threads: int):
        monkeypatch.setattr(fast_module, "decoder_layout", layout)
        torch.set_num_threads(threads)
        parser = Parser(models["parser"], backend="ctranslate2", num_beams=4)
        realizer = Realizer(models["random-realizer"], backend="ctranslate2", use_tense=False)
        scorer = PerplexityScorer(models["lm"], backend="ctranslate2")
        engines = (parser.inference.model.translator, realizer.inference.model.translator, scorer.generator)
        assert torch.get_num_threads() == threads
        workers = [e.num_translators if hasattr(e, "num_translators") else e.num_generators for e in engines]
        return workers, (parser.parse(sentences), realizer.realize(graphs), scorer.perplexity(texts))

    assert fast_module.decoder_layout == "halves"  # the default
    team, team_out = run("team", 3)
    assert team == [1, 1, 1]
    assert run("team", 1)[1] == team_out
    halves, halves_out = run("halves", 3)
    assert halves == [2, 2, 2]
    one, one_out = run("halves", 1)
    assert one == [1, 1, 1]
    assert one_out == halves_out  # the same strings and perplexity floats
    assert halves_out[:2] == team_out[:2]
    assert halves_out[2] == pytest.approx(team_out[2], rel=1e-6)
    assert len(set(halves_out[1])) > 1
    monkeypatch.setattr(fast_module, "decoder_layout", "rows")
    with pytest.raises(ValueError, match="unknown decoder layout"):
        PerplexityScorer(models["lm"], backend="ctranslate2")


@pytest.mark.slow
def test_embeddings_within_tolerance_and_int8_drift(tmp_path):
    from paraamr.models.download import ensure
    from paraamr.models.embedder import Embedder

    packaged = ensure("all-MiniLM-L6-v2", "embedder")
    copy = tmp_path / "minilm"
    shutil.copytree(packaged, copy, symlinks=True, copy_function=os.symlink)  # conversion lands here
    texts = [tiny.PAPER_TEXT, "A man is eating food.", "hi", "The quick brown fox jumps over the lazy dog."]
    slow = Embedder(copy, backend="transformers").encode(texts)
    fast = Embedder(copy)
    assert (fast.backend, fast.compute_type) == ("ctranslate2", "float32")  # exact by default
    assert "ctranslate2" in fast.signature
    vectors = fast.encode(texts)
    assert np.abs(vectors - slow).max() < 1e-5
    assert [p.parent for p in converted_copies(copy)] == [tmp_path]  # beside the copy
    drift = (Embedder(copy, compute_type="int8").encode(texts) * slow).sum(1)
    assert 0.9 < drift.min() < 0.99999  # int8 changes the vectors a little, and only a little


def _config_with(folder: Path, **fields) -> None:
    """Write ``fields`` into ``folder``'s config.json and drop its generation_config.json, as in a
    model saved before transformers kept generation settings apart (amrlib's releases)."""
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, **fields}))
    (folder / "generation_config.json").unlink(missing_ok=True)


def _amrlib_graph(serial: str) -> str:
    from amrlib.models.parse_xfm.penman_serializer import PenmanDeSerializer

    return PenmanDeSerializer(serial).get_graph_string()


@pytest.mark.parametrize("backend", ["transformers", "ctranslate2"])
def test_parser_ignores_no_repeat_ngram_size_of_the_saved_config(models, tmp_path, backend):
    """bart-large's config carries no_repeat_ngram_size=3; amrlib switches it off through
    model.config, which transformers 5 no longer reads. A serialization repeats 3-grams (") ) )")."""
    import torch
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    folder = tmp_path / "parser"
    shutil.copytree(models["parser"], folder)
    _config_with(folder, no_repeat_ngram_size=3)
    model = AutoModelForSeq2SeqLM.from_pretrained(folder).eval()
    assert model.generation_config.no_repeat_ngram_size == 3  # what transformers 5 would apply
    tokenizer = AutoTokenizer.from_pretrained(folder)
    enc = tokenizer([tiny.PAPER_TEXT], return_tensors="pt")
    with torch.inference_mode():
        blocked = model.generate(**enc, max_length=64, num_beams=4)  # the saved setting applies
        free = model.generate(**enc, max_length=64, num_beams=4, no_repeat_ngram_size=0)
    assert blocked.tolist() != free.tolist()  # the setting changes this parse
    graph = Parser(folder, backend=backend, num_beams=4).parse([tiny.PAPER_TEXT])[0]
    assert graph == f"# ::snt {tiny.PAPER_TEXT}\n" + _amrlib_graph(
        tokenizer.decode(free[0], skip_special_tokens=True)
    )


@pytest.mark.parametrize("backend", ["transformers", "ctranslate2"])
def test_realizer_keeps_the_saved_configs_generation_settings(models, tmp_path, backend):
    """amrlib's realizer sets nothing: a saved no_repeat_ngram_size applies (as under transformers 4)."""
    import torch
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    folder = tmp_path / "realizer"
    shutil.copytree(models["random-realizer"], folder)
    _config_with(folder, no_repeat_ngram_size=1)
    realizer = Realizer(folder, backend=backend, use_tense=False)
    got = realizer.realize(GRAPHS)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForSeq2SeqLM.from_pretrained(folder).eval()
    inputs = [realizer._input(g)[0] for g in GRAPHS]
    with torch.inference_mode():
        enc = tokenizer(inputs, padding=True, return_tensors="pt")
        want = model.generate(**enc, max_length=tiny.MAX_IN_LEN, no_repeat_ngram_size=1)
        free = model.generate(**enc, max_length=tiny.MAX_IN_LEN, no_repeat_ngram_size=0)
    decode = lambda rows: [tokenizer.decode(r, skip_special_tokens=True).strip() for r in rows]  # noqa: E731
    assert decode(want) != decode(free)  # the setting matters on these inputs
    if backend == "transformers":
        assert got == decode(want)
    else:  # random weights: a float-rounding tie may turn one long output elsewhere
        assert all(len(set(text.split())) == len(text.split()) for text in got)  # no token repeats
        assert sum(a == b for a, b in zip(got, decode(want), strict=True)) >= len(got) - 1


def _convert_in_child(source: str, queue) -> None:
    from transformers import AutoTokenizer

    from paraamr.models import fast

    calls = []
    original = fast._convert
    fast._convert = lambda *a: (calls.append(1), original(*a))[1]
    queue.put((str(converted(source, AutoTokenizer.from_pretrained(source))), len(calls)))


@pytest.mark.slow
def test_conversion_once_beside_the_model_keyed_by_digest(models, tmp_path):
    source = tmp_path / "lm"
    shutil.copytree(models["lm"], source)
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    children = [context.Process(target=_convert_in_child, args=(str(source), queue)) for _ in range(2)]
    for child in children:
        child.start()
    answers = [queue.get(timeout=120) for _ in children]
    for child in children:
        child.join(timeout=60)
    paths = {a[0] for a in answers}
    assert len(paths) == 1 and sum(a[1] for a in answers) == 1  # one converted, the other waited
    target = Path(paths.pop())
    assert target.parent == tmp_path and target.name.startswith(".lm.ct2-")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["lm", target.name])  # no lock, no temp
    # a changed model converts again, into its own folder, which replaces the stale one
    config = json.loads((source / "config.json").read_text())
    (source / "config.json").write_text(json.dumps({**config, "layer_norm_epsilon": 1e-4}))
    again = converted(source)
    assert again != target and converted_copies(source) == [again]
    old = tmp_path / ".lm.ct2-0123456789abcdef"  # an earlier version's copy, found on a later call
    old.mkdir()
    killed = tmp_path / f".{again.name}.4242-0badf00d.tmp"  # a conversion killed before its end
    killed.mkdir()
    assert converted_copies(source) == [killed, old, again]  # so models rm removes it too
    assert converted(source) == again and not old.exists() and not killed.exists()


def test_copies_in_the_cache_of_two_folders_named_alike_are_kept_apart(tmp_path):
    """Copies of read-only model folders go to ``<cache>/ct2``; named by the folder's name alone,
    ``models rm a/lm`` removed the copies of ``b/lm`` too."""
    from paraamr.models import fast

    cache, a, b = tmp_path / "cache", tmp_path / "a" / "lm", tmp_path / "b" / "lm"
    for source in (a, b):
        prefix = fast._prefix(source, cache / "ct2")
        (cache / "ct2" / f"{prefix}0123456789abcdef").mkdir(parents=True)
    copies = [converted_copies(source, cache) for source in (a, b)]
    assert [len(c) for c in copies] == [1, 1] and copies[0] != copies[1]


def test_conversion_prints_no_dtype_deprecation(models, tmp_path):
    """A config without a dtype (all-MiniLM-L6-v2's) made transformers 5 print "`torch_dtype` is
    deprecated!" at each conversion, where CTranslate2's converter reads the old name."""
    source = tmp_path / "lm"
    shutil.copytree(models["lm"], source)
    config = json.loads((source / "config.json").read_text())
    config.pop("dtype", None), config.pop("torch_dtype", None)
    (source / "config.json").write_text(json.dumps(config))
    code = "import sys; from paraamr.models.fast import converted; converted(sys.argv[1])"
    proc = subprocess.run([sys.executable, "-c", code, source], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and converted_copies(source), proc.stderr[-2000:]
    assert "torch_dtype" not in proc.stderr  # a process of its own: transformers warns once a process


def test_a_failed_conversion_leaves_nothing(models, tmp_path, monkeypatch):
    from paraamr.models import fast

    source = tmp_path / "lm"
    shutil.copytree(models["lm"], source)

    def broken(src, out, tokenizer):
        (Path(out) / "model.bin").write_bytes(b"half")
        raise OSError("disk full")

    monkeypatch.setattr(fast, "_convert", broken)
    with pytest.raises(OSError, match="disk full"):
        converted(source)
    assert [p.name for p in tmp_path.iterdir()] == ["lm"]
    monkeypatch.undo()
    scorer = PerplexityScorer(source, backend="ctranslate2")
    assert isinstance(scorer.perplexity(["the boy want to go ."])[0], float)


def test_a_damaged_converted_copy_is_named_with_the_way_out(models, tmp_path):
    source = tmp_path / "lm"
    shutil.copytree(models["lm"], source)
    target = converted(source)
    (target / "model.bin").write_bytes(b"")  # a disk that lost the file's content
    with pytest.raises(InputError, match=rf"{target.name}: CTranslate2 cannot load .* delete the folder"):
        PerplexityScorer(source, backend="ctranslate2")
    shutil.rmtree(target)  # what the message says: the next use converts again
    scorer = PerplexityScorer(source, backend="ctranslate2")
    assert isinstance(scorer.perplexity(["the boy want to go ."])[0], float)


def test_backend_and_compute_type_choices():
    assert resolve_backend("auto", "auto", "cpu") == ("ctranslate2", "float32")
    assert resolve_backend("auto", "auto", "cuda", bf16=True) == ("ctranslate2", "bfloat16")
    assert resolve_backend("transformers", "bfloat16", "cpu") == ("transformers", "bfloat16")
    with pytest.raises(ValueError, match="unknown backend"):
        resolve_backend("onnx", "auto", "cpu")
    with pytest.raises(ValueError, match="unknown compute type"):
        resolve_backend("auto", "int4", "cpu")


def test_settings_record_the_backend():
    from paraamr.settings import RecordSettings

    assert RecordSettings().backend == "ctranslate2"  # auto, stored as what it picked
    old = RecordSettings.from_dict({"parser_model": "x"})  # a run saved before the choice existed
    assert old.backend == "transformers"
    assert RecordSettings(backend="transformers").differences(RecordSettings()) == [
        "--backend was 'transformers', now 'ctranslate2'"
    ]


def test_without_ctranslate2_a_run_says_once_that_the_fast_path_is_off(models, tmp_path):
    """Before: `paraamr generate` said nothing. Its settings resolve `--backend auto` first (a
    run records what it did), and the stages, given `transformers`, had nothing to say."""
    code = "import sys; sys.modules['ctranslate2'] = None; from paraamr.cli import main; "
    code += "sys.exit(main(sys.argv[1:]))"
    (tmp_path / "in.txt").write_text("The boy wants to go.\n")
    argv = ["generate", "--input", str(tmp_path / "in.txt"), "--output", str(tmp_path / "out"), "--dry-run"]
    argv += ["--parser-model", str(models["parser"]), "--realizer-model", str(models["realizer"])]
    out = subprocess.run(
        [sys.executable, "-c", code, *argv, "--lm-model", str(models["lm"])],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert out.stderr.count("ctranslate2 is not installed: the fast path is off") == 1, out.stderr


@pytest.mark.slow
def test_without_ctranslate2_everything_runs_on_transformers(models):
    """A process where ctranslate2 cannot be imported: one line says so, outputs as before."""
    code = f"""
import sys, logging
sys.modules["ctranslate2"] = None
logging.basicConfig(level=logging.WARNING, format="%(message)s")
from paraamr.models.parser import Parser
from paraamr.models.lm import PerplexityScorer
from paraamr.settings import RecordSettings
p = Parser({str(models["parser"])!r}, num_beams=1)
s = PerplexityScorer({str(models["lm"])!r})
print(p.backend, s.backend, RecordSettings().backend)
print(repr(p.parse([{tiny.PAPER_TEXT!r}])[0]))
"""
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ},
        timeout=120,
        check=True,
    )
    head, graph = out.stdout.splitlines()
    assert head.split() == ["transformers", "transformers", "transformers"]
    assert graph == repr(
        Parser(models["parser"], num_beams=1, backend="transformers").parse([tiny.PAPER_TEXT])[0]
    )
    lines = [line for line in out.stderr.splitlines() if "fast path is off" in line]
    assert lines == ["ctranslate2 is not installed: the fast path is off (pip install ctranslate2)"]
    with pytest.raises(subprocess.CalledProcessError):
        subprocess.run(
            [sys.executable, "-c", code.replace("num_beams=1", "num_beams=1, backend='ctranslate2'")],
            capture_output=True,
            check=True,
            timeout=120,
        )


def test_models_list_and_rm_know_the_converted_copies(models, tmp_path, monkeypatch, capsys):
    from paraamr.cli import main
    from paraamr.commands.models import converted_copies_of, model_rows

    source = tmp_path / "lm"
    shutil.copytree(models["lm"], source)
    copy = converted(source)
    assert converted_copies_of(source) == [copy]
    cache = tmp_path / "cache"
    rows = model_rows(str(cache), "lm")  # the catalog's LMs: none converted in this cache
    assert not any("CTranslate2" in r[3] for r in rows)
    assert main(["models", "rm", str(source), "--kind", "lm", "--cache-dir", str(cache)]) == 0
    assert f"removed {copy}" in capsys.readouterr().out
    assert not copy.exists() and source.is_dir()  # a local model folder itself is the user's


@pytest.mark.parametrize("repo_id", ["org/tiny-lm", "tiny-lm"])  # the second as gpt2 is named
def test_a_hub_models_copy_goes_to_the_cache_not_beside_its_snapshot(models, tmp_path, monkeypatch, repo_id):
    """A model in huggingface_hub's cache (``models--ORG--NAME/snapshots/REV``): its copy beside
    the snapshot read as a second revision of the repo in the Hub cache's scan; it goes to
    ``<cache>/ct2``, and ``models list`` shows it under the repo (it showed none)."""
    from huggingface_hub import constants, scan_cache_dir

    from paraamr.commands.models import COPY, model_rows

    hub, cache = tmp_path / "hub", tmp_path / "cache"
    repo = hub / ("models--" + repo_id.replace("/", "--"))
    snapshot = repo / "snapshots" / ("0123abcd" * 5)
    shutil.copytree(models["lm"], snapshot)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(snapshot.name)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(hub))
    copy = converted(snapshot, cache_dir=cache)
    assert copy.parent == cache / "ct2"
    assert sorted(p.name for p in snapshot.parent.iterdir()) == [snapshot.name]
    (scanned,) = scan_cache_dir(hub).repos
    assert [r.commit_hash for r in scanned.revisions] == [snapshot.name]
    rows = [r for r in model_rows(str(cache)) if r[0] == repo_id]
    assert [(r[1], r[3]) for r in rows] == [("hub", "Hub model in huggingface_hub's cache"), ("hub", COPY)]
    assert str(copy) in rows[1][2]
    # a later revision (refs/main moved): models rm removes the copies of both (it left the older;
    # for an id without a namespace, such as gpt2, until now)
    later = repo / "snapshots" / ("4567cdef" * 5)
    shutil.copytree(snapshot, later)
    (repo / "refs" / "main").write_text(later.name)
    second = converted(later, cache_dir=cache)
    from paraamr.cli import main

    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    assert main(["models", "rm", repo_id, "--kind", "lm", "--cache-dir", str(cache)]) == 0
    assert not copy.exists() and not second.exists()


def test_an_embedder_ctranslate2_cannot_convert_says_why_in_one_short_line(caplog):
    """Before: one warning line of ~780 characters, CTranslate2's list of every configuration it
    converts (all-mpnet-base-v2 is an MPNet, which it does not)."""
    import logging

    from paraamr.models.embedder import Embedder

    with caplog.at_level(logging.WARNING, logger="paraamr.models.embedder"):
        embedder = Embedder("all-mpnet-base-v2")
    said = [r.getMessage() for r in caplog.records if "runs on transformers" in r.getMessage()]
    assert embedder.backend == "transformers" and len(said) == 1
    assert said[0].endswith("the model configuration MPNetConfig") and len(said[0]) < 150, said
