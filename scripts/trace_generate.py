"""Follow one ``generate.py`` run on tiny models through paraamr's files (docs/dev/MAP.md).

    python scripts/trace_generate.py OUT_DIR INPUT.txt [TINY_MODULE]

Prints JSON: the paraamr files the run's calls reach, the calls into ``generate.py`` from other
paraamr files, and the modules ``generate.py`` itself calls, in order (consecutive repeats merged).
TINY_MODULE is where ``make_tiny`` lives (``paraamr.models.tiny``; ``paraamr.builder.models.tiny``
before the layout move), so the same script measures an older checkout put first on PYTHONPATH.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path


def main(out: Path, text: str, tiny_module: str = "paraamr.models.tiny") -> dict:
    models = importlib.import_module(tiny_module).make_tiny(out / "tiny")
    import paraamr

    src = Path(paraamr.__file__).parent
    entry = str(src / "generate.py")
    generate = importlib.import_module("paraamr.generate")
    reached: set[str] = set()
    into_generate: list[str] = []
    order: list[str] = []

    def profile(frame, event, arg):
        callee = frame.f_code.co_filename
        if event != "call" or not callee.startswith(str(src)):
            return
        caller = frame.f_back.f_code.co_filename if frame.f_back else ""
        name = str(Path(callee).relative_to(src))
        reached.add(name)
        if callee == entry and caller.startswith(str(src)) and caller != entry:
            into_generate.append(f"{Path(caller).relative_to(src)} -> {frame.f_code.co_name}")
        if caller == entry and callee != entry and (not order or order[-1] != name):
            order.append(name)

    realizer = "--realizer-model" if "realizer-model" in Path(entry).read_text() else "--generator-model"
    argv = ["--input", text, "--output", str(out / "run"), "--parser-model", str(models["parser"])]
    argv += [realizer, str(models["realizer"]), "--lm-model", str(models["lm"])]
    argv += ["--max-perplexity", "none", "--no-progress"]
    sys.setprofile(profile)
    try:
        status = generate.main(argv)
    finally:
        sys.setprofile(None)
    return {
        "status": status,
        "files_reached": sorted(reached),
        "calls_into_generate_py": into_generate,
        "generate_py_calls_in_order": order,
    }


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1]), sys.argv[2], *sys.argv[3:]), indent=1))
