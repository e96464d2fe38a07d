#!/usr/bin/env bash
# Training throughput of examples/fashion_mlp_sweep.mbt (MLP 784-128-10,
# Adam, batch 128) at several model counts: compiles the example with
# `models = N` and times 100 steps with `mbt-run --bench-steps`.
#   tools/bench/example_throughput.sh [N ...]      (default: 1 16 64)
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
bin="${MBT_BUILD_DIR:-$here/build}/bin"  # MBT_BUILD_DIR: another build tree
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(1 16 64)

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}"
for n in "${counts[@]}"; do
  sed -e "s/^  models = .*/  models = $n/" \
      "$here/examples/fashion_mlp_sweep.mbt" > "$work/sweep$n.mbt"
  start=$(date +%s%N)
  "$bin/mbtc" "$work/sweep$n.mbt" -o "$work/sweep$n.so"
  end=$(date +%s%N)
  echo "compile N=$n: $(( (end - start) / 1000000 )) ms"
  "$bin/mbt-run" "$work/sweep$n.so" --bench-steps 100
done
