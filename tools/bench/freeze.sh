#!/usr/bin/env bash
# What `freeze` saves: the train step of examples/finetune_sweep.mbt (a CNN,
# 8 models, Adam, batch 64) with every parameter trainable, with the
# convolutions frozen, and with everything but the head frozen (the usual
# "train only the head" fine-tune). A frozen parameter gets no gradient
# and no optimizer state, and the reverse sweep stops at the first layer
# that still trains, so the backward pass through the frozen convolutions
# is not computed at all. Each variant is compiled with mbtc and timed with
# `mbt-run --bench-steps` (the warm start of the example is left out: the
# step's cost does not depend on the starting weights). Rounds alternate
# the variants; the median of each is reported with its ratio to the
# all-trainable step.
#
#   tools/bench/freeze.sh [--steps S] [--repeat R]     (default 40 and 3)
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
bin="${MBT_BUILD_DIR:-$here/build}/bin"  # MBT_BUILD_DIR: another build tree
steps=40
repeat=3
while [ $# -gt 0 ]; do
  case "$1" in
    --steps) steps="$2"; shift 2 ;;
    --repeat) repeat="$2"; shift 2 ;;
    *) echo "freeze.sh: error: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "flags: $(grep -m1 '^flags' /proc/cpuinfo | grep -o -w 'avx2\|avx512f\|amx_tile' | tr '\n' ' ')"
echo "OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}"
names=(all-trainable convs-frozen head-only)
freezes=("" '  freeze = "conv_*"' '  freeze = ["conv_*", "linear_0.*"]')
for i in "${!names[@]}"; do
  sed -e '/^  init/d' -e '/^  freeze/d' "$here/examples/finetune_sweep.mbt" > "$work/${names[$i]}.mbt"
  if [ -n "${freezes[$i]}" ]; then
    sed -i -e "s|^  epochs = .*|&\n${freezes[$i]}|" "$work/${names[$i]}.mbt"
  fi
  "$bin/mbtc" "$work/${names[$i]}.mbt" -o "$work/${names[$i]}.so"
done

# The median of one variant's ms/step.
median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
for round in $(seq "$repeat"); do
  for name in "${names[@]}"; do
    "$bin/mbt-run" "$work/$name.so" --bench-steps "$steps" |
      sed -n 's/.*ms\/step \([0-9.]*\).*/\1/p' >> "$work/$name.times"
  done
done
printf '%-14s %10s %10s\n' variant "ms/step" "vs all"
base=$(median < "$work/all-trainable.times")
for name in "${names[@]}"; do
  ms=$(median < "$work/$name.times")
  printf '%-14s %10.1f %9.2fx\n' "$name" "$ms" "$(echo "$base / $ms" | bc -l)"
done
