#!/usr/bin/env bash
# The whole test suite on simulated machines (docs/numerics.md): for each regime, a fresh clone of
# this checkout's HEAD, a fresh TVRBENCH_HOME and fresh caches, set up and tested as CI does.
#   bash scripts/regimes.sh                      every regime below, one after the other
#   bash scripts/regimes.sh one-thread avx512    the ones named
# Each takes the set-up (about 5 minutes) and the suite (15 to 20 on 2 cores); the logs and a summary
# line per regime go to regimes-out/ (or $REGIMES_OUT).
set -euo pipefail
cd "$(dirname "$0")/.."

declare -A REGIMES=(
  [default]=""
  [avx2]="ONEDNN_MAX_CPU_ISA=AVX2"
  [avx512]="ONEDNN_MAX_CPU_ISA=AVX512_CORE"
  [one-thread]="OMP_NUM_THREADS=1"
  [four-threads]="TVRBENCH_REGIME_TORCH_THREADS=4"
)
ORDER=(default avx2 avx512 one-thread four-threads)
chosen=("$@")
[ "${#chosen[@]}" -gt 0 ] || chosen=("${ORDER[@]}")
for name in "${chosen[@]}"; do
  [ -n "${REGIMES[$name]+set}" ] || { echo "regimes.sh: unknown regime $name (known: ${ORDER[*]})" >&2; exit 2; }
done

out=$(realpath -m "${REGIMES_OUT:-regimes-out}")
mkdir -p "$out"
for name in "${chosen[@]}"; do
  work=$(mktemp -d)
  git clone --quiet . "$work/clone"
  # torch takes at most as many threads from OMP_NUM_THREADS as there are cores: more are set in-process.
  mkdir -p "$work/site"
  cat > "$work/site/sitecustomize.py" <<'PY'
import os
if os.environ.get("TVRBENCH_REGIME_TORCH_THREADS"):
    import torch
    torch.set_num_threads(int(os.environ["TVRBENCH_REGIME_TORCH_THREADS"]))
PY
  start=$(date +%s)
  status=0
  env ${REGIMES[$name]} PYTHONPATH="$work/site" TVRBENCH_HOME="$work/home" NUMBA_CACHE_DIR="$work/numba" XDG_CACHE_HOME="$work/cache" \
    bash "$work/clone/scripts/test.sh" > "$out/$name.log" 2>&1 || status=$?
  summary=$(grep -E "^[0-9]+ (passed|failed)|^=+ .*(passed|failed)" "$out/$name.log" | tail -1 || true)
  echo "$name (${REGIMES[$name]:-as is}): exit $status in $(( $(date +%s) - start )) s: $summary" | tee -a "$out/summary.txt"
  rm -rf "$work"
done
