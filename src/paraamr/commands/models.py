"""``paraamr models list|download|path|rm|make-tiny``: where the model stages' weights come from."""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
from pathlib import Path
from typing import Any

from paraamr.errors import InputError
from paraamr.models.catalog import KINDS
from paraamr.network import HELP as HUB_HELP
from paraamr.options import SEED, folder_text, not_a_folder, number, path_text


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``models`` and its subcommands."""
    parser = subparsers.add_parser(
        "models", help="list, download, locate and remove models; write tiny test models"
    )
    sub = parser.add_subparsers(dest="models_command", metavar="SUBCOMMAND", required=True)
    cache = argparse.ArgumentParser(add_help=False)
    cache.add_argument(
        "--cache-dir", type=folder_text, help="model cache (default: $PARAAMR_CACHE or ~/.cache/paraamr)"
    )

    p = sub.add_parser(
        "list", parents=[cache], help="known models, their defaults, where and how big on disk"
    )
    p.add_argument("--kind", choices=KINDS, help="only models of this kind")
    p.set_defaults(func=_list)

    p = sub.add_parser(
        "download",
        parents=[cache],
        help="fetch an amrlib release (and its base tokenizer) or a Hub model into the cache",
        description="Fetch an amrlib release (and its base tokenizer) or a Hub model into the cache. "
        f"{HUB_HELP}; a release tarball is fetched with a 60 s timeout and 3 retries.",
    )
    p.add_argument("name", help="amrlib release name (see `paraamr models list`) or Hub id")
    p.add_argument("--kind", choices=KINDS, help="kind of a Hub model (default: lm)")
    p.add_argument("--url", help="download an amrlib model tarball from this URL instead, as NAME")
    p.add_argument(
        "--md5", type=_md5, help="expected md5 of the tarball (default: the release's published sum)"
    )
    p.add_argument("--no-tokenizer", action="store_true", help="skip fetching the base tokenizer")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_download)

    p = sub.add_parser("path", parents=[cache], help="print where a model is on disk (exit 1 if nowhere)")
    p.add_argument("name", help="model name, Hub id or path")
    p.add_argument("--kind", choices=KINDS, help="its kind (default: the catalog's, for a model it names)")
    p.set_defaults(func=_path)

    p = sub.add_parser("rm", parents=[cache], help="delete a model and its converted copies to free space")
    p.add_argument(
        "name",
        help="amrlib release or --url name, Hub id, or a packaged model (its float32 and CTranslate2 copies)",
    )
    p.add_argument("--kind", choices=KINDS, help="only the model of this kind")
    p.set_defaults(func=_rm)

    p = sub.add_parser("make-tiny", help="write tiny random-weight models (DIR/parser, realizer, lm)")
    p.add_argument("dir", type=path_text, help="output folder")
    p.add_argument("--seed", type=number(**SEED), default=0, help="random seed (default: 0)")
    p.add_argument("--overwrite", action="store_true", help="replace DIR/parser, realizer and lm")
    p.set_defaults(func=_make_tiny)


def _md5(text: str) -> str:
    """``--md5``'s value: 32 hexadecimal digits (checked before the download, not after it).

    >>> _md5("D41D8CD98F00B204E9800998ECF8427E")
    'd41d8cd98f00b204e9800998ecf8427e'
    """
    if not re.fullmatch(r"[0-9a-fA-F]{32}", text):
        raise argparse.ArgumentTypeError(f"{text!r} is not an md5 sum (32 hexadecimal digits)")
    return text.lower()


def _size(n: int) -> str:
    """Bytes for people: ``1.4 GB``, ``91 MB``.

    >>> _size(1_400_000_000), _size(90_868_376), _size(0)
    ('1.4 GB', '91 MB', '0 B')
    """
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}" if n < 10 * scale else f"{n / scale:.0f} {unit}"
    return f"{n} B"


def _on_disk(path: Path) -> str:
    from paraamr.models.resolve import disk_size

    return f"{path} ({_size(disk_size(path))})"


def _list(args: argparse.Namespace) -> int:
    rows = model_rows(args.cache_dir, args.kind)
    width = max(len(r[0]) for r in rows)
    kind_width = max(len(r[1]) for r in rows)
    for name, kind, where, about in rows:
        pad = " " * (width + kind_width + 4)
        print(f"{name:<{width}}  {kind:<{kind_width}}  {about}\n{pad}on disk: {where}")
    return 0


#: What ``models list`` says of a model's CTranslate2 copy.
COPY = "CTranslate2 copy (made on first use)"
#: What a GGUF file's float32 copy (:func:`paraamr.models.lm._gguf_dir`) is called in the list.
FLOAT32_COPY = "float32 copy of the GGUF file (made on first use)"


def model_rows(cache_dir: str | None = None, kind: str | None = None) -> list[tuple[str, str, str, str]]:
    """``(name, kind, where on disk or "-", about)`` of every known model of ``kind`` (default: all)."""
    from paraamr.errors import ModelNotFoundError
    from paraamr.models import catalog
    from paraamr.models.lm import float32_copies
    from paraamr.models.resolve import cache_root, resolve

    rows = []
    for each in (catalog.check_kind(kind),) if kind else catalog.KINDS:
        for name in catalog.names(each):
            floats, copies = [], []
            try:
                path = resolve(name, each, cache_dir=cache_dir)
                where = _on_disk(path)
                if path.is_file():  # a GGUF file
                    floats = [p for p in float32_copies(path, cache_dir) if p.is_dir()]
                copies = converted_copies_of(path, cache_dir)
            except ModelNotFoundError:
                where = "-"
            known = catalog.AMRLIB_MODELS.get(name) or catalog.HUB_MODELS.get(name)
            if known is not None:
                about = f"{known.description}; download ~{_size(known.size * 1_000_000)}"
            else:
                about = catalog.PACKAGED[(each, name)].description
            default = " [default]" if catalog.DEFAULTS[each] == name else ""
            rows.append((name, each + default, where, about))
            rows += [(name, each, _on_disk(c), FLOAT32_COPY) for c in floats]
            rows += [(name, each, _on_disk(c), COPY) for c in copies]
    models = cache_root(cache_dir) / "models"
    fetched = sorted(models.iterdir()) if models.is_dir() else []
    named = {*catalog.AMRLIB_MODELS, *(m.installed for m in catalog.HUB_MODELS.values())}
    for path in fetched:
        if path.is_dir() and not path.name.startswith(".") and path.name not in named:
            rows.append((path.name, "amrlib", _on_disk(path), "fetched with --url"))
    if not kind:
        rows += _hub_rows({r[0] for r in rows}, cache_dir)
    return rows


def converted_copies_of(path: Path, cache_dir: str | None = None) -> list[Path]:
    """The CTranslate2 copies of the model at ``path`` (of its float32 copy, for a GGUF file)."""
    from paraamr.models.fast import CT2_SUFFIX, converted_copies
    from paraamr.models.resolve import cache_root

    if path.is_file():  # a packaged GGUF file: its float32 copies are what converts
        return sorted(cache_root(cache_dir).glob(f"gguf/.{path.stem}-*{CT2_SUFFIX}*"))
    return converted_copies(path, cache_dir)


def _hub_rows(listed: set[str], cache_dir: str | None = None) -> list[tuple[str, str, str, str]]:
    """Rows for the other model repos in huggingface_hub's cache (fetched Hub ids), and their
    CTranslate2 copies."""
    from paraamr.models.download import scan_hub_cache

    info = scan_hub_cache()
    repos = info.repos if info is not None else ()
    rows = []
    for r in sorted(repos, key=lambda r: r.repo_id):
        if r.repo_type == "model" and r.repo_id not in listed:
            about = "Hub model in huggingface_hub's cache"
            rows.append((r.repo_id, "hub", f"{r.repo_path} ({_size(r.size_on_disk)})", about))
            rows += [(r.repo_id, "hub", _on_disk(c), COPY) for c in _repo_copies(r, cache_dir)]
    return rows


def _repo_copies(repo: Any, cache_dir: str | None = None) -> list[Path]:
    """The CTranslate2 copies of every revision of a repo of huggingface_hub's cache (its scan's)."""
    return [c for rev in repo.revisions for c in converted_copies_of(rev.snapshot_path, cache_dir)]


def _download(args: argparse.Namespace) -> int:
    from paraamr.models import catalog
    from paraamr.models.download import ensure, fetch_release

    if args.name in catalog.AMRLIB_MODELS or args.url:
        path = fetch_release(
            args.name,
            cache_dir=args.cache_dir,
            url=args.url,
            md5=args.md5,
            tokenizer=not args.no_tokenizer,
            progress=not args.quiet,
        )
    else:
        known = catalog.HUB_MODELS.get(args.name)
        kind = args.kind or (known.kind if known else "lm")
        path = ensure(args.name, kind, cache_dir=args.cache_dir, progress=not args.quiet)
    print(path)
    return 0


def _path(args: argparse.Namespace) -> int:
    from paraamr.errors import UsageError
    from paraamr.models import catalog
    from paraamr.models.resolve import resolve

    known = catalog.kinds_of(args.name)
    if not args.kind and len(known) != 1:
        what = f"of kinds {' and '.join(known)}" if known else "not in the catalog (paraamr models list)"
        raise UsageError(f"model {args.name!r} is {what}: give its --kind")
    print(resolve(args.name, args.kind or known[0], cache_dir=args.cache_dir))
    return 0


def _rm(args: argparse.Namespace) -> int:
    from paraamr.errors import ModelNotFoundError, UsageError
    from paraamr.models import catalog
    from paraamr.models.download import remove, scan_hub_cache
    from paraamr.models.resolve import cache_root, resolve

    known = catalog.kinds_of(args.name)  # a Hub id: any kind
    fetched = "/" not in args.name and (cache_root(args.cache_dir) / "models" / args.name).is_dir()
    if not known and fetched:
        known = ["parser", "realizer"]  # fetched with --url: an amrlib model
    if args.kind and known and args.kind not in known:
        raise UsageError(
            f"model {args.name!r} is a {' and '.join(known)} model, not --kind {args.kind}; nothing removed"
        )
    copies = []
    for kind in (args.kind,) if args.kind else catalog.KINDS:
        with contextlib.suppress(ModelNotFoundError):
            path = resolve(args.name, kind, cache_dir=args.cache_dir, local=not known)  # ./NAME is not it
            copies += converted_copies_of(path, args.cache_dir)
    if (info := scan_hub_cache()) is not None:  # a Hub model (gpt2 too): each revision's copies
        repos = [r for r in info.repos if r.repo_id == args.name and r.repo_type == "model"]
        copies += [c for r in repos for c in _repo_copies(r, args.cache_dir)]
    copies = list(dict.fromkeys(copies))
    for copy in copies:
        shutil.rmtree(copy, ignore_errors=True)
    removed = copies + remove(args.name, kind=args.kind, cache_dir=args.cache_dir)
    if not removed:
        raise ModelNotFoundError(
            f"nothing to remove for model {args.name!r} "
            f"(looked in {cache_root(args.cache_dir)} and the Hub cache)"
        )
    for path in removed:
        print(f"removed {path}")
    return 0


def _make_tiny(args: argparse.Namespace) -> int:
    from paraamr.atomic import new_folders, remove_temps
    from paraamr.models.tiny import make_tiny

    if problem := not_a_folder(args.dir):
        raise InputError(f"{args.dir}: {problem}")
    for kind in ("parser", "realizer", "lm"):  # perhaps a model of the user's, trained for days
        path = Path(args.dir) / kind
        remove_temps(path)  # what a killed run left of its own
        if os.path.lexists(path) and not (path.is_dir() and not any(path.iterdir())) and not args.overwrite:
            raise InputError(f"{path}: exists (pass --overwrite to replace it)")  # replaced when made
    with new_folders(args.dir):  # the disk's errors name no file: they are the folder's
        made = make_tiny(args.dir, seed=args.seed)
    for name, path in made.items():
        print(f"{name}\t{path}")
    return 0
