"""paraamr.locks across real processes: writers share a folder, an owner excludes them all, a
killed holder frees its lock, the holder is named, no lock file outlives its holders, and the
removal of lock files never lets two owners in (a stress test of the inode check)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from paraamr.errors import FolderLocked
from paraamr.locks import busy_writers, folder_lock, writer_lock

HOLD = """
import sys, time
from paraamr.locks import folder_lock, writer_lock
folder, kind, name = sys.argv[1:4]
lock = writer_lock(folder, name) if kind == "writer" else folder_lock(folder, command=name)
print("held", flush=True)
time.sleep(120)
"""


def _holder(folder: Path, kind: str, name: str) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(folder), kind, name], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout.readline().strip() == "held"
    return proc


@pytest.fixture
def stop():
    procs: list[subprocess.Popen] = []
    yield procs.append
    for proc in procs:
        proc.kill()
        proc.wait()


def test_writers_share_a_folder_and_the_same_writer_is_refused(tmp_path, stop):
    other = _holder(tmp_path, "writer", "00001-of-00002")
    stop(other)
    refused = f"writer 00001-of-00002 is running already \\(pid {other.pid} on"
    with writer_lock(tmp_path, "00000-of-00002"), pytest.raises(FolderLocked, match=refused):
        writer_lock(tmp_path, "00001-of-00002")  # (the other writer of the run was taken: fine)
    assert busy_writers(tmp_path) == [("00001-of-00002", f"pid {other.pid} on host {os.uname().nodename}, "
                                       "paraamr generate")]  # fmt: skip


def test_an_owner_excludes_writers_and_writers_exclude_an_owner(tmp_path, stop):
    writer = _holder(tmp_path, "writer", "00000-of-00001")
    stop(writer)
    with pytest.raises(FolderLocked, match=f"being written \\(writer 00000-of-00001\\) by pid {writer.pid}"):
        folder_lock(tmp_path, command="convert")
    writer.kill()
    writer.wait()
    owner = _holder(tmp_path, "folder", "convert")
    stop(owner)
    with pytest.raises(FolderLocked, match=f"locked by pid {owner.pid} on host .*, paraamr convert"):
        writer_lock(tmp_path, "00000-of-00001")
    with pytest.raises(FolderLocked, match=f"locked by pid {owner.pid}"):
        folder_lock(tmp_path, command="finalize")


def test_a_killed_holder_frees_the_folder_and_nothing_is_left(tmp_path, stop):
    writer = _holder(tmp_path, "writer", "00000-of-00001")
    stop(writer)
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait()
    assert (tmp_path / ".paraamr" / "locks" / "writer-00000-of-00001.lock").exists()  # its file stays
    with folder_lock(tmp_path, command="convert"):  # ... but not its lock, and the probe removes it
        pass
    assert list(tmp_path.iterdir()) == []


def test_a_run_that_finalizes_itself_keeps_its_writers(tmp_path):
    """A process holding writer locks may take the folder's own lock (the end of its run); its
    writers get their shared holds back after, so other processes still see them."""
    with writer_lock(tmp_path, "00000-of-00001"):
        with folder_lock(tmp_path, command="finish"):
            pass
        code = "import sys; from paraamr.locks import busy_writers; print(busy_writers(sys.argv[1]))"
        probe = subprocess.run(
            [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True
        )
        assert "00000-of-00001" in probe.stdout
    assert list(tmp_path.iterdir()) == []


STRESS = """
import sys
from pathlib import Path
from paraamr.locks import folder_lock
folder, rounds = Path(sys.argv[1]), int(sys.argv[2])
counter, inside = folder / "counter", folder / "inside"
for _ in range(rounds):
    with folder_lock(folder, command="stress", wait=60):
        assert not inside.exists(), "two owners at once"
        inside.touch()
        counter.write_text(str(int(counter.read_text() or 0) + 1))
        inside.unlink()
"""


def test_owners_never_overlap_while_lock_files_come_and_go(tmp_path):
    """Each release removes the lock file when no one else holds it, and acquirers race for it:
    four processes taking the folder lock 150 times each never hold it together."""
    (tmp_path / "counter").write_text("0")
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", STRESS, str(tmp_path), "150"], stderr=subprocess.PIPE, text=True
        )
        for _ in range(4)
    ]
    t0 = time.monotonic()
    errors = [proc.communicate(timeout=300)[1] for proc in procs]
    assert all(proc.returncode == 0 for proc in procs), errors
    assert (tmp_path / "counter").read_text() == "600", time.monotonic() - t0


@pytest.mark.timeout(30)
def test_a_folder_that_cannot_be_made_fails_at_once():
    """Under /proc no folder can be made (ENOENT every time): the lock gives that error after a few
    tries instead of retrying forever, as it does when another holder removed its folder."""
    started = time.monotonic()
    with pytest.raises(FileNotFoundError):
        folder_lock("/proc/paraamr/out", command="test")
    assert time.monotonic() - started < 5
