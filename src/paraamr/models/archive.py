"""amrlib release archives: safe extraction (no member may land outside its folder) and the model
folder inside, checked for the files amrlib needs.
"""

from __future__ import annotations

import os
import re
import tarfile
from pathlib import Path, PurePosixPath

from paraamr.errors import DISK_ERRNOS, ArchiveRefused, ParaAMRError

__all__ = ["model_dir", "safe_extract"]

#: Weights files of an amrlib model dir: it holds one of them.
_WEIGHTS = ("pytorch_model.bin", "model.safetensors", "model.pt")


def _check_member(member: tarfile.TarInfo, root: str) -> None:
    """Refuse a member that is not a plain file or folder, or would land outside ``root``."""
    name = member.name
    pure = PurePosixPath(name.replace("\\", "/"))
    if pure.is_absolute() or re.match(r"^[A-Za-z]:", name):
        raise ArchiveRefused(f"member {name!r} has an absolute path")
    if ".." in pure.parts:
        raise ArchiveRefused(f"member {name!r} climbs out of the folder (..)")
    if member.issym() or member.islnk():
        raise ArchiveRefused(
            f"member {name!r} is a {'symbolic' if member.issym() else 'hard'} link to {member.linkname!r} "
            "(model archives hold only files and folders)"
        )
    if not (member.isfile() or member.isdir()):
        raise ArchiveRefused(f"member {name!r} is a device, FIFO or other special file")
    target = os.path.realpath(os.path.join(root, name))
    if os.path.commonpath([root, target]) != root:
        raise ArchiveRefused(f"member {name!r} resolves to {target}, outside the folder")


def safe_extract(archive: str | Path, dest: str | Path, name: str | None = None) -> None:
    """Extract gzipped tar ``archive`` (``name`` in messages) into the new folder ``dest``, refused
    whole before anything is written when a member is a link or special file or lands outside
    ``dest`` (our check closes the ``data`` filter's bypasses, CVE-2025-4517 and relatives).

    >>> import io, tempfile
    >>> buf = io.BytesIO()
    >>> with tarfile.open(fileobj=buf, mode="w:gz") as tar:
    ...     link = tarfile.TarInfo("model/evil"); link.type = tarfile.SYMTYPE; link.linkname = "/etc"
    ...     tar.addfile(link)
    >>> archive = Path(tempfile.mkdtemp()) / "x.tar.gz"; _ = archive.write_bytes(buf.getvalue())
    >>> safe_extract(archive, archive.parent / "out")
    Traceback (most recent call last):
    ...
    paraamr.errors.ArchiveRefused: archive x.tar.gz refused: member 'model/evil' is a symbolic ...
    """
    archive, dest = Path(archive), Path(dest)
    name = name or archive.name
    try:
        with tarfile.open(archive, "r:gz") as tar:
            members = tar.getmembers()  # reads to the end: a truncated gzip fails here
            dest.mkdir(parents=True, exist_ok=True)
            root = os.path.realpath(dest)
            for member in members:
                try:
                    _check_member(member, root)
                except ArchiveRefused as err:
                    raise ArchiveRefused(f"archive {name} refused: {err}") from None
            tar.extractall(dest, members=members, filter="data")
    except (OSError, tarfile.TarError, EOFError) as err:
        if isinstance(err, OSError) and err.errno in DISK_ERRNOS:  # the disk where it is unpacked
            raise
        raise ParaAMRError(f"archive {name} is corrupt or incomplete: {err}") from err


def model_dir(name: str, dest: Path) -> Path:
    """The single top folder in ``dest`` of the archive ``name``, checked for the files amrlib needs."""
    tops = [p for p in dest.iterdir() if p.is_dir()]
    if len(tops) != 1:
        raise ParaAMRError(f"archive {name} should hold one model folder, found {len(tops)}")
    model = tops[0]
    missing = [f for f in ("amrlib_meta.json", "config.json") if not (model / f).is_file()]
    if not any((model / f).is_file() for f in _WEIGHTS):
        missing.append(" or ".join(_WEIGHTS))
    if missing:
        raise ParaAMRError(f"archive {name} lacks {', '.join(missing)} in {model.name}/")
    return model
