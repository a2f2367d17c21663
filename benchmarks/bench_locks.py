"""Why paraamr.locks is its own small module and not filelock (docs/dev/MAP.md, paraamr/locks.py).

    python benchmarks/bench_locks.py [--rounds N]

Side by side, on the same folder, what a writer and an owner of a dataset folder need:

- **time** of one acquire + release of an exclusive lock, interleaved, median of ``rounds``:
  ``filelock.FileLock`` (the ecosystem's lock, as huggingface_hub uses it, defaults) against
  ``paraamr.locks.folder_lock``;
- **files left** in the folder once every lock is released (a finished ``convert`` must leave a
  folder holding the dataset alone);
- **shared mode**: whether many writers can hold one lock together while an owner is kept out,
  and by what means (filelock's ``ReadWriteLock`` is SQLite; paraamr's is ``flock(LOCK_SH)``).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path


def _time(fn, rounds: int) -> float:
    samples = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def main(rounds: int) -> None:
    import filelock

    from paraamr.locks import folder_lock, writer_lock

    base = Path(tempfile.mkdtemp())
    folders = {name: base / name for name in ("filelock", "paraamr", "paraamr-in-a-run")}
    for folder in folders.values():
        folder.mkdir()
    (folders["paraamr-in-a-run"] / ".paraamr").mkdir()
    (folders["paraamr-in-a-run"] / ".paraamr" / "settings.json").write_text("{}")  # a run's state
    theirs = filelock.FileLock(folders["filelock"] / ".paraamr" / "folder.lock")

    def with_filelock() -> None:
        with theirs:
            pass

    def with_paraamr(folder: Path):
        def lock() -> None:
            with folder_lock(folder, command="bench"):
                pass

        return lock

    runs = {
        "filelock.FileLock": with_filelock,
        "paraamr folder_lock, empty folder (removes its folders)": with_paraamr(folders["paraamr"]),
        "paraamr folder_lock, in a run's folder": with_paraamr(folders["paraamr-in-a-run"]),
    }
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(5):  # interleaved, so all see the same machine
        for name, fn in runs.items():
            times[name].append(_time(fn, rounds // 5))
    with writer_lock(folders["paraamr"], "00000-of-00002"), writer_lock(folders["paraamr"], "00001-of-00002"):
        shared = "two writers held together, an owner refused" if _refused(folders["paraamr"]) else "NO"
    print(f"filelock {filelock.__version__}, {rounds} acquire + release each, interleaved\n")
    print("| lock | µs per acquire + release | files left after release |")
    print("|---|---:|---|")
    left = {
        "filelock.FileLock": folders["filelock"],
        "paraamr folder_lock, empty folder (removes its folders)": folders["paraamr"],
        "paraamr folder_lock, in a run's folder": folders["paraamr-in-a-run"],
    }
    for name, samples in times.items():
        files = sorted(str(p.relative_to(left[name])) for p in left[name].rglob("*") if p.is_file())
        print(f"| {name} | {statistics.median(samples) * 1e6:,.1f} | {', '.join(files) or 'none'} |")
    print(f"\nshared mode: filelock's ReadWriteLock (SQLite); paraamr's flock(LOCK_SH): {shared}")


def _refused(folder: Path) -> bool:
    """Whether another process is refused the folder's own lock."""
    import subprocess
    import sys

    code = "import sys; from paraamr.locks import folder_lock; folder_lock(sys.argv[1], command='bench')"
    return subprocess.run([sys.executable, "-c", code, str(folder)], capture_output=True).returncode != 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2000)
    main(parser.parse_args().rounds)
