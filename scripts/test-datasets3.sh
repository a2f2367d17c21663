#!/usr/bin/env bash
# Run the dataset tests under datasets 3.x, where loading scripts (paraamr_dataset.py with
# trust_remote_code=True) still work: a venv over the system site-packages (paraamr, pyarrow,
# pytest, ... as installed) with datasets>=3,<4 on top. About 20 s to set up the first time.
# Usage: bash scripts/test-datasets3.sh [pytest args]   (default: tests/dataset -k "script or builder")
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${DATASETS3_VENV:-build/venv-datasets3}
if ! "$venv/bin/python" -c 'import datasets, sys; sys.exit(datasets.__version__.split(".")[0] != "3")' 2>/dev/null; then
  python -m venv --system-site-packages --without-pip "$venv"
  "$venv/bin/python" -m pip install -q "datasets>=3,<4"   # the system pip, installing into the venv
fi
"$venv/bin/python" -c 'import datasets; print("datasets", datasets.__version__)'
export HF_HUB_OFFLINE=1 HF_MODULES_CACHE="$PWD/build/hf-modules-datasets3"
if [ "$#" -eq 0 ]; then set -- tests/dataset -k "script or builder"; fi
exec "$venv/bin/python" -m pytest -q -p no:cacheprovider "$@"
