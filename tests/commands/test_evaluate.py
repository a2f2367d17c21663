"""``paraamr evaluate``: the Table-2 row of a release file, a dataset folder and a two-column file."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import sacrebleu

from paraamr.cli import main
from paraamr.layout import shard_name
from paraamr.records import DEFAULT_SCHEMA, text_id

DATA = Path(__file__).parents[1] / "metrics" / "data"
RELEASE = DATA / "release_sample.jsonl"
MEASURES = ("semantic_similarity", "bleu_diversity", "jaccard_diversity", "ted3", "tedf")


def run_json(capsys, *args) -> dict:
    assert main(["evaluate", *map(str, args), "--json", "--no-progress"]) == 0
    return json.loads(capsys.readouterr().out)


def release_pairs() -> list[tuple[str, str]]:
    records = [json.loads(line) for line in RELEASE.read_text().splitlines()]
    return [(r["text"], p["para_text"]) for r in records for p in r["paraphrases"]]


@pytest.fixture(scope="module")
def dataset_folder(tmp_path_factory) -> Path:
    """The release sample as one of our generated folders (data/default/*.parquet)."""
    root = tmp_path_factory.mktemp("generated")
    rows = []
    for line in RELEASE.read_text().splitlines():
        record = json.loads(line)
        paras = [
            {
                "para_text": p["para_text"],
                "perplexity": p["perplexity"],
                "focus": "know-01",
                "amr": "(k / know-01)",
                "similarity": None,
                "quality": None,
            }
            for p in record["paraphrases"]
        ]
        rows.append(
            {
                "id": text_id(record["text"]),
                "text": record["text"],
                "amr": "(k / know-01)",
                "paraphrases": paras,
            }
        )
    (root / "data" / "default").mkdir(parents=True)
    table = pa.Table.from_pylist(rows, schema=DEFAULT_SCHEMA)
    pq.write_table(table, root / "data" / "default" / shard_name("train", 0, 1))
    return root


def test_release_file_row_and_histograms(capsys, tmp_path):
    result = run_json(capsys, RELEASE, "--plots", tmp_path / "plots")
    pairs = release_pairs()
    assert result["pairs"] == len(pairs) == 11 and result["failures"] == []
    golden_bleu = sum(100 - sacrebleu.sentence_bleu(p, [s]).score for s, p in pairs) / len(pairs)  # sacrebleu
    assert result["bleu_diversity"] == pytest.approx(golden_bleu)
    assert result["semantic_similarity"] > 60 and 0 < result["jaccard_diversity"] < 100
    assert result["tedf"] > result["ted3"] >= 0
    assert "scale:not-paper" in result["signatures"]["ted"]
    assert result["signatures"]["semantic_similarity"].startswith("model:all-MiniLM-L6-v2|pooling:mean")
    assert [Path(p).name for p in result["plots"]] == [f"{m}.png" for m in MEASURES]
    for path in result["plots"]:
        assert Path(path).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_same_row_from_a_folder_and_a_two_column_file(capsys, dataset_folder):
    folder = run_json(capsys, dataset_folder, "--no-plots")
    tsv = run_json(capsys, DATA / "pairs_sample.tsv", "--no-plots")
    release = run_json(capsys, RELEASE, "--no-plots")
    for key in ("pairs", *MEASURES):
        assert folder[key] == pytest.approx(release[key]) and tsv[key] == pytest.approx(release[key]), key


def test_split_picks_one_split_of_a_local_folder_and_config_is_for_the_hub(capsys, tmp_path, dataset_folder):
    """A local folder's splits are all scored by default; --split picks one (before: ignored, every
    split scored), a split it lacks is named; --config is for a Hub dataset only (before: ignored)."""
    import shutil

    folder = tmp_path / "two-splits"
    shutil.copytree(dataset_folder, folder)
    shard = folder / "data" / "default" / shard_name("train", 0, 1)
    table = pq.read_table(shard)
    pq.write_table(table.slice(0, 2), folder / "data" / "default" / shard_name("validation", 0, 1))
    pairs = {"all": len(release_pairs())}
    pairs["validation"] = sum(len(p) for p in table.slice(0, 2).column("paraphrases").to_pylist())
    assert run_json(capsys, folder, "--no-plots")["pairs"] == pairs["all"] + pairs["validation"]
    assert run_json(capsys, folder, "--no-plots", "--split", "validation")["pairs"] == pairs["validation"]
    assert run_json(capsys, folder, "--no-plots", "--split", "train")["pairs"] == pairs["all"]
    assert main(["evaluate", str(folder), "--split", "test", "--no-progress"]) == 1
    assert "no split test (splits: train, validation)" in capsys.readouterr().err
    assert main(["evaluate", str(folder), "--config", "pairs", "--no-progress"]) == 2
    assert "--config pairs: only for a Hub dataset" in capsys.readouterr().err


def test_the_interval_line_says_how_many_drawn_sources_had_no_pair_scored(capsys, tmp_path):
    """Before: "over the 2 sources drawn of 4 sources" for a draw of 3 whose one source failed whole."""
    rows = [
        {"text": f"The boy number {i} wants to go home now.", "paraphrases": [
            {"para_text": f"Boy {i} wants to go home.", "perplexity": 50.0},
            {"para_text": f"Going home is what boy {i} wants.", "perplexity": 60.0},
        ]}
        for i in range(3)
    ]  # fmt: skip
    rows.append({"text": "A cat sleeps.", "paraphrases": [{"para_text": " ", "perplexity": 1.0}]})
    path = tmp_path / "c.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["evaluate", str(path), "--sample", "4", "--no-plots", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "bootstrap over the 3 sources drawn of 4 sources that have a pair scored (1 drawn had none)" in out


def test_markdown_row_and_sample_of_sources_with_intervals(capsys):
    args = ["--sample", "4", "--seed", "1", "--no-plots"]
    assert main(["evaluate", str(RELEASE), *args, "--no-progress"]) == 0
    out = capsys.readouterr().out.splitlines()
    records = [json.loads(line) for line in RELEASE.read_text().splitlines()]
    assert out[0] == "| pairs | Semantic similarity | 1-BLEU | 1-∩/∪ | TED-3 | TED-F |"
    first, second = run_json(capsys, RELEASE, *args), run_json(capsys, RELEASE, *args)
    # 4 sources drawn, each with all its paraphrases
    assert out[2].startswith(f"| {first['pairs']} | ") and first["clusters"] == 4 < len(records)
    assert out[3].startswith("| 95% CI | ") and any(
        line.startswith("95% CI: cluster bootstrap over the 4 sources") for line in out
    )
    assert any(line.startswith("ted: convention:paper|levels:from-clause|leaves:lowercased|") for line in out)
    assert "bootstrap:cluster:sources" in first["signatures"]["interval"]
    # the protocol says 4 of the sources were drawn (before: "sources:all", as of a whole input)
    assert first["signatures"]["protocol"].endswith(f"|sample:4-of-{len(records)}-seed-1")
    for key in MEASURES:
        low, high = first["intervals"][key]
        assert low <= first[key] <= high, key
    assert set(first.pop("timings")) == {"parse", "embed", "lexical", "ted"}
    second.pop("timings")
    assert first == second


def test_empty_paraphrase_is_a_failure_row(capsys, tmp_path):
    path = tmp_path / "pairs.csv"
    path.write_text("text,para_text\nI know it.,It is known to me.\nThe cat sat.,\n")
    result = run_json(capsys, path, "--no-plots")
    assert result["pairs"] == 1
    assert result["failures"] == [
        {
            "index": 1,
            "where": f"{path}, line 3",
            "id": text_id("The cat sat."),
            "stage": "input",
            "reason": "paraphrase: empty",
        }
    ]


def test_bad_two_column_file_names_the_line(capsys, tmp_path):
    path = tmp_path / "pairs.tsv"
    path.write_text("a\tb\nc\td\te\n")
    assert main(["evaluate", str(path), "--no-plots", "--no-progress"]) == 1
    assert f"{path}, line 2: expected 2 columns" in capsys.readouterr().err


def test_a_similarity_model_whose_files_changed_is_refused_on_resume(capsys, tmp_path):
    """An evaluation resumed from its state folder with a similarity model of the same name but other
    files is refused, naming it (its chunks would mix two models in one row); the same files again
    (a new mtime) go on."""
    import shutil

    from paraamr.models.download import ensure

    model = tmp_path / "minilm"
    shutil.copytree(ensure("all-MiniLM-L6-v2", "embedder", download=False), model)
    state = tmp_path / "state"
    args = [RELEASE, "--similarity-model", model, "--state-dir", state, "--chunk-pairs", "4", "--no-plots"]
    first = run_json(capsys, *args)
    chunks = sorted((state / ".paraamr" / "evaluate").glob("chunk-*.json"))
    assert len(chunks) > 1 and json.loads((chunks[0].parent / "settings.json").read_text())["models"]
    chunks[-1].unlink()  # as if the run had been killed before its last chunk
    config = (model / "config.json").read_text()
    (model / "config.json").write_text(config.replace("{", '{"retrained": true,', 1))
    assert main(["evaluate", *map(str, args), "--json", "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert f"the similarity model {str(model)!r} has other files than when the run started" in err
    (model / "config.json").write_text(config)
    again = run_json(capsys, *args)
    assert again["semantic_similarity"] == pytest.approx(first["semantic_similarity"], abs=1e-6)


def test_a_finished_evaluation_is_not_reported_again_with_a_changed_similarity_model(capsys, tmp_path):
    """Every chunk committed, then the model retrained in place (here: another layer-norm epsilon):
    --state-dir refuses, --cache-dir scores the pairs again and prints the new model's row. Before,
    both printed the row of the old model from the committed chunks."""
    import shutil

    from paraamr.models.download import ensure

    model = tmp_path / "minilm"
    shutil.copytree(ensure("all-MiniLM-L6-v2", "embedder", download=False), model)
    common = [RELEASE, "--similarity-model", model, "--no-plots"]
    cached, state = [*common, "--cache-dir", tmp_path / "cache"], [*common, "--state-dir", tmp_path / "state"]
    first = run_json(capsys, *cached)["semantic_similarity"]
    assert run_json(capsys, *state)["semantic_similarity"] == pytest.approx(first, abs=1e-6)
    config = json.loads((model / "config.json").read_text())
    (model / "config.json").write_text(json.dumps({**config, "layer_norm_eps": 1e-3}))
    fresh = run_json(capsys, *common)["semantic_similarity"]
    assert abs(fresh - first) > 0.01  # the change moves the scores
    assert main(["evaluate", *map(str, state), "--json", "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert f"the similarity model {str(model)!r} has other files than when the run started" in err
    assert main(["evaluate", *map(str, cached), "--json", "--no-progress"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["semantic_similarity"] == pytest.approx(fresh, abs=1e-6)
    assert "were cached: scoring the pairs again" in err
    assert run_json(capsys, *cached)["semantic_similarity"] == pytest.approx(fresh, abs=1e-6)  # cached anew


def test_shards_merge_when_one_owned_no_chunk(capsys, tmp_path):
    """--shard I/N with more shards than chunks: a shard that owned none (and so loaded no model)
    merges with the others into the row of one run."""
    whole = run_json(capsys, RELEASE, "--chunk-pairs", "4", "--no-plots")
    states = [tmp_path / f"s{i}" for i in range(4)]  # 11 pairs: chunks 0-2, shard 3 owns none
    for i, state in enumerate(states):
        assert main(["evaluate", str(RELEASE), "--chunk-pairs", "4", "--no-plots", "--no-progress",
                     "--shard", f"{i}/4", "--state-dir", str(state)]) == 0  # fmt: skip
    capsys.readouterr()
    merged = run_json(capsys, RELEASE, "--merge", *states, "--no-plots")
    for measure in MEASURES:
        assert merged[measure] == pytest.approx(whole[measure], abs=1e-6)


def test_a_pair_file_with_a_byte_order_mark_reads_its_header_and_first_source(capsys, tmp_path):
    """A CSV saved by Excel starts with a UTF-8 BOM: its header is still a header (before, it was
    scored as a pair, "\\ufefftext" / "para_text") and a headerless file's first source has no BOM."""
    import csv
    import io

    plain = run_json(capsys, RELEASE, "--no-plots")
    for name, header, delimiter in (("p.csv", True, ","), ("p.tsv", False, "\t")):
        body = io.StringIO()
        writer = csv.writer(body, delimiter=delimiter, lineterminator="\n")
        writer.writerows([["text", "para_text"]] * header + [list(pair) for pair in release_pairs()])
        path = tmp_path / name
        path.write_bytes(b"\xef\xbb\xbf" + body.getvalue().encode())
        found = run_json(capsys, path, "--no-plots")
        assert found["pairs"] == plain["pairs"], name
        assert found["semantic_similarity"] == pytest.approx(plain["semantic_similarity"], abs=1e-6), name
