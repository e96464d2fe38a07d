#!/usr/bin/env bash
# What successive halving saves: one epoch of 16 MLPs (784-256-10, SGD,
# batch 128, a 10% validation split) trained whole, against the same run
# with `--halve-every 60` (16, 8, 4, 2, then 1 model training by step 240
# of 422; the matmul kernel skips the stopped models). farm-bench runs the
# two in turn and prints the ratio halving / whole pair by pair.
#   tools/bench/halving.sh [RUNS]          (default 3)
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
bin="${MBT_BUILD_DIR:-$here/build}/bin"  # MBT_BUILD_DIR: another build tree
runs=${1:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source=tools/bench/mlp_spec.sh
source "$here/tools/bench/mlp_spec.sh"
mlp_spec --metric 784,256,10 16 "sgd(lr = logspace(1e-4, 1e-1, models))" \
  "fashion_mnist(batch = 128, validation = 0.1)" "epochs = 1" > "$work/sweep.mbt"
"$bin/mbtc" "$work/sweep.mbt" -o "$work/sweep.so"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
farm-bench -n "$runs" --warmup 0 --timeout 1200 \
  --vs "$bin/mbt-run $work/sweep.so --out $work/whole --quiet --log-every 0" \
  -- "$bin/mbt-run" "$work/sweep.so" --out "$work/halved" --quiet \
     --log-every 0 --halve-every 60
