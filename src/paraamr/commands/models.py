"""``paraamr models list|download|path|make-tiny``: where the model stages' weights come from."""

from __future__ import annotations

import argparse
import sys


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``models`` and its subcommands."""
    parser = subparsers.add_parser("models", help="list, download and locate models; write tiny test models")
    sub = parser.add_subparsers(dest="models_command", metavar="SUBCOMMAND", required=True)
    cache = argparse.ArgumentParser(add_help=False)
    cache.add_argument("--cache-dir", help="model cache (default: $PARAAMR_CACHE or ~/.cache/paraamr)")
    kinds = ("parser", "generator", "lm", "embedder")

    p = sub.add_parser("list", parents=[cache], help="known model names, and whether each is on disk")
    p.add_argument("--kind", choices=kinds, help="only models of this kind")
    p.set_defaults(func=_list)

    p = sub.add_parser(
        "download",
        parents=[cache],
        help="fetch an amrlib release (and its base tokenizer) or a Hub model into the cache",
    )
    p.add_argument("name", help="amrlib release name (see `paraamr models list`) or Hub id")
    p.add_argument("--kind", choices=kinds, help="kind of a Hub model (default: lm)")
    p.add_argument("--url", help="download an amrlib model tarball from this URL instead, as NAME")
    p.add_argument("--md5", help="expected md5 of the tarball (default: the release's published sum)")
    p.add_argument("--no-tokenizer", action="store_true", help="skip fetching the base tokenizer")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_download)

    p = sub.add_parser("path", parents=[cache], help="print where a model is on disk (exit 1 if nowhere)")
    p.add_argument("name", help="model name, Hub id or path")
    p.add_argument("--kind", choices=kinds, required=True)
    p.set_defaults(func=_path)

    p = sub.add_parser("make-tiny", help="write tiny random-weight models (DIR/parser, generator, lm)")
    p.add_argument("dir", help="output folder")
    p.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    p.set_defaults(func=_make_tiny)


def _list(args: argparse.Namespace) -> int:
    from paraamr.errors import ModelNotFoundError
    from paraamr.models import registry

    rows = []
    for kind in (args.kind,) if args.kind else registry.KINDS:
        for name in registry.names(kind):
            try:
                where = str(registry.resolve(name, kind, cache_dir=args.cache_dir))
            except ModelNotFoundError:
                where = "-"
            release = registry.AMRLIB_MODELS.get(name)
            about = release.description if release else "packaged weights"
            rows.append((name, kind, where, about))
    width = max(len(r[0]) for r in rows)
    for name, kind, where, about in rows:
        print(f"{name:<{width}}  {kind:<9}  {about}\n{'':<{width}}  {'':<9}  on disk: {where}")
    return 0


def _download(args: argparse.Namespace) -> int:
    from paraamr.errors import ParaAMRError
    from paraamr.models import registry

    try:
        if args.name in registry.AMRLIB_MODELS or args.url:
            path = registry.download(
                args.name,
                cache_dir=args.cache_dir,
                url=args.url,
                md5=args.md5,
                tokenizer=not args.no_tokenizer,
                progress=not args.quiet,
            )
        else:
            path = registry.resolve(args.name, args.kind or "lm", cache_dir=args.cache_dir)
    except ParaAMRError as err:
        print(f"paraamr models download: {err}", file=sys.stderr)
        return 1
    print(path)
    return 0


def _path(args: argparse.Namespace) -> int:
    from paraamr.errors import ModelNotFoundError
    from paraamr.models import registry

    try:
        print(registry.resolve(args.name, args.kind, cache_dir=args.cache_dir))
    except ModelNotFoundError as err:
        print(f"paraamr models path: {err}", file=sys.stderr)
        return 1
    return 0


def _make_tiny(args: argparse.Namespace) -> int:
    from paraamr.models import registry

    for name, path in registry.make_tiny(args.dir, seed=args.seed).items():
        print(f"{name}\t{path}")
    return 0
