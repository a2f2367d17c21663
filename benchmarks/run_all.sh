#!/usr/bin/env bash
# One fresh run of every benchmark, one after the other, each log in $OUT (default bench-logs/).
# Sizes fit a 2-core machine in about 40 minutes (the defaults of each script are larger; the
# figures are ratios, so the sizes say how large, not which side wins). Usage: bash benchmarks/run_all.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-bench-logs}
mkdir -p "$OUT"
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
run() {
  local name=$1; shift
  echo "== $name: $*  ($(date -u +%H:%M:%S), load $(cut -d' ' -f1-3 /proc/loadavg))"
  /usr/bin/time -f "$name: %e s wall, %M KB peak RSS" python "benchmarks/$name.py" "$@" >"$OUT/$name.log" 2>&1 \
    || echo "$name: exit $?"
  tail -n 1 "$OUT/$name.log"
}
run bench_refocus --rounds 3
run bench_ted --pairs 20000 --baseline-pairs 200 --repeats 3
run bench_lm --n 200 --threads 1,2 --rounds 2
run bench_augment --sentences 2000 --score-sentences 200
run bench_evaluate --pairs 2000 --loop-pairs 100 --repeats 1
run bench_folder --records 100000
run bench_gpu --small --rounds 2
run bench_pipeline --sizes 48 --rounds 1
run bench_quality
