"""paraamr.atomic: what its folders hold gets the permissions the umask gives a new file."""

from __future__ import annotations

import os
import stat

import pytest

from paraamr.atomic import atomic_dir


@pytest.fixture
def umask():
    """Set the process's umask for a test, then put the old one back."""
    old = os.umask(0o022)
    yield os.umask
    os.umask(old)


def _mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize(
    ("mask", "file", "script", "folder"), [(0o022, 0o644, 0o755, 0o755), (0o077, 0o600, 0o700, 0o700)]
)
def test_a_folder_s_files_get_the_umask_s_permissions(umask, tmp_path, mask, file, script, folder):
    umask(mask)
    with atomic_dir(tmp_path / "model") as tmp:
        os.close(os.open(tmp / "weights.bin", os.O_CREAT | os.O_WRONLY, 0o600))  # as transformers writes
        (tmp / "sub").mkdir(mode=0o700)
        os.close(os.open(tmp / "sub" / "run.sh", os.O_CREAT | os.O_WRONLY, 0o700))
    out = tmp_path / "model"
    assert (_mode(out / "weights.bin"), _mode(out / "sub" / "run.sh")) == (file, script)
    assert (_mode(out), _mode(out / "sub")) == (folder, folder)


def test_safetensors_weights_are_readable_by_the_group_and_others(umask, tmp_path):
    """safetensors (under transformers' ``save_pretrained``) writes weights at 0600 whatever the umask:
    a model folder shared on a cluster (a converted copy, a quality model) could not be read by its
    other users."""
    import numpy as np
    from safetensors.numpy import save_file

    weights = {"w": np.zeros(2, dtype=np.float32)}
    save_file(weights, str(tmp_path / "plain.safetensors"))
    with atomic_dir(tmp_path / "model") as tmp:
        save_file(weights, str(tmp / "model.safetensors"))
        (tmp / "config.json").write_text("{}")
    assert _mode(tmp_path / "plain.safetensors") == 0o600  # safetensors' own, as measured
    saved = tmp_path / "model"
    assert _mode(saved / "model.safetensors") == _mode(saved / "config.json") == 0o644


def test_a_writer_s_stale_temp_files_are_its_own_not_a_longer_name_s(tmp_path):
    """Before: starting `convert ... x.jsonl` deleted the temporary file of a `convert ... x.jsonl.gz`
    still writing beside it (`.x.jsonl.*.tmp` matched `.x.jsonl.gz.PID-RANDOM.tmp`)."""
    from paraamr.atomic import remove_temps, temp_name

    mine, other = temp_name(tmp_path / "x.jsonl"), temp_name(tmp_path / "x.jsonl.gz")
    mine.write_text("half"), other.write_text("being written")
    assert remove_temps(tmp_path / "x.jsonl") == 1
    assert not mine.exists() and other.read_text() == "being written"


def test_new_folders_removes_only_the_folders_it_made_and_left_empty(tmp_path, monkeypatch):
    """Before: ``x/../kept`` counted ``kept`` as made (``x`` was missing), and a failed export into
    ``x/../kept/o.csv`` deleted the user's empty folder ``kept``."""
    from paraamr.atomic import new_folders

    monkeypatch.chdir(tmp_path)
    (tmp_path / "kept").mkdir()
    with pytest.raises(OSError), new_folders("x/../kept/sub"):
        os.makedirs("x/../kept/sub")
        raise OSError("failed")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept"] and not any((tmp_path / "kept").iterdir())
    with new_folders("a/b"):  # written into: kept
        os.makedirs("a/b")
        (tmp_path / "a" / "b" / "f").write_text("x")
    assert (tmp_path / "a" / "b" / "f").is_file()


def test_an_error_about_a_lock_in_a_folder_names_the_folder(tmp_path):
    """Before: ``stats --plots DIR`` onto a read-only DIR said ``DIR/.plots.lock: read-only file
    system``, a file the user never made; a folder above keeps its own name."""
    import errno

    from paraamr.atomic import named_errors

    folder = tmp_path / "plots"
    for inside, said in ((folder / ".plots.lock", str(folder)), (tmp_path, str(tmp_path))):
        with pytest.raises(OSError) as raised, named_errors(folder):
            raise OSError(errno.EROFS, "Read-only file system", str(inside))
        assert raised.value.filename == said
