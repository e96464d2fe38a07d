#!/usr/bin/env bash
# mbt against the PyTorch ways of training many models (issue "Fast CPU
# code"), side by side in one run: for each workload it compiles an mbt
# sweep of N models and times it with `mbt-run --bench-steps`, then times
# the same models, data, batch, steps and thread count in tools/bench/peers.py
# (sequential PyTorch, torch.func vmap, the modelbatch package, HFTA-style
# stacked baddbmm, and that HFTA step torch.compile'd), and prints model-samples/s and mbt's speed-up over each.
# It also measures the machine's float32 GEMM rate in the same run and
# reports mbt's whole-step FLOP rate as a fraction of it.
#
#   tools/bench/setup-peers.sh                 # once: PyTorch + modelbatch
#   tools/bench/side_by_side.sh [--steps S] [--threads T] [--only mlp-s|mlp-t]
#                               [--repeat R] [--vector]
#
# --repeat R times every system R times, mbt and the peers in turn, and
# reports each one's median: on a machine whose speed drifts (a shared VM),
# the runs of all systems then sample the same drift. --vector also times
# mbt with its generated matmul kernels (mbtc --vector-matmul) in each round,
# in the column mbt-vec (mbt/best and %gemm stay those of the default build).
#
# Workloads: MLP-S 784-128-10, batch 128, Adam, N in {1, 16, 64, 256};
# MLP-T 784-128-128-10, batch 64, Adam, N in {8, 32}. MBT_BUILD_DIR picks
# another build tree, MBT_BENCH_VENV another Python environment.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
bin="${MBT_BUILD_DIR:-$here/build}/bin"
venv="${MBT_BENCH_VENV:-$here/build/bench-venv}"
steps=50
threads=$(nproc)
only=""
repeat=1
vector=0
while [ $# -gt 0 ]; do
  case "$1" in
    --steps) steps="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --only) only="$2"; shift 2 ;;
    --repeat) repeat="$2"; shift 2 ;;
    --vector) vector=1; shift ;;
    *) echo "side_by_side.sh: error: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[ -x "$venv/bin/python3" ] || { echo "side_by_side.sh: error: no peers environment at $venv (run tools/bench/setup-peers.sh)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OPENBLAS_NUM_THREADS="$threads" OMP_NUM_THREADS="$threads"

[[ "$repeat" =~ ^[1-9][0-9]*$ ]] || { echo "side_by_side.sh: error: --repeat takes a positive count, got '$repeat'" >&2; exit 2; }
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); threads $threads; $steps timed steps after 5 warm-up steps; median of $repeat run(s) per system"
gemm=$("$venv/bin/python3" "$here/tools/bench/peers.py" --layers 1,1 --models 1 --batch 1 --steps 0 --threads "$threads" --peers "" --gemm 2>/dev/null | awk '/^GEMM/ {print $3}')
echo "float32 GEMM rate (torch.mm 2048^3, $threads threads): $gemm GFLOP/s"

# shellcheck source=tools/bench/mlp_spec.sh
source "$here/tools/bench/mlp_spec.sh"

# Training FLOPs per sample per model: forward 2*sum(w_i w_i+1), backward
# the weight gradients (as much again) and the input gradients of every
# layer but the first.
flops() {
  IFS=, read -r -a w <<< "$1"
  local total=0
  for ((i = 0; i + 1 < ${#w[@]}; i++)); do
    local mac=$(( w[i] * w[i+1] ))
    total=$(( total + 4 * mac ))
    (( i > 0 )) && total=$(( total + 2 * mac ))
  done
  echo "$total"
}

# median V...: the middle value (the lower middle of an even count).
median() {
  printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

printf '\n%-8s %5s %5s %14s %14s %14s %14s %14s %14s %14s %9s %10s\n' workload N batch "mbt" mbt-vec sequential vmap modelbatch hfta compile "mbt/best" "%gemm"
printf '%-8s %5s %5s %14s %14s %14s %14s %14s %14s %14s %9s %10s\n' "" "" "" "(model-samples/s)" "" "" "" "" "" "" "" ""
# mbt_rate ARTIFACT: model-samples/s of `steps` timed steps.
mbt_rate() {
  "$bin/mbt-run" "$1" --bench-steps "$steps" | sed -n 's/.*model-samples\/s \([0-9.]*\).*/\1/p'
}

run() {
  local name="$1" widths="$2" batch="$3" models="$4"
  mlp_spec "$widths" "$models" "adam(lr = logspace(1e-4, 1e-1, models))" \
    "fashion_mnist(batch = $batch)" > "$work/$name-$models.mbt"
  local start end
  start=$(date +%s%N)
  "$bin/mbtc" "$work/$name-$models.mbt" -o "$work/$name-$models.so"
  end=$(date +%s%N)
  local compile_ms=$(( (end - start) / 1000000 ))
  if [ "$vector" = 1 ]; then
    "$bin/mbtc" --vector-matmul "$work/$name-$models.mbt" -o "$work/$name-$models-vec.so"
  fi
  # R rounds, mbt then the peers in each; the median of each system.
  local mbt_runs=() vec_runs=() seq_runs=() vmap_runs=() mb_runs=() hfta_runs=() comp_runs=() r peers
  for ((r = 0; r < repeat; r++)); do
    mbt_runs+=("$(mbt_rate "$work/$name-$models.so")")
    if [ "$vector" = 1 ]; then
      vec_runs+=("$(mbt_rate "$work/$name-$models-vec.so")")
    fi
    peers=$("$venv/bin/python3" "$here/tools/bench/peers.py" --layers "$widths" --models "$models" --batch "$batch" --steps "$steps" --threads "$threads")
    seq_runs+=("$(awk '$2 == "sequential" {print $6}' <<< "$peers")")
    vmap_runs+=("$(awk '$2 == "vmap" {print $6}' <<< "$peers")")
    mb_runs+=("$(awk '$2 == "modelbatch" {print $6}' <<< "$peers")")
    hfta_runs+=("$(awk '$2 == "hfta" {print $6}' <<< "$peers")")
    comp_runs+=("$(awk '$2 == "compile" {print $6}' <<< "$peers")")
  done
  local mbt_rate vec_rate=-1 seq vmap mb hfta comp
  mbt_rate=$(median "${mbt_runs[@]}")
  [ "$vector" = 1 ] && vec_rate=$(median "${vec_runs[@]}")
  seq=$(median "${seq_runs[@]}")
  vmap=$(median "${vmap_runs[@]}")
  mb=$(median "${mb_runs[@]}")
  hfta=$(median "${hfta_runs[@]}")
  comp=$(median "${comp_runs[@]}")
  local f
  f=$(flops "$widths")
  awk -v name="$name" -v n="$models" -v b="$batch" -v m="$mbt_rate" -v mv="$vec_rate" -v s="$seq" -v v="$vmap" -v mb="$mb" -v h="$hfta" -v co="$comp" -v f="$f" -v g="$gemm" -v c="$compile_ms" 'BEGIN {
    best = s; if (v > best) best = v; if (mb > best) best = mb; if (h > best) best = h; if (co > best) best = co;
    vec = mv < 0 ? "-" : sprintf("%.0f", mv);
    printf "%-8s %5d %5d %14.0f %14s %14.0f %14.0f %14.0f %14.0f %14.0f %8.2fx %9.1f%%   (compile %d ms)\n",
      name, n, b, m, vec, s, v, mb, h, co, m / best, 100 * m * f / 1e9 / g, c }'
}
if [ -z "$only" ] || [ "$only" = mlp-s ]; then
  for n in 1 16 64 256; do run mlp-s 784,128,10 128 "$n"; done
fi
if [ -z "$only" ] || [ "$only" = mlp-t ]; then
  for n in 8 32; do run mlp-t 784,128,128,10 64 "$n"; done
fi
echo
echo "model-samples/s: training samples per second summed over the models (steps x batch x N / time)."
echo "%gemm: mbt's training FLOP rate (forward + backward, $(flops 784,128,10) FLOPs per MLP-S sample) over the GEMM rate above."
