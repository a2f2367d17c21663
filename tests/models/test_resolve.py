"""catalog + resolve: one table of defaults, where models are, make_tiny, and no code run from a
model folder unless trusted (amrlib_meta allow-list)."""

from __future__ import annotations

import ast
import inspect
import json
import shutil
from pathlib import Path

import pytest

from paraamr.cli import main
from paraamr.errors import ModelNotFoundError, ParaAMRError
from paraamr.models import catalog
from paraamr.models.download import ensure
from paraamr.models.embedder import Embedder
from paraamr.models.fast import fingerprint as _fingerprint
from paraamr.models.lm import PerplexityScorer, _gguf_dir
from paraamr.models.parser import Parser
from paraamr.models.realizer import Realizer
from paraamr.models.resolve import amrlib_meta, base_tokenizer, resolve
from paraamr.models.tiny import make_tiny


def test_classes_read_their_defaults_from_the_catalog():
    """Issue 11: one table; the LM is the paper's GPT-2, not SmolLM2."""
    for cls, kind in (
        (Parser, "parser"),
        (Realizer, "realizer"),
        (PerplexityScorer, "lm"),
        (Embedder, "embedder"),
    ):
        params = inspect.signature(cls).parameters
        assert params["model"].default == catalog.DEFAULTS[kind], cls
        assert params["batch_size"].default == catalog.BATCH_SIZES[kind], cls
    assert catalog.DEFAULTS["lm"] == "gpt2" and catalog.OFFLINE_LM == "smollm2"
    assert catalog.check_kind("realizer") == "realizer"
    for old in ("speller", "generator"):  # "generator", the realizer's name before it was released, too
        with pytest.raises(ValueError, match="unknown model kind"):
            catalog.check_kind(old)


def test_release_url_is_overridable(monkeypatch):
    release = catalog.AMRLIB_MODELS["parse_xfm_bart_large"]
    assert release.url == (
        "https://github.com/bjascob/amrlib-models/releases/download/"
        "parse_xfm_bart_large-v0_1_0/model_parse_xfm_bart_large-v0_1_0.tar.gz"
    )
    assert catalog.AMRLIB_MODELS["generate_t5wtense"].url.endswith(
        "model_generate_t5wtense-v0_1_0/model_generate_t5wtense-v0_1_0.tar.gz"
    )
    monkeypatch.setenv("PARAAMR_RELEASE_URL", "http://127.0.0.1:9/mirror/")
    assert (
        release.url
        == "http://127.0.0.1:9/mirror/parse_xfm_bart_large-v0_1_0/model_parse_xfm_bart_large-v0_1_0.tar.gz"
    )
    assert {m.kind for m in catalog.AMRLIB_MODELS.values()} == {"parser", "realizer"}


def test_make_tiny_writes_real_formats(tiny_models):
    assert set(tiny_models) == {"parser", "realizer", "lm"}
    for kind in ("parser", "realizer"):
        meta = json.loads((tiny_models[kind] / "amrlib_meta.json").read_text())
        assert meta["inference_class"] == "Inference"
        assert meta["model_type"] == {"parser": "stog", "realizer": "gtos"}[kind]
        assert amrlib_meta(tiny_models[kind], kind) == meta  # amrlib's own code: accepted
        config = json.loads((tiny_models[kind] / "config.json").read_text())
        task = {"parser": "parse_amr", "realizer": "translation_amr_to_text"}[kind]
        params = config["task_specific_params"][task]
        assert {"model_name_or_path", "max_in_len", "max_out_len"} <= set(params)
        assert (tiny_models[kind] / "tokenizer.json").is_file()
    assert json.loads((tiny_models["lm"] / "config.json").read_text())["model_type"] == "gpt2"


def test_make_tiny_is_deterministic_per_seed(tmp_path, tiny_models, capsys):
    # through the CLI, so `paraamr models make-tiny` is covered too
    assert main(["models", "make-tiny", str(tmp_path / "again")]) == 0
    out = capsys.readouterr().out
    assert "parser\t" in out and "realizer\t" in out
    for kind in ("parser", "realizer", "lm"):
        again = tmp_path / "again" / kind / "model.safetensors"
        assert again.read_bytes() == (tiny_models[kind] / "model.safetensors").read_bytes(), kind
    other = make_tiny(tmp_path / "seed1", seed=1)
    assert (
        other["lm"].joinpath("model.safetensors").read_bytes()
        != (tiny_models["lm"] / "model.safetensors").read_bytes()
    )


def test_make_tiny_replaces_no_model_without_overwrite(tmp_path, capsys):
    """DIR/parser may be a model of the user's: make-tiny wrote its files over it."""
    mine = tmp_path / "models" / "parser"
    mine.mkdir(parents=True)
    (mine / "model.safetensors").write_bytes(b"weights trained for days")
    (tmp_path / "models" / "lm").mkdir()  # an empty folder is no model
    assert main(["models", "make-tiny", str(tmp_path / "models")]) == 1
    assert f"{mine}: exists (pass --overwrite to replace it)" in capsys.readouterr().err
    assert (mine / "model.safetensors").read_bytes() == b"weights trained for days"
    assert not (tmp_path / "models" / "realizer").exists()  # refused before writing anything
    assert main(["models", "make-tiny", str(tmp_path / "models"), "--overwrite"]) == 0
    assert (mine / "config.json").is_file() and (mine / "model.safetensors").stat().st_size > 1000


def test_make_tiny_stopped_midway_leaves_no_model_and_runs_again(tmp_path, monkeypatch, capsys):
    """Before: a make-tiny killed after the parser was written left ``DIR/parser``, and the same
    command was then refused ("DIR/parser: exists (pass --overwrite ...)")."""
    from paraamr.models import tiny
    from paraamr.signals import Interrupted

    def stopped(folder):
        raise Interrupted()

    monkeypatch.setattr(tiny, "_lm", stopped)
    with pytest.raises(Interrupted):
        make_tiny(tmp_path / "models")
    assert list((tmp_path / "models").iterdir()) == []  # parser and realizer were built, not put in place
    monkeypatch.undo()
    killed = tmp_path / "models" / ".parser.4242-0a1b2c3d.tmp"  # what a kill -9 leaves
    killed.mkdir()
    (killed / "config.json").write_text("{}")
    assert main(["models", "make-tiny", str(tmp_path / "models")]) == 0
    assert sorted(p.name for p in (tmp_path / "models").iterdir()) == ["lm", "parser", "realizer"]


def test_make_tiny_overwrite_keeps_the_old_models_until_the_new_ones_are_made(tmp_path, monkeypatch, capsys):
    """Before: ``--overwrite`` deleted DIR/parser, DIR/realizer and DIR/lm before building, so a
    failure (a full disk, a kill) lost them, and a link as DIR/lm stopped it midway ("Cannot call
    rmtree on a symbolic link"); DIR a file was said to "already exist"."""
    from paraamr.models import tiny
    from paraamr.signals import Interrupted

    models = tmp_path / "models"
    (models / "parser").mkdir(parents=True)
    (models / "parser" / "w.bin").write_text("mine")
    (tmp_path / "elsewhere").mkdir()
    (models / "lm").symlink_to(tmp_path / "elsewhere")

    def stopped(folder):
        raise Interrupted()

    monkeypatch.setattr(tiny, "_lm", stopped)
    assert main(["models", "make-tiny", str(models), "--overwrite"]) == Interrupted().status
    assert (models / "parser" / "w.bin").read_text() == "mine" and (models / "lm").is_symlink()
    monkeypatch.undo()
    assert main(["models", "make-tiny", str(models), "--overwrite"]) == 0
    assert not (models / "parser" / "w.bin").exists() and not (models / "lm").is_symlink()
    assert (tmp_path / "elsewhere").is_dir()  # the link was replaced, its target left alone
    (tmp_path / "afile").write_text("x")
    capsys.readouterr()
    assert main(["models", "make-tiny", str(tmp_path / "afile")]) == 1
    assert capsys.readouterr().err == f"paraamr models make-tiny: {tmp_path / 'afile'}: not a folder\n"


def test_production_modules_do_not_import_tiny():
    """Issue 11: tiny-model code is reached only through paraamr.models.tiny (doctests and the
    make-tiny command, which imports it inside its function, aside)."""
    src = Path(__file__).resolve().parents[2] / "src" / "paraamr"
    for path in src.rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                names = [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            if any(n.startswith("paraamr.models.tiny") for n in names):
                in_function = (
                    path.name == "models.py" and path.parent.name == "commands" and node.col_offset > 0
                )
                assert in_function, f"{path}:{node.lineno} imports tiny"


def test_resolve_local_and_packaged(tiny_models, tmp_path):
    assert resolve(tiny_models["parser"], "parser") == tiny_models["parser"]
    assert resolve(str(tiny_models["lm"]), "lm") == tiny_models["lm"]
    gguf = resolve("smollm2", "lm")
    assert gguf.suffix == ".gguf" and gguf.is_file()
    for name, kind in (
        ("all-MiniLM-L6-v2", "embedder"),
        ("sentence-transformers/all-MiniLM-L6-v2", "embedder"),
        ("all-MiniLM-L6-v2", "quality"),
    ):
        folder = resolve(name, kind)
        assert (folder / "model.safetensors").is_file() and (folder / "modules.json").is_file()
    # the quality model is a kind like the others: a folder that is no model is refused
    (tmp_path / "empty").mkdir()
    with pytest.raises(
        ModelNotFoundError, match=r"not a sentence-transformers model folder .*paraamr quality train"
    ):
        resolve(tmp_path / "empty", "quality")
    # an empty folder or a file where a model folder belongs: one clear error, before any loading
    for kind in ("parser", "realizer", "lm"):
        with pytest.raises(ModelNotFoundError, match=f"is not a {kind} model folder"):
            resolve(tmp_path / "empty", kind)
    with pytest.raises(ModelNotFoundError, match="is not a sentence-transformers model folder"):
        resolve(tmp_path / "empty", "embedder")
    (tmp_path / "weights.bin").write_bytes(b"x")
    with pytest.raises(ModelNotFoundError, match=r"is a file, not a model folder or a \.gguf file"):
        resolve(tmp_path / "weights.bin", "lm")
    with pytest.raises(ModelNotFoundError, match="is a file, not a model folder"):
        resolve(tmp_path / "weights.bin", "parser")
    with pytest.raises(ModelNotFoundError, match="paraamr quality train"):
        resolve("./no/such/quality-model", "quality")


def test_offline_errors_name_model_path_and_command(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelNotFoundError) as err:
        resolve("generate_t5wtense", "realizer", cache_dir=tmp_path)
    msg = str(err.value)
    assert "'generate_t5wtense'" in msg and str(tmp_path / "models" / "generate_t5wtense") in msg
    assert f"paraamr models download generate_t5wtense --cache-dir {tmp_path}" in msg
    with pytest.raises(ModelNotFoundError, match="not a parser model"):
        resolve("generate_t5wtense", "parser", cache_dir=tmp_path)
    with pytest.raises(ModelNotFoundError) as err:
        resolve("no-such-org/no-such-model", "lm", cache_dir=tmp_path)
    assert "'no-such-org/no-such-model'" in str(err.value) and "Hub cache" in str(err.value)
    assert "paraamr models download no-such-org/no-such-model --kind lm" in str(err.value)
    with pytest.raises(ModelNotFoundError, match="does not exist"):
        resolve("./no/such/dir", "parser")
    # an amrlib tarball ships no tokenizer: the base tokenizer must be in the cache
    folder = tmp_path / "model_parse_xfm_bart_base-v0_1_0"
    folder.mkdir()
    (folder / "amrlib_meta.json").write_text(json.dumps({"base_model": "facebook/bart-base"}))
    with pytest.raises(ModelNotFoundError) as err:
        base_tokenizer(folder, cache_dir=tmp_path)
    assert "'facebook/bart-base'" in str(err.value)
    assert str(tmp_path / "tokenizers" / "facebook--bart-base") in str(err.value)


def test_cli_path_reports_missing_model(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    argv = ["models", "path", "parse_xfm_bart_large", "--kind", "parser", "--cache-dir", str(tmp_path)]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "paraamr models download parse_xfm_bart_large" in err and len(err.strip().splitlines()) == 1
    assert main(["models", "path", "smollm2"]) == 0  # the catalog knows its kind
    assert capsys.readouterr().out.strip().endswith(".gguf")
    assert main(["models", "path", "all-MiniLM-L6-v2"]) == 2
    assert "'all-MiniLM-L6-v2' is of kinds embedder and quality: give its --kind" in capsys.readouterr().err
    assert main(["models", "path", "org/mine"]) == 2
    assert "'org/mine' is not in the catalog (paraamr models list): give its" in capsys.readouterr().err
    assert main(["models", "list", "--kind", "realizer", "--cache-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "generate_t5wtense" in out and "realizer [default]" in out
    assert main(["models", "list", "--kind", "lm", "--cache-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "gpt2" in out and "lm [default]" in out and "MB)" in out  # smollm2's size on disk


def test_the_installed_mpnet_is_the_embedder_it_is(tmp_path, monkeypatch, capsys):
    """The install script's all-mpnet-base-v2 (``<cache>/models/all-mpnet-base-v2``, which the
    quality code uses before the Hub's): listed on its catalog row, not as "-" there and an
    "amrlib" model "fetched with --url" below; ``models path`` and ``models rm`` of its Hub id find
    it (before: "not on disk", and "nothing to remove" beside 439 MB listed)."""
    from paraamr.commands.models import model_rows
    from paraamr.quality.mpnet import MPNET_HUB, installed_dir, mpnet_dir

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    folder = installed_dir(tmp_path)
    folder.mkdir(parents=True)
    (folder / "modules.json").write_text("[]")
    assert mpnet_dir(download=False, cache=tmp_path) == folder
    rows = model_rows(str(tmp_path))
    assert [r[1:3] for r in rows if r[0] == MPNET_HUB] == [("embedder", f"{folder} (2 B)")]
    assert not [r for r in rows if r[1] == "amrlib"]
    assert main(["models", "path", MPNET_HUB, "--cache-dir", str(tmp_path)]) == 0
    assert capsys.readouterr().out == f"{folder}\n"
    assert main(["models", "rm", MPNET_HUB, "--cache-dir", str(tmp_path)]) == 0
    assert capsys.readouterr().out == f"removed {folder}\n" and not folder.exists()


def test_hub_id_resolves_from_the_hub_cache_offline(tmp_path, tiny_models, monkeypatch):
    """A Hub id already in huggingface_hub's cache (its documented layout) resolves offline."""
    import huggingface_hub.constants

    snapshot = tmp_path / "models--someone--tiny-lm" / "snapshots" / "0123abcd"
    shutil.copytree(tiny_models["lm"], snapshot)
    (tmp_path / "models--someone--tiny-lm" / "refs").mkdir()
    (tmp_path / "models--someone--tiny-lm" / "refs" / "main").write_text("0123abcd")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("PARAAMR_CACHE", str(tmp_path / "cache"))  # its converted copy: not in the user's
    assert resolve("someone/tiny-lm", "lm") == snapshot
    [value] = PerplexityScorer("someone/tiny-lm").perplexity(["the boy"])
    assert value > 1


def test_gguf_copy_is_shared_by_content(tmp_path):
    """Two installs of one GGUF file (other folder, other mtime) share one float32 copy; another
    content gets its own."""
    import os

    a, b = tmp_path / "one" / "m.gguf", tmp_path / "two" / "m.gguf"
    for path in (a, b):
        path.parent.mkdir()
        path.write_bytes(b"GGUF" + bytes(range(256)) * 50)
    os.utime(b, (1, 1))
    copies = tmp_path / "cache" / "gguf"
    copies.mkdir(parents=True)
    assert not list(copies.iterdir())
    done = copies / f"m-{_fingerprint(a)}"
    done.mkdir()  # as if `a` had been converted
    assert _gguf_dir(a, tmp_path / "cache") == done
    assert _gguf_dir(b, tmp_path / "cache") == done  # no second conversion
    b.write_bytes(b"GGUF" + bytes(range(256)) * 49)
    assert _fingerprint(b) != _fingerprint(a)  # another content: its own copy
    assert [p.name for p in copies.iterdir()] == [done.name]



def test_a_large_file_changed_only_inside_gets_another_key(tmp_path):
    """A model fine-tuned with its embeddings frozen can differ from its base only in the middle of
    its file: the key of a converted copy (CTranslate2, GGUF) reads every byte, so the copy of the
    old weights is not reused (a digest of the first and last MiB of a file over 64 MiB was)."""
    from paraamr.tasks import FULL_HASH_BYTES

    size = FULL_HASH_BYTES + (4 << 20)
    a, b = tmp_path / "base.safetensors", tmp_path / "tuned.safetensors"
    a.write_bytes(bytes(size))
    b.write_bytes(bytes(size // 2) + b"\1" + bytes(size - size // 2 - 1))
    assert _fingerprint(a) != _fingerprint(b)
    b.write_bytes(bytes(size))
    assert _fingerprint(a) == _fingerprint(b)  # the same bytes: the same key, wherever they are

# -- code from model folders (issue 14 item 1) ---------------------------------------------------

HUBCONF = """
from pathlib import Path

def evil(*args, **kwargs):
    Path({marker!r}).write_text("code from the model folder ran")
    raise RuntimeError("hostile hubconf ran")
"""


def _hostile(source: Path, folder: Path, marker: Path) -> Path:
    """A copy of an amrlib model dir whose meta makes amrlib call torch.hub.load on a hubconf.py."""
    shutil.copytree(source, folder)
    meta = json.loads((folder / "amrlib_meta.json").read_text())
    meta.update(
        inference_module="torch.hub", inference_class="load", model_fn="evil", kwargs={"source": "local"}
    )
    (folder / "amrlib_meta.json").write_text(json.dumps(meta))
    (folder / "hubconf.py").write_text(HUBCONF.format(marker=str(marker)))
    return folder


@pytest.mark.parametrize("cls, kind", [(Parser, "parser"), (Realizer, "realizer")])
def test_model_folder_code_is_refused_unless_trusted(cls, kind, tiny_models, tmp_path):
    marker = tmp_path / "pwned"
    folder = _hostile(tiny_models[kind], tmp_path / "hostile", marker)
    with pytest.raises(ParaAMRError) as err:
        cls(folder)
    assert "torch.hub.load" in str(err.value) and "--trust-remote-code" in str(err.value)
    assert not marker.exists()  # nothing ran
    with pytest.raises(ParaAMRError, match="--trust-remote-code"):
        ensure(folder, kind)  # the check a run makes before loading anything
    assert not marker.exists()
    # trusted, amrlib runs what the meta names (proof that the folder above was really hostile)
    with pytest.raises(RuntimeError, match="hostile hubconf ran"):
        cls(folder, trust_remote_code=True)
    assert marker.read_text() == "code from the model folder ran"


def test_a_folder_that_is_no_amrlib_model_is_refused_before_anything_loads(tiny_models):
    """Before: amrlib's "No meta-data (amrlib_meta.json or hard-coded) available" when the model
    loaded (in a run: after it had started)."""
    for cls, kind in ((Parser, "parser"), (Realizer, "realizer")):
        with pytest.raises(ModelNotFoundError, match=f"{kind} model .*: .* is not an amrlib model "
                           r"\(no amrlib_meta.json; its config.json is a gpt2 model\)"):  # fmt: skip
            cls(tiny_models["lm"])
        with pytest.raises(ModelNotFoundError, match="is not an amrlib model"):
            ensure(tiny_models["lm"], kind)  # the check a run makes before loading anything


def test_a_legacy_amrlib_folder_known_by_its_weights_is_taken_for_its_own_kind_only(tmp_path, monkeypatch):
    """amrlib's first T5 realizer has no amrlib_meta.json: amrlib knows it by the md5 of its
    weights' first chunk. Before, such a folder passed the check as a parser too. (Its weights
    cannot be made here: amrlib's hash function is given the folder's file and answers the
    published sum, so amrlib's own recognition runs.)"""
    import amrlib.models.model_factory as factory

    folder = tmp_path / "model_generate_t5-v0_1_0"
    folder.mkdir()
    (folder / "pytorch_model.bin").write_bytes(b"t5 weights")
    known = {str(folder / "pytorch_model.bin"): "786e3f9d33a6981ffae7c5f42a935cc9"}
    monkeypatch.setattr(factory, "md5sum", lambda path, **_: known.get(str(path), "0" * 32))
    ensure(folder, "realizer")  # its own kind: taken
    with pytest.raises(ParaAMRError, match=r"parser model .* is an amrlib realizer model, not a parser"):
        ensure(folder, "parser")


def test_meta_of_the_other_kind_or_with_a_weights_path_is_refused(tiny_models, tmp_path):
    with pytest.raises(ParaAMRError, match="is an amrlib realizer model, not a parser model"):
        Parser(tiny_models["realizer"])
    folder = shutil.copytree(tiny_models["parser"], tmp_path / "escape")
    meta = json.loads((folder / "amrlib_meta.json").read_text())
    (folder / "amrlib_meta.json").write_text(json.dumps({**meta, "model_fn": "../../elsewhere.bin"}))
    with pytest.raises(ParaAMRError, match="not a file name inside the model folder"):
        Parser(folder)
    (folder / "amrlib_meta.json").write_text("{not json")
    with pytest.raises(ParaAMRError, match="not valid JSON"):
        Parser(folder)
