#!/usr/bin/env bash
# Run the dataset tests under datasets 3.x, where loading scripts (paraamr_dataset.py with
# trust_remote_code=True) still work: a venv over the system site-packages (paraamr, pyarrow,
# pytest, ... as installed) with datasets>=3,<4 on top; about 40 s to set up the first time.
# Usage: bash scripts/test-datasets3.sh [pytest args]   (default: tests/dataset -k "script or builder")
# DATASETS_SPEC picks another release line, e.g. DATASETS_SPEC="datasets>=4,<5" (own venv).
set -euo pipefail
cd "$(dirname "$0")/.."
spec=${DATASETS_SPEC:-datasets>=3,<4}
venv=build/venv-$(echo "$spec" | tr -c 'A-Za-z0-9.\n' '_')
[ -x "$venv/bin/python" ] || python -m venv --system-site-packages --without-pip "$venv"
"$venv/bin/python" -m pip install -q "$spec"   # the system pip, installing into the venv
"$venv/bin/python" -c 'import datasets; print("datasets", datasets.__version__)'
export HF_HUB_OFFLINE=1 HF_MODULES_CACHE="$PWD/$venv/hf-modules"
if [ "$#" -eq 0 ]; then set -- tests/dataset -k "script or builder"; fi
exec "$venv/bin/python" -m pytest -q -p no:cacheprovider "$@"
