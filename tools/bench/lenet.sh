#!/usr/bin/env bash
# ModelBatch's LeNet-5 benchmark (examples/lenet5_sweep.mbt: 16 LeNet-5s on
# Fashion-MNIST, per-model dropout and SGD learning rate, batch 64) with
# mbt against the PyTorch peers of tools/bench/lenet_peers.py, side by side
# in one run, the same thread count for everyone: model-samples/s and mbt's
# ratio to each peer.
#
#   tools/bench/setup-peers.sh                     # once: PyTorch + modelbatch
#   tools/bench/lenet.sh [--models N] [--steps S] [--threads T] [--repeat R]
#
# --repeat R times every system R times, in turn, and reports medians (the
# VM's speed drifts). MBT_BUILD_DIR picks another build tree, MBT_BENCH_VENV
# another Python environment.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
bin="${MBT_BUILD_DIR:-$here/build}/bin"
venv="${MBT_BENCH_VENV:-$here/build/bench-venv}"
models=16 steps=20 threads=$(nproc) repeat=1
while [ $# -gt 0 ]; do
  case "$1" in
    --models) models="$2"; shift 2 ;;
    --steps) steps="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --repeat) repeat="$2"; shift 2 ;;
    *) echo "lenet.sh: error: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
for v in "$models" "$steps" "$threads" "$repeat"; do
  [[ "$v" =~ ^[1-9][0-9]*$ ]] || { echo "lenet.sh: error: expected a positive count, got '$v'" >&2; exit 2; }
done
[ -x "$venv/bin/python3" ] || { echo "lenet.sh: error: no peers environment at $venv (run tools/bench/setup-peers.sh)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OPENBLAS_NUM_THREADS="$threads" OMP_NUM_THREADS="$threads"

# The example with `models` models (its lists are written for 16, so the
# sweep's values follow `models`: linspace and logspace over the count).
sed -e "s/^  models = 16$/  models = $models/" \
    -e "s/logspace(0.01, 3.0517578125e-7, models)/logspace(0.01, $(python3 -c "print(0.01 * 0.5 ** ($models - 1))"), models)/" \
    -e "s/linspace(0.1, 0.4, models)/linspace(0.1, $(python3 -c "print(0.1 + 0.02 * ($models - 1))"), models)/" \
    "$here/examples/lenet5_sweep.mbt" > "$work/lenet.mbt"
"$bin/mbtc" "$work/lenet.mbt" -o "$work/lenet.so"

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); threads $threads; LeNet-5 x $models, batch 64, $steps timed steps after 5 warm-up steps; median of $repeat run(s)"
declare -A runs
for ((r = 0; r < repeat; r++)); do
  rate=$("$bin/mbt-run" "$work/lenet.so" --bench-steps "$steps" | awk '{for (i = 1; i < NF; i++) if ($i == "model-samples/s") print $(i + 1)}')
  runs[mbt]+="$rate "
  while read -r _ name what value _ rate; do
    if [ "$what" = fails ]; then runs[$name]="fails"; continue; fi
    runs[$name]+="$rate "
  done < <("$venv/bin/python3" "$here/tools/bench/lenet_peers.py" --models "$models" --batch 64 --steps "$steps" --threads "$threads")
done
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
mbt=$(echo "${runs[mbt]}" | median)
printf "%-12s %16s %10s\n" system model-samples/s mbt/system
printf "%-12s %16.0f %10s\n" mbt "$mbt" "1.00x"
for name in sequential vmap modelbatch grouped compile; do
  if [ "${runs[$name]:-}" = fails ] || [ -z "${runs[$name]:-}" ]; then
    printf "%-12s %16s %10s\n" "$name" "fails" "-"
  else
    peer=$(echo "${runs[$name]}" | median)
    printf "%-12s %16.0f %9.2fx\n" "$name" "$peer" "$(echo "$mbt / $peer" | bc -l)"
  fi
done
