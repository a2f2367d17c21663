"""Training on a tiny sample through the CLI and the library, both modes; natural pairs, the paired
loss, calibration, time limit, long lines, the small shipped form (delta) and one-line errors."""

from __future__ import annotations

import gzip
import json
import warnings
import zipfile
from pathlib import Path

import pytest

from paraamr.cli import build_parser, main
from paraamr.commands.quality import _default_run, _triplets
from paraamr.errors import UsageError
from paraamr.options import given_settings
from paraamr.quality import QualityScorer
from paraamr.quality.data import natural_pairs, set_c_sources
from paraamr.quality.evaluation import classify, triplet_figures
from paraamr.quality.gate import SYNONYM_MIN_SIMILARITY, SimilarityGate
from paraamr.quality.scorer import DELTA_FILE, calibrated
from paraamr.quality.train import INFO_FILE, TrainSettings, calibrate, export_delta, split_validation, train
from paraamr.quality.triplets import Triplet, build_triplets, read_sentences, training_sentences
from paraamr.records import normalize, text_id

DATA = Path(__file__).parent / "data"
TINY = DATA / "tiny_sentences.txt"
#: Four training sources of the bundled natural pairs (none of set C).
TINY_NATURAL = DATA / "tiny_natural.tsv"
SETTINGS = TrainSettings(
    mode="cross", batch_size=8, learning_rate=1e-4, epochs=1, seed=0, threads=1, validation=0.2,
    cosine_model="all-mpnet-base-v2",
)
N = 24
#: Operator negatives of the tiny natural sources.
NATURAL_OPS = 4
PAIRS = [
    {"text": "The dog chased the cat.", "para_text": "The cat was chased by the dog.", "label": 1},
    {"text": "The dog chased the cat.", "para_text": "The dog did not chase the cat.", "label": 0},
]


@pytest.fixture(scope="module")
def long_input(tmp_path_factory):
    """The tiny sentences plus one 100,000-character line (99,999 once its trailing space is stripped)."""
    path = tmp_path_factory.mktemp("input") / "sentences.txt"
    path.write_text(TINY.read_text() + "word " * 20_000 + "\n")
    return path


#: ``quality train`` options of the tiny runs (but --input and --output).
TINY_ARGS = ["--max-triplets", str(N), "--natural", str(TINY_NATURAL), "--natural-operator-triplets",
             str(NATURAL_OPS), "--seed", "0"]  # fmt: skip


@pytest.fixture(scope="module")
def trained(long_input):
    """A cross-encoder trained by ``paraamr quality train`` on 24 triplets."""
    out = long_input.parent / "model"
    argv = ["quality", "train", "--input", str(long_input), "--output", str(out), *TINY_ARGS,
            "--mode", "cross", "--batch-size", "8", "--lr", "1e-4", "--threads", "1",
            "--validation", "0.2", "--epochs", "1", "--no-progress", "--cosine-model", "all-mpnet-base-v2",
            "--save-triplets", str(out.parent / "triplets.jsonl")]  # fmt: skip
    assert main(argv) == 0
    return out


@pytest.fixture(scope="module")
def triplets():
    """The CLI's triplets: the operators' of the tiny sentences (synonyms gated), then those of
    the natural pairs."""
    args = build_parser().parse_args(["quality", "train", "--input", str(TINY), "--output", "x", *TINY_ARGS])
    return _triplets(args, list(read_sentences(TINY)))[0]


def test_cross_model_folder_has_card_summary_and_calibration(trained, triplets):
    info = json.loads((trained / INFO_FILE).read_text())
    assert info["mode"] == "cross" and info["triplets"] == len(triplets) > N
    assert info["natural"] == {"file": "tiny_natural.tsv", "sources": 4}
    gate = info["synonym_gate"]
    assert gate["min_similarity"] == SYNONYM_MIN_SIMILARITY == 0.9 and gate["kept"] and gate["dropped"]
    assert (
        "Synonym positives kept only where `all-MiniLM-L6-v2` gives them a cosine of 0.9"
        in (trained / "README.md").read_text()
    )
    assert "command" not in info  # not the default run
    assert info["operators"]["negative"]["natural_role_swap"] == 4  # 2 sources x 2 rewordings
    assert {"role_swap_of_positive", "phrase_swap_of_positive"} <= set(info["operators"]["negative"])
    assert info["validation"]["by_kind"] and 0 <= info["validation"]["macro_f1"] <= 1
    # paired: one row a triplet, the hand-written natural ones twice (natural_repeat 2)
    assert info["settings"]["natural_repeat"] == 2 and info["train_examples"] > info["train_triplets"]
    assert info["train_triplets"] + info["validation_triplets"] == len(triplets)
    cal = info["calibration"]
    assert cal["pairs"] == 2 * info["validation_triplets"] and cal["slope"] > 0
    card = (trained / "README.md").read_text()
    assert "## How this model was trained (paraamr quality train)" in card
    assert f"raw threshold {cal['threshold']}" in card
    from sentence_transformers.cross_encoder import CrossEncoder

    assert CrossEncoder(str(trained), device="cpu").predict([("a b", "a c")]).shape == (1,)


def test_calibrated_scores_put_the_threshold_at_one_half(trained):
    scorer = QualityScorer(trained)
    raw = scorer.raw([p["text"] for p in PAIRS], [p["para_text"] for p in PAIRS])
    scores = scorer.score([p["text"] for p in PAIRS], [p["para_text"] for p in PAIRS])
    assert scores == pytest.approx(calibrated(raw, scorer.calibration))
    assert all(0.0 <= s <= 1.0 for s in scores)
    assert calibrated([scorer.calibration["threshold"]], scorer.calibration) == [0.5]
    assert str(scorer.signature).startswith(f"quality|model:{trained.name}@")
    assert "|mode:cross|raw:logit+" in str(
        scorer.signature
    ) and "*cos(all-mpnet-base-v2)|calib:sigmoid@" in str(scorer.signature)


def test_long_line_is_a_failure_row_not_a_hang(trained):
    rows = [json.loads(line) for line in (trained / "failures.jsonl").read_text().splitlines()]
    assert len(rows) == 1 and rows[0]["chars"] == 99_999 and "--max-chars 1000" in rows[0]["reason"]
    saved = [json.loads(line) for line in (trained.parent / "triplets.jsonl").read_text().splitlines()]
    assert all(len(t["anchor"]) < 1000 for t in saved)


def test_same_seed_same_model(trained, triplets, tmp_path):
    """The library run with the CLI's settings and triplets reproduces the CLI's model."""
    saved = [json.loads(line) for line in (trained.parent / "triplets.jsonl").read_text().splitlines()]
    assert [t["negative"] for t in saved] == [t.negative for t in triplets]
    operators = [(t["positive_op"], t["negative_op"]) for t in saved]
    assert sum(pos == "natural" for pos, _ in operators) == NATURAL_OPS
    train(triplets, tmp_path / "again", SETTINGS, progress=False, sources=[TINY])
    texts = ([p["text"] for p in PAIRS], [p["para_text"] for p in PAIRS])
    assert QualityScorer(trained).raw(*texts) == pytest.approx(
        QualityScorer(tmp_path / "again").raw(*texts), abs=1e-5
    )


@pytest.mark.slow
def test_bi_training_lowers_the_loss_on_its_triplets(triplets, tmp_path, capfd):
    summary = train(triplets, tmp_path / "bi", TrainSettings(mode="bi", batch_size=8, learning_rate=1e-4,
                    threads=1, validation=0.2), progress=False)  # fmt: skip
    assert summary["mode"] == "bi" and summary["loss"].startswith("TripletLoss")
    assert summary["settings"]["cosine_model"] is None  # bi mode uses none (its info named mpnet)
    # quiet as asked (before: sentence-transformers' "Computing widget examples" bar), the card's
    # widget examples still drawn from the training triplets
    assert "widget examples" not in capfd.readouterr().err
    card = (tmp_path / "bi" / "README.md").read_text(encoding="utf-8")
    assert "widget:" in card and triplets[0].anchor.split()[0] in card.split("widget:")[1].split("---")[0]

    def figures(model):
        scorer = QualityScorer(model)
        a, p, n = (
            scorer.encode([getattr(t, f) for t in triplets]) for f in ("anchor", "positive", "negative")
        )
        return triplet_figures(a, p, n, margin=0.5)

    before, after = figures("all-MiniLM-L6-v2"), figures(tmp_path / "bi")
    assert after["loss"] < before["loss"] and after["separation"] > before["separation"]
    scores = QualityScorer(tmp_path / "bi").score(["a dog"], ["a dog"])
    assert 0.5 < scores[0] <= 1.0  # identical texts: cosine 1, above the calibrated threshold


def test_time_limit_stops_training_and_still_saves(triplets, tmp_path):
    settings = TrainSettings(
        mode="cross", batch_size=4, epochs=1, threads=1, validation=0.2, max_minutes=1e-6
    )
    summary = train(triplets, tmp_path / "quick", settings, progress=False)
    assert summary["stopped_by_time_limit"] and summary["steps_done"] == 1 < summary["steps"]
    assert (tmp_path / "quick" / INFO_FILE).is_file()


def test_a_cross_encoder_without_its_summary_is_refused(trained, tmp_path):
    """Without ``paraamr_quality.json`` a trained cross-encoder was scored as a bi-encoder's cosine
    (0.834 where the model gives 0.64), with no word."""
    import shutil

    from paraamr.errors import ModelNotFoundError

    bare = tmp_path / "bare"
    shutil.copytree(trained, bare)
    (bare / INFO_FILE).unlink()
    with pytest.raises(ModelNotFoundError, match=f"a cross-encoder without its {INFO_FILE}"):
        QualityScorer(bare)
    assert QualityScorer("all-MiniLM-L6-v2").mode == "bi"  # a sentence-transformers model: a cosine


def test_delta_folder_scores_like_the_full_model(trained, tmp_path):
    size = export_delta(trained, tmp_path / "delta")
    full = sum(p.stat().st_size for p in trained.glob("*.safetensors"))
    assert size < full
    assert json.loads((tmp_path / "delta" / INFO_FILE).read_text())["delta_of"] == "all-MiniLM-L6-v2"
    texts = ([p["text"] for p in PAIRS], [p["para_text"] for p in PAIRS])
    assert QualityScorer(tmp_path / "delta").raw(*texts) == pytest.approx(
        QualityScorer(trained).raw(*texts), abs=0.02
    )
    assert (tmp_path / "delta" / DELTA_FILE).is_file()
    card = (tmp_path / "delta" / "README.md").read_text()
    assert card.startswith("---") and card.count("## How this model was trained") == 1
    assert "`tiny_natural.tsv`: " in card  # the natural pairs are named among the inputs


def test_raw_score_is_the_logit_plus_the_weighted_mpnet_cosine(trained):
    """Computed apart: the cross-encoder's logit (sentence-transformers) plus the summary's weight
    times all-mpnet-base-v2's cosine of the two texts (sentence-transformers' cos_sim)."""
    import torch
    from sentence_transformers import SentenceTransformer, util
    from sentence_transformers.cross_encoder import CrossEncoder

    from paraamr.quality.mpnet import mpnet_dir

    info = json.loads((trained / INFO_FILE).read_text())
    assert info["cosine"]["model"] == "all-mpnet-base-v2" and info["cosine"]["weight"] > 0
    sources, paras = [p["text"] for p in PAIRS], [p["para_text"] for p in PAIRS]
    cross = CrossEncoder(str(trained), num_labels=1, max_length=128, device="cpu")
    logits = cross.predict(list(zip(sources, paras, strict=True)), activation_fn=torch.nn.Identity())
    encoder = SentenceTransformer(str(mpnet_dir()), device="cpu")
    cos = [
        float(util.cos_sim(encoder.encode(a), encoder.encode(b))) for a, b in zip(sources, paras, strict=True)
    ]
    expected = [float(x) + info["cosine"]["weight"] * c for x, c in zip(logits, cos, strict=True)]
    scorer = QualityScorer(trained)
    assert scorer.raw(sources, paras) == pytest.approx(expected, abs=1e-4)
    assert f"raw:logit+{info['cosine']['weight']:g}*cos(all-mpnet-base-v2)" in str(scorer.signature)


def test_without_its_cosine_encoder_the_model_scores_with_its_logit_alone(trained, tmp_path, capsys):
    """Where the encoder whose cosine a model adds cannot be had (here: a folder that is not
    there), the scorer uses the cross-encoder's logit (computed apart, sentence-transformers) with
    the calibration fitted on the logit alone (``cosine.without``), and says so on stderr and in
    the signature; a model without that calibration is a one-line error naming the encoder."""
    import shutil

    import torch
    from sentence_transformers.cross_encoder import CrossEncoder

    from paraamr.errors import ModelNotFoundError

    folder = tmp_path / "model"
    shutil.copytree(trained, folder)
    info = json.loads((folder / INFO_FILE).read_text())
    without = info["cosine"]["without"]
    assert without["pairs"] == info["calibration"]["pairs"] and without != info["calibration"]
    info["cosine"]["model"] = str(tmp_path / "no-such-encoder")
    (folder / INFO_FILE).write_text(json.dumps(info))
    sources, paras = [p["text"] for p in PAIRS], [p["para_text"] for p in PAIRS]
    cross = CrossEncoder(str(folder), num_labels=1, max_length=128, device="cpu")
    logits = cross.predict(list(zip(sources, paras, strict=True)), activation_fn=torch.nn.Identity())
    scorer = QualityScorer(folder)
    expected = calibrated([float(x) for x in logits], without)
    assert scorer.score(sources, paras) == pytest.approx(expected, abs=1e-4)
    assert f"|raw:logit|calib:sigmoid@{without['threshold']:g}|" in str(scorer.signature)
    assert "scoring with the cross-encoder alone" in capsys.readouterr().err
    del info["cosine"]["without"]
    (folder / INFO_FILE).write_text(json.dumps(info))
    with pytest.raises(ModelNotFoundError, match="no-such-encoder"):
        QualityScorer(folder).score(sources, paras)


def test_score_command_adds_quality_and_figures(trained, tmp_path, capsys):
    src = tmp_path / "pairs.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in PAIRS))
    out = tmp_path / "scored.jsonl"
    assert main(["quality", "score", "--model", str(trained), "--input", str(src), "--output", str(out)]) == 0
    scored = [json.loads(line) for line in out.read_text().splitlines()]
    expected = QualityScorer(trained).score([r["text"] for r in PAIRS], [r["para_text"] for r in PAIRS])
    assert [r["quality"] for r in scored] == pytest.approx(expected, abs=1e-5)
    assert [r["label"] for r in scored] == [1, 0]
    err = capsys.readouterr().err
    figures = json.loads(next(line for line in err.splitlines() if line.startswith('{"separation"')))
    assert figures["separation"] == pytest.approx(expected[0] - expected[1], abs=1e-5)
    assert figures["signature"].endswith("|threshold:0.5|scale:1")
    # an existing output is not replaced without --overwrite
    assert main(["quality", "score", "--model", str(trained), "--input", str(src), "--output", str(out)]) == 1
    assert "--overwrite" in capsys.readouterr().err
    # a failure row among them: the figures over the others, saying so (before: no figures, no word)
    src.write_text("".join(json.dumps(r) + "\n" for r in [*PAIRS, {**PAIRS[0], "para_text": "a\x00b"}]))
    argv = ["quality", "score", "--model", str(trained), "--input", str(src), "--output", str(out)]
    assert main([*argv, "--overwrite"]) == 0
    err = capsys.readouterr().err
    again = json.loads(next(line for line in err.splitlines() if line.startswith('{"separation"')))
    assert again["separation"] == figures["separation"] and again["failure_rows_left_out"] == 1
    # a row without a label: the figures over the labelled ones, saying so (before: none, no word)
    src.write_text("".join(json.dumps(r) + "\n" for r in [*PAIRS, {"text": "A b.", "para_text": "B a."}]))
    assert main([*argv, "--overwrite"]) == 0
    err = capsys.readouterr().err
    mixed = json.loads(next(line for line in err.splitlines() if line.startswith('{"separation"')))
    assert mixed["separation"] == figures["separation"] and mixed["unlabelled_rows_left_out"] == 1
    assert "failure_rows_left_out" not in mixed
    # a scored file scored again: a row that scores now keeps no failure of the first run (before: kept)
    assert main([*argv, "--overwrite", "--max-chars", "3"]) == 0
    again_out = tmp_path / "again.jsonl"
    assert main([*argv[:-4], "--input", str(out), "--output", str(again_out)]) == 0
    rows = [json.loads(line) for line in again_out.read_text().splitlines()]
    assert all(r["quality"] is not None and "failure" not in r for r in rows[:2])


def test_score_figures_threshold_the_scores_not_their_rounding(tmp_path, capsys, monkeypatch):
    """A score of 0.49999977 was rounded to 0.5 before the threshold and counted valid, where the
    evaluate module and generate's --min-quality count it invalid; the rows keep 6 decimals."""
    from paraamr.commands import quality

    monkeypatch.setattr(quality, "_scored", lambda args, scorer, pairs: [0.9, 0.49999977])
    (tmp_path / "pairs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in PAIRS))  # labels 1, 0
    argv = ["quality", "score", "--model", "all-MiniLM-L6-v2", "--input", str(tmp_path / "pairs.jsonl")]
    assert main([*argv, "--output", "-"]) == 0
    out, err = capsys.readouterr()
    assert [json.loads(line)["quality"] for line in out.splitlines()] == [0.9, 0.5]
    figures = json.loads(next(line for line in err.splitlines() if line.startswith('{"separation"')))
    assert figures["accuracy"] == 1.0


def test_score_replaces_a_link_and_never_writes_through_it(tmp_path, capsys):
    """--output a link with --overwrite: the file the link named stays as it was (before: the scores
    were written into it; and a link to the input replaced the input)."""
    src, theirs = tmp_path / "pairs.jsonl", tmp_path / "theirs.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in PAIRS))
    theirs.write_text("mine\n")
    (tmp_path / "out.jsonl").symlink_to(theirs)
    (tmp_path / "in-link.jsonl").symlink_to(src)
    argv = ["quality", "score", "--model", "all-MiniLM-L6-v2", "--input", str(src), "--overwrite"]
    assert main([*argv, "--output", str(tmp_path / "in-link.jsonl")]) == 1
    assert "in-link.jsonl: is the input" in capsys.readouterr().err
    assert main([*argv, "--output", str(tmp_path / "out.jsonl")]) == 0
    assert theirs.read_text() == "mine\n" and not (tmp_path / "out.jsonl").is_symlink()
    assert len((tmp_path / "out.jsonl").read_text().splitlines()) == len(PAIRS)


def test_score_reads_the_pair_files_evaluate_reads(tmp_path, capsys):
    """A .tsv or .csv of pairs, a release file and a dataset folder give the rows of the same pairs
    as JSON lines (labels aside); a .txt that is not JSON lines is read as two columns, as by evaluate."""
    texts = [(r["text"], r["para_text"]) for r in PAIRS]
    (tmp_path / "pairs.tsv").write_text("source\tparaphrase\n" + "".join(f"{a}\t{b}\n" for a, b in texts))
    (tmp_path / "pairs.txt").write_text("".join(f"{a}\t{b}\n" for a, b in texts))
    (tmp_path / "pairs.csv").write_text("".join(f'"{a}","{b}"\n' for a, b in texts))
    record = {"text": texts[0][0], "paraphrases": [{"para_text": b, "perplexity": 9.5} for _, b in texts]}
    (tmp_path / "release.jsonl").write_text(json.dumps(record) + "\n")
    assert main(["convert", str(tmp_path / "release.jsonl"), str(tmp_path / "folder"), "-q"]) == 0
    (tmp_path / "release.jsonl.gz").write_bytes(gzip.compress((tmp_path / "release.jsonl").read_bytes()))
    with zipfile.ZipFile(tmp_path / "release.zip", "w") as packed:  # as the release is packed
        packed.write(tmp_path / "release.jsonl", "release.json")
    model = ["--model", "all-MiniLM-L6-v2", "--output", "-"]
    expected = QualityScorer("all-MiniLM-L6-v2").score(*zip(*texts, strict=True))
    capsys.readouterr()
    # gzip and zip: before, 'not valid UTF-8 at line 1'
    names = ("pairs.tsv", "pairs.txt", "pairs.csv", "release.jsonl", "folder")
    names += ("release.jsonl.gz", "release.zip")
    for name in names:
        assert main(["quality", "score", "--input", str(tmp_path / name), *model]) == 0, name
        rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
        assert [(r["text"], r["para_text"]) for r in rows] == texts, name
        assert [r["quality"] for r in rows] == pytest.approx(expected, abs=1e-5), name
        if name.startswith(("release", "folder")):  # joined back to their records (before: text only)
            assert {(r["id"], r["perplexity"]) for r in rows} == {(text_id(texts[0][0]), 9.5)}, name


def test_score_takes_labelled_pairs_as_natural_reads_them(tmp_path, capsys):
    """A .tsv headed ``source candidate label kind`` (the ``--natural`` format, set C's) keeps its
    labels and kinds and gives the figures; two sources whose resamples cannot differ give a null
    interval, with no warning from scipy on stderr."""
    rows = [
        ("The dog ran.", "The dog was running.", 1, "voice"),
        ("The dog ran.", "The cat ran.", 0, "noun"),
        ("The dog ran.", "A dog ran.", 1, "synonym"),
        ("Anna left.", "Anna went away.", 1, "synonym"),  # resamples of this source alone: no invalid pair
    ]
    path = tmp_path / "labelled.tsv"
    path.write_text("source\tcandidate\tlabel\tkind\n" + "".join("\t".join(map(str, r)) + "\n" for r in rows))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        argv = ["quality", "score", "--input", str(path), "--model", "all-MiniLM-L6-v2", "--no-progress"]
        assert main(argv) == 0
    assert not [str(w.message) for w in caught if "Degenerate" in type(w.message).__name__]
    out, err = capsys.readouterr()
    scored = [json.loads(line) for line in out.splitlines()]
    assert [(r["text"], r["para_text"], r["label"], r["kind"]) for r in scored] == rows
    figures = json.loads(err)  # the figures' line alone (no progress lines)
    assert figures["accuracy"] == classify([r["quality"] for r in scored], [r[2] for r in rows])["accuracy"]
    assert figures["interval_95"]["separation"] == [None, None]


@pytest.mark.parametrize(
    "header", ["source\tcandidate\tlabel", "Source\tCandidate\tLabel\tKind", "source candidate label kind"]
)
def test_score_names_a_labelled_header_that_is_not_quite_right(tmp_path, capsys, header):
    """A header of labelled pairs with a column missing, capitals or spaces for tabs was read as a
    line of pairs, refused as "got 3 columns, in none of the layouts read (...)"."""
    path = tmp_path / "labelled.tsv"
    path.write_text(f"{header}\nThe dog ran.\tThe cat ran.\t0\tnoun\n")
    assert main(["quality", "score", "--input", str(path), "--model", "all-MiniLM-L6-v2"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"paraamr quality score: {path}, line 1: a header of labelled pairs (")
    assert err.endswith(
        "must be source candidate label kind, tab-separated (unlabelled pairs take no header)\n"
    )


def test_score_figures_carry_95_intervals_by_source(trained, tmp_path, capsys):
    sentences = ["The dog chased the cat.", "Anna gave Tom a book.", "The shop opens at nine."]
    rows = [
        {"text": text, "para_text": para, "label": label}
        for text in sentences
        for para, label in ((text.replace(".", "!"), 1), (text.replace("The", "No"), 0))
    ]
    src = tmp_path / "pairs.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["quality", "score", "--model", str(trained), "--input", str(src), "--output", "-"]) == 0
    err = capsys.readouterr().err
    figures = json.loads(next(line for line in err.splitlines() if line.startswith('{"separation"')))
    for name in ("separation", "f1_macro"):
        lo, hi = figures["interval_95"][name]
        assert lo <= figures[name] <= hi
    how = "|ci:95%|bootstrap:cluster:sources|method:percentile|resamples:1000|seed:0|"
    assert how in figures["signature"]
    # one source: no interval (null, valid JSON), the figures still printed
    src.write_text("".join(json.dumps(r) + "\n" for r in PAIRS))
    assert main(["quality", "score", "--model", str(trained), "--input", str(src), "--output", "-"]) == 0
    line = next(x for x in capsys.readouterr().err.splitlines() if x.startswith('{"separation"'))
    assert json.loads(line, parse_constant=pytest.fail)["interval_95"]["f1_macro"] == [None, None]


def test_score_long_text_in_seconds_or_refused(tmp_path, capsys):
    long_text = "word " * 20_000
    src = tmp_path / "long.jsonl"
    src.write_text(
        json.dumps({"text": long_text, "para_text": "word word"}) + "\n" + json.dumps(PAIRS[0]) + "\n"
    )
    out = tmp_path / "out.jsonl"
    argv = ["quality", "score", "--model", "all-MiniLM-L6-v2", "--input", str(src), "--output", str(out)]
    assert main(argv) == 0  # truncated to the model's length: handled
    assert all(isinstance(json.loads(line)["quality"], float) for line in out.read_text().splitlines())
    assert main([*argv, "--overwrite", "--max-chars", "1000"]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows[0]["quality"] is None and "--max-chars 1000" in rows[0]["failure"]
    assert isinstance(rows[1]["quality"], float)


@pytest.mark.slow
def test_score_records_a_failure_row_for_a_text_no_model_can_read(tmp_path, capfd):
    """A lone surrogate (JSON can carry one), a NUL or a text missing is a failure row naming the
    field (and the position); the other rows are scored (before, the tokenizer's TypeError ended
    the run)."""
    src = tmp_path / "hostile.jsonl"
    src.write_text(
        '{"text": "a\\ud800b", "para_text": "x y"}\n'
        + json.dumps(PAIRS[0])
        + "\n"
        + json.dumps({"text": "The dog ran.", "para_text": "The dog\x00 ran."})
        + "\n"
        + '{"text": "He left.", "para_text": "He went away.", "note": "\\udc80"}\n'  # another field
        + '{"text": "He ran."}\n{"text": 5, "para_text": "Five."}\n'  # before: the whole run stopped
        + '{"text": "He ran.", "para_text": ""}\n{"text": "He ran.", "para_text": "   "}\n'  # and these
    )
    out = tmp_path / "out.jsonl"
    argv = ["quality", "score", "--model", "all-MiniLM-L6-v2", "--input", str(src), "--output", str(out)]
    assert main(argv) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["quality"] is None for r in rows] == [True, False, True, False, True, True, True, True]
    missing = [f"{field}: missing, or not a string" for field in ("para_text", "text")]
    assert [r["failure"] for r in rows[4:]] == [*missing, "para_text: empty", "para_text: empty"]
    assert rows[3]["note"] == "\ufffd" and "failure" not in rows[3]  # scored, written as UTF-8 can
    assert rows[0]["failure"] == "text: a lone surrogate (U+D800) at character 2; text cannot hold it"
    assert rows[0]["text"] == "a\ufffdb"  # written as UTF-8 can hold it
    assert rows[2]["failure"] == "para_text: a NUL character at character 8"
    err = capfd.readouterr().err  # the model loads quietly: no library bar or conversion notice
    assert "Loading weights" not in err and "Converting" not in err, err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["score", "--input", "{missing}"], "no such file"),
        (["score", "--input", "{bad}"], r"bad\.jsonl: no row has string 'text' and 'para_text' fields"),
        (["score", "--input", "{latin}"], r"latin\.txt: not valid UTF-8 at line 1"),
        (["score", "--input", "{dir}"], "dir: no data files"),  # as evaluate says of a folder
        (["score", "--input", "{good}", "--model", "{missing}"], "not found .*paraamr quality train"),
        (["score", "--input", "{good}", "--model", "{latin}"], "is a file, not a model folder"),
        (["train", "--input", "{missing}", "--output", "{out}"], "no such file"),
        (["train", "--input", "{latin}", "--output", "{out}"], r"latin\.txt: not valid UTF-8 at line 1"),
        (["train", "--input", "{empty}", "--output", "{out}"], "no sentences to train on"),
        (["train", "--input", "{good}", "--output", "{user}"], "user: not empty; pass --overwrite"),
        # before: the user's README.md was replaced by the model's, exit 0
        (["train", "--input", "{good}", "--output", "{user}", "--overwrite"], "holds no model of paraamr"),
        (["train", "--input", "{good}", "--output", "{latin}"], "is a file, not a folder"),
        (["train", "--input", "{good}", "--natural", "{tsv}", "--output", "{out}"], r"bad\.tsv:3: a row"),
        (["train", "--input", "{good}", "--natural", "{good}", "--output", "{out}"], "the header must be"),
        (["train", "--natural-operator-triplets", "-1", "--output", "{out}"], "must be an integer >= 0"),
        # the models are checked before minutes of triplet building
        (["train", "--base", "{missing}", "--output", "{out}"], "base model .*nope.jsonl' not found"),
        (["train", "--cosine-model", "{dir}", "--output", "{out}"], "cosine model .*dir is not a model"),
        (["train", "--freeze-layers", "99", "--output", "{out}"], "freeze_layers 99: the base .* has 6 lay"),
        (
            ["train", "--synonym-min-similarity", "1.5", "--output", "{out}"],
            r"must be a finite number in \[0, 1\]",
        ),
        *(
            (["train", "--input", "{good}", "--output", "{out}", "--validation", v], "number > 0 and < 1")
            for v in ("1.5", "0", "1")  # 0 and 1: no calibration split, or nothing to train on
        ),
        # before: the input was overwritten by the triplets (also when the run then failed), or the
        # file inside the model's folder blocked the run after the triplets were built
        (["train", "--input", "{good}", "--save-triplets", "{good}", "--output", "{out}"], "is the input"),
        (["train", "--input", "{good}", "--save-triplets", "{out}/t", "--output", "{out}"], "inside --outp"),
    ],
)
def test_errors_are_one_line(argv, message, tmp_path, capsys):
    (tmp_path / "bad.jsonl").write_text('{"text": "a"}\n{"text": 1, "para_text": "b"}\n')
    (tmp_path / "latin.txt").write_bytes(b"caf\xe9\n")
    (tmp_path / "good.jsonl").write_text(json.dumps(PAIRS[0]) + "\n")
    (tmp_path / "empty.txt").write_text("# nothing\n\n")
    (tmp_path / "bad.tsv").write_text("source\tcandidate\tlabel\tkind\na\tb\t1\tvoice\na\tc\tyes\tnoun\n")
    (tmp_path / "dir").mkdir()
    user = tmp_path / "user"
    user.mkdir()
    (user / "README.md").write_text("mine")
    files = {"missing": "nope.jsonl", "bad": "bad.jsonl", "latin": "latin.txt", "good": "good.jsonl",
             "empty": "empty.txt", "dir": "dir", "out": "out", "user": "user", "tsv": "bad.tsv"}  # fmt: skip
    names = {key: str(tmp_path / name) for key, name in files.items()}
    try:
        status = main(["quality", *(a.format(**names) for a in argv)])
    except SystemExit as stop:  # a value its option's type refuses: argparse's one line, exit 2
        status = stop.code
    err = capsys.readouterr().err
    assert status in (1, 2) and err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("paraamr quality")
    import re

    assert re.search(message, err), err
    assert (user / "README.md").read_text() == "mine"


@pytest.mark.slow
def test_overwrite_replaces_the_model_whole_and_one_run_at_a_time(trained, tmp_path, capsys):
    """Two runs into one --output both wrote there; a kill mid-save left new weights beside the
    old calibration; an --overwrite rerun kept the earlier run's failures.jsonl."""
    import shutil
    import subprocess
    import sys

    model = tmp_path / "model"
    shutil.copytree(trained, model)
    assert (model / "failures.jsonl").is_file()  # its long line
    argv = ["quality", "train", "--input", str(TINY), "--output", str(model), "--overwrite", *TINY_ARGS]
    argv += ["--epochs", "1", "--batch-size", "8", "--no-progress", "--cosine-model", "none"]
    code = (
        "import sys, time; from paraamr.locks import file_lock; "
        "lock = file_lock(sys.argv[1], command='quality train'); print('held', flush=True); time.sleep(60)"
    )
    lock = str(tmp_path / ".model.lock")  # another run's
    holder = subprocess.Popen([sys.executable, "-c", code, lock], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        assert main(argv) == 1
    finally:
        holder.kill()
        holder.wait()
    assert f"--output {model}: being written by pid {holder.pid}" in capsys.readouterr().err
    assert main(argv) == 0
    assert not (model / "failures.jsonl").exists() and sorted(p.name for p in tmp_path.iterdir()) == ["model"]
    info = json.loads((model / "paraamr_quality.json").read_text())
    assert info["settings"]["cosine_model"] is None  # the new run's, whole


def test_calibrate_and_split_validation():
    cal = calibrate([0.1, 0.2, 0.3, 0.7, 0.8, 0.35], [0, 0, 0, 1, 1, 1])
    assert cal["threshold"] == pytest.approx(0.325) and cal["macro_f1"] == 1.0
    assert calibrated([0.325], cal) == [0.5]
    # worked by hand: 0.4 accepts 1 of 3 invalid and rejects 1 of 3 valid (equal errors), while the
    # best macro F1 (0.829) lies at 0.25 and at 0.55; the calibration takes the equal-error point
    cal = calibrate([0.1, 0.5, 0.2, 0.9, 0.6, 0.3], [0, 0, 0, 1, 1, 1])
    assert cal["threshold"] == pytest.approx(0.4) and cal["macro_f1"] == pytest.approx(2 / 3)
    assert "equal error rate" in cal["method"]
    ts = build_triplets(read_sentences(TINY), seed=0, max_triplets=N)
    train_, val = split_validation(ts, 0.5, seed=1)
    assert {t.anchor for t in train_}.isdisjoint({t.anchor for t in val}) and len(train_) + len(val) == N
    assert len({t.anchor for t in val}) == round(len({t.anchor for t in ts}) * 0.5) > 0


def test_training_on_nothing_is_a_clear_error(tmp_path):
    from paraamr.errors import InputError

    with pytest.raises(InputError, match="no triplets"):
        train([], tmp_path / "m", SETTINGS)


def test_default_training_leaves_set_c_out_and_says_so(tmp_path):
    """The default natural pairs are the training part: no text of a set-C pair, nor anything made
    from one, is in a triplet; the card's facts list set C."""
    argv = ["quality", "train", "--input", str(TINY), "--output", str(tmp_path), "--max-triplets", "2000",
            "--natural-operator-triplets", "40", "--no-progress"]  # fmt: skip
    args = build_parser().parse_args(argv)
    triplets, about = _triplets(args, list(read_sentences(TINY)))
    held = set_c_sources()
    assert about["natural"]["held_out"] == sorted(held) and about["natural"]["sources"] == 467 - len(held)
    c_texts = {normalize(r[f]) for r in natural_pairs("C") for f in ("text", "para_text")}
    made = {normalize(getattr(t, f)) for t in triplets for f in ("anchor", "positive", "negative")}
    assert not made & c_texts
    train_sources = {r["text"] for r in natural_pairs("train")}
    natural = [t for t in triplets if t.positive_op.startswith("natural")]
    assert len(natural) > 1000 and {t.anchor for t in natural} <= train_sources
    assert sum(t.positive_op == "natural" for t in triplets) == 40
    assert not {"unrelated", "fragment", "topic_shift"} & {t.negative_op for t in triplets}  # opt-in
    assert "phrase_synonym" not in {t.positive_op for t in triplets}


def test_the_training_options_are_the_settings_fields():
    """Each training setting is declared once, on TrainSettings: the parsed options give the settings
    with their defaults, a value given on the command line reaches its field, and the Python API
    refuses a number out of range with the option's name, as the command line does."""
    def parsed(*given: str) -> TrainSettings:
        args = build_parser().parse_args(["quality", "train", "--output", "x", *given])
        return TrainSettings(**given_settings(TrainSettings, args))

    assert parsed() == TrainSettings()
    settings = parsed("--lr", "3e-5", "--threads", "0", "--cosine-model", "none", "--no-paired", "--seed=9")
    assert (settings.learning_rate, settings.threads, settings.cosine_model) == (3e-5, None, None)
    assert (settings.paired, settings.seed) == (False, 9)
    with pytest.raises(UsageError, match="TrainSettings: epochs must be an integer > 0 or None, got 0"):
        TrainSettings(epochs=0).check()
    with pytest.raises(UsageError, match="learning_rate must be"):  # the option is --lr
        TrainSettings(learning_rate=-1.0).check()
    for fraction in (0, 1):  # before: the Python API took them; only the command refused them
        refusal = f"validation must be a finite number > 0 and < 1, got {fraction}"
        with pytest.raises(UsageError, match=refusal):
            TrainSettings(validation=fraction).check()


def test_only_the_defaults_are_called_the_default_command():
    def default(*extra):
        args = build_parser().parse_args(["quality", "train", "--output", "x", *extra])
        cosine = None if args.cosine_model == "none" else args.cosine_model
        settings = TrainSettings(
            threads=args.threads, paired=args.paired, logit_margin=args.logit_margin, cosine_model=cosine
        )
        return _default_run(args, settings)

    assert default() and default("--no-progress")
    assert not default("--max-triplets", "10") and not default("--no-natural")
    assert not default("--natural", str(TINY_NATURAL)) and not default("--synonym-min-similarity", "0")
    shipped = TrainSettings().cosine_model or "none"
    assert default("--unrelated-triplets", "0") and default("--cosine-model", shipped)
    assert not default("--cosine-model", "none" if shipped != "none" else "all-mpnet-base-v2")
    for opt_in in ("--unrelated-triplets", "--fragment-triplets", "--topic-shift-triplets"):
        assert not default(opt_in, "1"), opt_in
    assert not default("--phrase-synonyms")


def test_synonym_positives_are_those_the_base_encoder_finds_close():
    """Every synonym (or phrase synonym) positive the CLI trains on has a cosine of 0.9 or more with
    its anchor under all-MiniLM-L6-v2 (computed here apart, with sentence-transformers); ungated,
    some are below."""
    from sentence_transformers import SentenceTransformer

    from paraamr.quality.scorer import resolve_model

    encoder = SentenceTransformer(str(resolve_model("all-MiniLM-L6-v2")), device="cpu")

    def cosines(ts):
        a = encoder.encode([t.anchor for t in ts], normalize_embeddings=True)
        b = encoder.encode([t.positive for t in ts], normalize_embeddings=True)
        return (a * b).sum(axis=1)

    kinds = ("synonym", "phrase_synonym")
    argv = ["quality", "train", "--input", str(TINY), "--output", "x", "--no-natural", "--phrase-synonyms"]
    args = build_parser().parse_args(argv)
    gated = [t for t in _triplets(args, list(read_sentences(TINY)))[0] if t.positive_op in kinds]
    ungated = [t for t in build_triplets(read_sentences(TINY), seed=0) if t.positive_op in kinds]
    assert gated and min(cosines(gated)) >= SYNONYM_MIN_SIMILARITY - 1e-4
    assert min(cosines(ungated)) < SYNONYM_MIN_SIMILARITY


def test_paired_loss_is_cross_entropy_plus_the_hinge():
    import torch
    from torch.nn.functional import binary_cross_entropy_with_logits

    from paraamr.quality.losses import PairedLoss, hinge
    from paraamr.quality.scorer import load_model, resolve_model

    model = load_model(resolve_model("all-MiniLM-L6-v2"), "cross", max_length=32)
    loss = PairedLoss(model, margin=5.0)
    columns = [["The dog ran.", "A cat sat."], ["The dog ran!", "A cat sat down."],
               ["The dog ran.", "A cat sat."], ["The cat ran.", "A dog sat."]]  # fmt: skip
    torch.manual_seed(0)
    model.eval()
    with torch.no_grad():
        parts = loss(columns)
        pairs = list(zip(columns[0] + columns[2], columns[1] + columns[3], strict=True))
        logits = torch.tensor(model.predict(pairs, activation_fn=torch.nn.Identity()))
    bce = binary_cross_entropy_with_logits(logits, torch.tensor([1.0, 1.0, 0.0, 0.0]))
    assert float(parts["bce"]) == pytest.approx(float(bce), abs=1e-4)
    assert float(parts["margin"]) == pytest.approx(float(hinge(logits[:2], logits[2:], 5.0)), abs=1e-4)
    assert float(parts["margin"]) > 0  # an untrained head: no pair beats its negative by 5
    assert set(PairedLoss(model, margin=0.0)(columns)) == {"bce"}


def test_paired_training_runs_and_says_its_loss(triplets, tmp_path):
    settings = TrainSettings(
        batch_size=8, threads=1, validation=0.2, paired=True, logit_margin=2.0, natural_repeat=1
    )
    summary = train(triplets, tmp_path / "paired", settings, progress=False)
    assert summary["loss"].startswith("PairedLoss") and "2.0" in summary["loss"]
    assert summary["train_examples"] == summary["train_triplets"]  # one row a triplet
    assert summary["steps"] == -(-summary["train_triplets"] // 4)  # 8 pairs a step: 4 triplets
    card = (tmp_path / "paired" / "README.md").read_text()
    assert "hinge" in card
    # the batch as the trainer's own section counts it too (before: "batch 8" beside its 4), and how
    # to get the calibrated score (the card's own snippet gives the uncalibrated one)
    assert "batch 8 pairs (4 triplets, the trainer's batch size)" in card
    assert "`paraamr quality score --model DIR" in card and card.endswith("\n")


#: The triplets of the shipped model: those the default command draws (as ``--save-triplets``
#: writes them), with, kind by kind, the counts of the shipped model's summary (checked below).
SHIPPED_TRIPLETS = DATA / "default_triplets.jsonl.gz"


@pytest.mark.slow
def test_the_default_command_draws_the_shipped_models_triplets():
    """The shipped model's triplets have, kind by kind, the counts its summary lists; and for a
    sample of its sentences, the default command's operators, synonym gate and seeds draw them
    again (an anchor's draws do not depend on the others): each triplet's negative is what its
    operator draws for the sentence in some round, and its positive one of that round's gated
    positives. The gate keeps and drops the sample's outputs both."""
    import gzip
    import random
    from collections import Counter

    from paraamr.quality.analysis import parsed
    from paraamr.quality.operators import NEGATIVE, POSITIVE
    from paraamr.quality.scorer import BASE_MODEL, DEFAULT_DIR
    from paraamr.quality.triplets import draw_negatives, draw_round, operator_counts

    shipped = json.loads((DEFAULT_DIR / INFO_FILE).read_text())
    assert shipped["command"] == "paraamr quality train --output DIR"
    with gzip.open(SHIPPED_TRIPLETS, "rt", encoding="utf-8") as stream:
        saved = [json.loads(line) for line in stream]
    assert len(saved) == shipped["triplets"]
    assert operator_counts(Triplet(**t) for t in saved) == shipped["operators"]

    args = build_parser().parse_args(["quality", "train", "--output", "x", "--no-progress"])
    assert _default_run(args, TrainSettings())
    sentences = set(training_sentences(args.input, args.max_chars)[0])
    mine: dict[str, list[dict]] = {}
    for t in saved:
        if t["anchor"] in sentences and not t["positive_op"].startswith("natural"):
            mine.setdefault(t["anchor"], []).append(t)
    sample = random.Random(0).sample(sorted(mine), 30)
    gate = SimilarityGate(QualityScorer(BASE_MODEL).encode, args.synonym_min_similarity)
    gate.prime(sample)
    unmatched = {a: list(mine[a]) for a in sample}
    assert sum(map(len, unmatched.values())) > len(sample)
    with parsed(sample):
        for round_ in range(20):  # build_triplets' rounds
            for anchor, rng, pos in draw_round(sample, args.seed, round_, POSITIVE, gate):
                positives = set(pos) or {("identity", anchor)}
                drawn = draw_negatives(anchor, rng, pos, NEGATIVE, Counter())
                negatives = {(name, negative) for name, negative, _, _ in drawn}
                unmatched[anchor] = [
                    t for t in unmatched[anchor]
                    if (t["negative_op"], t["negative"]) not in negatives
                    or (t["positive_op"], t["positive"]) not in positives
                ]  # fmt: skip
            if not any(unmatched.values()):
                break
    assert not any(unmatched.values()), unmatched
    assert gate.counts["kept"] and gate.counts["dropped"]


@pytest.mark.slow
def test_a_cosine_encoder_given_by_a_relative_path_is_found_from_any_folder(tmp_path, monkeypatch, capsys):
    """The model kept ``--cosine-model ./enc`` as typed: scored from another folder, it fell back to
    its logit alone (other scores, a warning); the card names the folder, never its local path."""
    from paraamr.quality.scorer import resolve_model

    (tmp_path / "enc").symlink_to(resolve_model("all-MiniLM-L6-v2"))
    monkeypatch.chdir(tmp_path)
    argv = ["quality", "train", "--input", str(TINY), "--output", "m", "--max-triplets", "8", "--no-natural",
            "--threads", "1", "--no-progress", "--cosine-model", "./enc"]  # fmt: skip
    assert main(argv) == 0
    pair = (["John ate five apples."], ["Five apples were eaten by John."])
    here = QualityScorer("m").score(*pair)
    info = json.loads((tmp_path / "m" / INFO_FILE).read_text())
    assert info["cosine"]["model"] == str(tmp_path / "enc")
    assert "the cosine of `enc`'s embeddings" in (tmp_path / "m" / "README.md").read_text()
    monkeypatch.chdir("/")
    capsys.readouterr()
    there = QualityScorer(str(tmp_path / "m")).score(*pair)
    assert there == pytest.approx(here, abs=1e-6) and "warning" not in capsys.readouterr().err


def test_a_stopped_train_leaves_no_save_triplets_file_and_the_same_command_runs(tmp_path, monkeypatch):
    """Before: the triplets were written before the model was trained, so Ctrl-C, a kill or a
    full disk during training left them, and the same command was then refused (exists)."""
    from paraamr.quality import train

    def stopped(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(train, "train", stopped)
    argv = ["quality", "train", "--input", str(TINY), "--output", str(tmp_path / "m"), *TINY_ARGS,
            "--cosine-model", "none", "--no-progress", "--save-triplets", str(tmp_path / "t")]  # fmt: skip
    assert main(argv) == 130
    assert sorted(p.name for p in tmp_path.iterdir()) == []
