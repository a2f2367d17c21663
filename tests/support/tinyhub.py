"""Tiny models published on the loopback Hub in the exact shapes of the real defaults.

:func:`publish_defaults` takes the dirs of :func:`paraamr.models.tiny.make_tiny` (``parser``,
``realizer``, ``lm``) and serves them where a first run looks for the default models
(:data:`paraamr.models.catalog.DEFAULTS`):

- ``parse_xfm_bart_large`` and ``generate_t5wtense`` as amrlib release tarballs on the release
  host (``/files/releases/{tag}/model_{name}-v{version}.tar.gz``, one top folder named like the
  archive, ``amrlib_meta.json`` naming the base model, no tokenizer inside), exactly as
  amrlib-models' GitHub releases ship them;
- their base tokenizers as Hub model repos (``facebook/bart-large``, ``google-t5/t5-base``: the
  real tarball of generate_t5wtense names the legacy id ``t5-base``), each with a config and weights
  beside the tokenizer files, as the real repos have;
- ``gpt2`` as a Hub model repo (a GPT-2-architecture LM: config, safetensors weights, tokenizer).

Point the clients at it with ``PARAAMR_RELEASE_URL`` (``hub.url + "/files/releases"``, returned
in :attr:`Published.env`) and ``HF_ENDPOINT`` (the ``hub`` fixture).

The catalog checks a release against its published md5 (parse_xfm_bart_large has one), which a tiny
stand-in cannot match: :meth:`Published.checksum_env` writes a ``sitecustomize.py`` that puts the
md5 of the tarball served here in its place, for subprocesses only. The check itself stays on: a
truncated or different file still fails it.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import tarfile
from dataclasses import dataclass, field
from pathlib import Path

from hubserver import HubServer

__all__ = ["BASE_MODELS", "TOKENIZER_FILES", "Published", "publish_defaults", "release_tarball"]

#: The files of a tokenizer in a model dir (left out of release tarballs, served as Hub repos).
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json")
#: The base model the real release of each default names in its ``amrlib_meta.json``, and the Hub
#: repo that serves its tokenizer.
BASE_MODELS = {
    "parse_xfm_bart_large": ("facebook/bart-large", "facebook/bart-large"),
    "generate_t5wtense": ("t5-base", "google-t5/t5-base"),
}


@dataclass
class Published:
    """What :func:`publish_defaults` put on the server."""

    release_url: str
    tarballs: dict[str, str] = field(default_factory=dict)  # name -> url path under /files/
    sizes: dict[str, int] = field(default_factory=dict)  # name -> tarball bytes
    repos: list[str] = field(default_factory=list)  # Hub model repos
    md5: dict[str, str] = field(default_factory=dict)  # name -> md5 of the served tarball

    @property
    def env(self) -> dict[str, str]:
        return {"PARAAMR_RELEASE_URL": self.release_url}

    def checksum_env(self, folder: Path) -> dict[str, str]:
        """``PYTHONPATH`` with a ``sitecustomize.py`` (written in ``folder``) that sets the catalog's
        md5 of each release that publishes one to that of the tarball served here."""
        from paraamr.models.catalog import AMRLIB_MODELS

        sums = {name: md5 for name, md5 in self.md5.items() if AMRLIB_MODELS[name].md5 is not None}
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "sitecustomize.py").write_text(
            "# Written by tests/support/tinyhub.py: the tiny tarballs' md5 sums stand in for the real ones.\n"
            "import dataclasses\n\n"
            "from paraamr.models import catalog\n\n"
            f"for name, md5 in {sums!r}.items():\n"
            "    catalog.AMRLIB_MODELS[name] = dataclasses.replace(catalog.AMRLIB_MODELS[name], md5=md5)\n"
        )
        paths = [str(folder), *filter(None, [os.environ.get("PYTHONPATH")])]
        return {"PYTHONPATH": os.pathsep.join(paths)}


def release_tarball(model_dir: Path, name: str, version: str, base_model: str) -> bytes:
    """``model_dir`` (an amrlib model dir) as the release tarball of ``name``: one top folder
    ``model_{name}-v{version}``, tokenizer files left out, ``base_model`` named in
    ``amrlib_meta.json`` and in the config's ``task_specific_params``. Deterministic bytes."""
    top = f"model_{name}-v{version}"
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as gz, tarfile.open(fileobj=gz, mode="w") as tar:
        for path in sorted(model_dir.iterdir()):
            if path.name in TOKENIZER_FILES or not path.is_file():
                continue
            data = path.read_bytes()
            if path.name == "amrlib_meta.json":
                meta = json.loads(data)
                meta["base_model"] = base_model
                data = json.dumps(meta, indent=1).encode()
            elif path.name == "config.json":
                config = json.loads(data)
                for params in (config.get("task_specific_params") or {}).values():
                    params["model_name_or_path"] = base_model
                data = json.dumps(config, indent=2).encode()
            info = tarfile.TarInfo(f"{top}/{path.name}")
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def publish_defaults(hub: HubServer, tiny: dict[str, Path]) -> Published:
    """Serve the tiny ``parser``, ``realizer`` and ``lm`` dirs as the default models (see the
    module docstring)."""
    from paraamr.models.catalog import AMRLIB_MODELS

    published = Published(release_url=f"{hub.url}/files/releases")
    for name, kind in (("parse_xfm_bart_large", "parser"), ("generate_t5wtense", "realizer")):
        release = AMRLIB_MODELS[name]
        base_model, tokenizer_repo = BASE_MODELS[name]
        data = release_tarball(tiny[kind], name, release.version, base_model)
        path = f"releases/{release.tag}/{release.archive}"
        hub.add_file(path, data)
        published.tarballs[name], published.sizes[name] = path, len(data)
        published.md5[name] = hashlib.md5(data).hexdigest()
        files = {f: (tiny[kind] / f).read_bytes() for f in TOKENIZER_FILES if (tiny[kind] / f).is_file()}
        files |= {f: (tiny[kind] / f).read_bytes() for f in ("config.json", "model.safetensors")}
        hub.add_model_repo(tokenizer_repo, files)
        published.repos.append(tokenizer_repo)
    hub.add_model_repo("gpt2", tiny["lm"])
    published.repos.append("gpt2")
    return published


def main(argv: list[str] | None = None) -> int:
    """``python tests/support/tinyhub.py DIR [--seconds N]``: serve tiny default models (made under
    DIR) on a loopback Hub + release host for N seconds, printing the environment to point a shell
    at it (to try the first run by hand)."""
    import argparse
    import time

    from paraamr.models.tiny import make_tiny

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("dir", type=Path)
    parser.add_argument("--seconds", type=float, default=600)
    args = parser.parse_args(argv)
    tiny = (
        make_tiny(args.dir / "tiny")
        if not (args.dir / "tiny").is_dir()
        else {k: args.dir / "tiny" / k for k in ("parser", "realizer", "lm")}
    )
    with HubServer() as hub:
        published = publish_defaults(hub, tiny)
        env = {"HF_ENDPOINT": hub.url, **published.env, **published.checksum_env(args.dir / "site")}
        for key, value in env.items():
            print(f"export {key}={value}", flush=True)
        time.sleep(args.seconds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
