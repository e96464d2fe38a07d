#!/usr/bin/env bash
# What precision = bf16 buys on this CPU: each workload compiled twice, in
# f32 and with `precision = bf16`, both timed with `mbt-run --bench-steps`
# in R interleaved rounds (f32, bf16, f32, bf16, ...), and the median of
# each with the ratio bf16/f32 (above 1: bf16 is faster). Where the CPU
# has bf16 products (avx512_bf16, amx_bf16) the runtime multiplies the
# rounded operands with oneDNN's bf16 matmul; MBT_BF16_MATMUL=f32 keeps
# them on sgemm, for a third column that shows what the bf16 GEMMs bring.
#
#   tools/bench/bf16.sh [--steps S] [--repeat R] [--only NAME] [--peers]
#
# --peers also times, for the MLPs, the best PyTorch peers of
# side_by_side.sh at these sizes (HFTA's stacked baddbmm, eager and
# torch.compile'd; tools/bench/peers.py) in f32 and under bf16 autocast,
# in the same rounds (tools/bench/setup-peers.sh first).
#
# Workloads: MLP-S (784-128-10, batch 128, Adam) at N = 16, 64 and 256;
# MLP-T (784-128-128-10, batch 64) at N = 32; the fashion CNN
# (examples/fashion_cnn_bf16.mbt, 6 models); the fortunes sequence
# models, 4 of each: the transformer classifier, the byte-level LM, the
# GRU and LSTM sweeps (examples/fortunes_transformer.mbt, fortunes_char_lm,
# fortunes_gru_sweep, fortunes_lstm_sweep). MBT_BUILD_DIR picks another
# build tree.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
bin="${MBT_BUILD_DIR:-$here/build}/bin"
steps=50 repeat=3 only="" peers=0
venv="${MBT_BENCH_VENV:-$here/build/bench-venv}"
while [ $# -gt 0 ]; do
  case "$1" in
    --steps) steps="$2"; shift 2 ;;
    --repeat) repeat="$2"; shift 2 ;;
    --only) only="$2"; shift 2 ;;
    --peers) peers=1; shift ;;
    *) echo "bf16.sh: error: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ "$repeat" =~ ^[1-9][0-9]*$ ]] || { echo "bf16.sh: error: --repeat takes a positive count, got '$repeat'" >&2; exit 2; }
[ -x "$bin/mbtc" ] || { echo "bf16.sh: error: no mbtc in $bin (build first)" >&2; exit 1; }
if [ "$peers" = 1 ] && [ ! -x "$venv/bin/python3" ]; then
  echo "bf16.sh: error: --peers needs the peers environment at $venv (run tools/bench/setup-peers.sh)" >&2
  exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); flags: $(grep -m1 '^flags' /proc/cpuinfo | grep -o -w -E 'avx2|avx512f|avx512_bf16|amx_bf16' | tr '\n' ' ')"
echo "$steps timed steps after the warm-up, median of $repeat rounds"

# shellcheck source=tools/bench/mlp_spec.sh
source "$here/tools/bench/mlp_spec.sh"

median() {
  printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}
rate() {
  "$bin/mbt-run" "$1" --bench-steps "$steps" | sed -n 's/.*model-samples\/s \([0-9.]*\).*/\1/p'
}

printf '\n%-16s %14s %14s %14s %10s %14s %14s\n' workload "f32" "bf16" "bf16 on sgemm" "bf16/f32" "peer f32" "peer autocast"
printf '%-16s %14s %14s %14s %10s %14s %14s\n' "" "(model-samples/s)" "" "" "" "" ""

# best_peer LAYERS MODELS BATCH [--autocast]: the faster of hfta and
# compile, model-samples/s.
best_peer() {
  "$venv/bin/python3" "$here/tools/bench/peers.py" --layers "$1" --models "$2" \
    --batch "$3" --steps "$steps" --threads "$(nproc)" --peers hfta,compile \
    "${@:4}" 2>/dev/null | awk '$1 == "PEER" && $6 > best { best = $6 } END { print best + 0 }'
}

# compare NAME SPEC PEER_ARGS [MBTC_FLAGS...]: SPEC in f32 and in bf16;
# PEER_ARGS ("LAYERS MODELS BATCH", or "" for none) the MLP the peers train.
compare() {
  local name="$1" spec="$2" peer_args="$3"
  shift 3
  [ -z "$only" ] || [ "$only" = "$name" ] || return 0
  "$bin/mbtc" "$spec" "$@" -o "$work/$name-f32.so"
  "$bin/mbtc" "$spec" "$@" --set 'precision = bf16' -o "$work/$name-bf16.so"
  local f32=() bf16=() sgemm=() pf32=(-1) pbf16=(-1) r
  [ "$peers" = 1 ] && [ -n "$peer_args" ] && pf32=() pbf16=()
  for ((r = 0; r < repeat; r++)); do
    f32+=("$(rate "$work/$name-f32.so")")
    bf16+=("$(rate "$work/$name-bf16.so")")
    sgemm+=("$(MBT_BF16_MATMUL=f32 rate "$work/$name-bf16.so")")
    if [ "$peers" = 1 ] && [ -n "$peer_args" ]; then
      # shellcheck disable=SC2086
      pf32+=("$(best_peer $peer_args)")
      # shellcheck disable=SC2086
      pbf16+=("$(best_peer $peer_args --autocast)")
    fi
  done
  awk -v n="$name" -v a="$(median "${f32[@]}")" -v b="$(median "${bf16[@]}")" \
      -v s="$(median "${sgemm[@]}")" -v pa="$(median "${pf32[@]}")" \
      -v pb="$(median "${pbf16[@]}")" \
      'BEGIN { printf "%-16s %14.0f %14.0f %14.0f %9.2fx %14s %14s\n", n, a, b, s, b / a,
               pa < 0 ? "-" : sprintf("%.0f", pa), pb < 0 ? "-" : sprintf("%.0f", pb) }'
}

for n in 16 64 256; do
  mlp_spec 784,128,10 "$n" "adam(lr = logspace(1e-4, 1e-1, models))" \
    "fashion_mnist(batch = 128)" > "$work/mlp-s-$n.mbt"
  compare "mlp-s-$n" "$work/mlp-s-$n.mbt" "784,128,10 $n 128"
done
mlp_spec 784,128,128,10 32 "adam(lr = logspace(1e-4, 1e-1, models))" \
  "fashion_mnist(batch = 64)" > "$work/mlp-t-32.mbt"
compare mlp-t-32 "$work/mlp-t-32.mbt" "784,128,128,10 32 64"
# The example sets precision = bf16 itself: its f32 twin drops the line.
grep -v '^ *precision' "$here/examples/fashion_cnn_bf16.mbt" > "$work/cnn.mbt"
compare cnn "$work/cnn.mbt" "" --stdlib-dir "$here/stdlib"
compare transformer "$here/examples/fortunes_transformer.mbt" ""
compare lm "$here/examples/fortunes_char_lm.mbt" ""
compare gru "$here/examples/fortunes_gru_sweep.mbt" ""
compare lstm "$here/examples/fortunes_lstm_sweep.mbt" ""
