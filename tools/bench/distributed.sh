#!/usr/bin/env bash
# What running a sweep over ranks costs (docs/distributed.md): MLP-S
# (784-128-10, Adam, batch 128) at N = 64 models, one epoch of
# Fashion-MNIST with the default logging (about 20 gathers of the train
# means) and an evaluation at the end, trained
#   - in one process on every core (OpenMP, OpenBLAS);
#   - on 2 ranks of this host, one core each (Gloo over loopback), launched
#     as torchrun or srun would (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT),
#     with the models across the ranks (--distribute=models: 32 each) and
#     with the data across them (--distribute=data: 64 models each, 64
#     samples of each step, one all-reduce of the gradients per step).
# Prints each run's wall time and the time rank 0 spent in collectives
# (the runtime's own count), best of RUNS.
#   tools/bench/distributed.sh [RUNS]      (default 3)
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
bin="${MBT_BUILD_DIR:-$here/build}/bin"  # MBT_BUILD_DIR: another build tree
runs=${1:-3}
models=${MODELS:-64}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source=tools/bench/mlp_spec.sh
source "$here/tools/bench/mlp_spec.sh"
mlp_spec --metric 784,128,10 "$models" "adam(lr = logspace(1e-4, 1e-1, models))" \
  "fashion_mnist(batch = 128)" "epochs = 1" "seed = range(models)" > "$work/sweep.mbt"
"$bin/mbtc" "$work/sweep.mbt" --ranks 2 -o "$work/model.so"
mkdir "$work/data"
"$bin/mbtc" "$work/sweep.mbt" --distribute=data -o "$work/data/model.so"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "flags: $(grep -m1 '^flags' /proc/cpuinfo | grep -o -w -E 'avx2|avx512f|avx512_bf16|amx_bf16' | tr '\n' ' ')"

now() { date +%s.%N; }
one_process() {
  "$bin/mbt-run" "$work/model.so" --out "$work/one" > /dev/null 2> "$work/one.err"
}
# two_ranks MODE: 2 ranks with the models or the data across them.
two_ranks() {
  local port=$((20000 + RANDOM % 20000)) r model="$work/model.so"
  [ "$1" = data ] && model="$work/data/model.so"
  for r in 0 1; do
    RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
      OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \
      "$bin/mbt-run" "$model" --distribute "$1" --out "$work/$1" > /dev/null \
      2> "$work/$1.$r.err" &
  done
  wait
}
declare -A best share
for ((i = 0; i < runs; i++)); do
  for run in one models data; do
    t0=$(now)
    if [ "$run" = one ]; then one_process; else two_ranks "$run"; fi
    t=$(awk "BEGIN{print $(now) - $t0}")
    if [ -z "${best[$run]:-}" ] || awk "BEGIN{exit !($t < ${best[$run]})}"; then
      best[$run]=$t
      [ "$run" = one ] || share[$run]=$(grep -h "collectives" "$work/$run.0.err" | sed 's/^mbt-run: //')
    fi
  done
done
cmp -s "$work/one/leaderboard.json" "$work/models/leaderboard.json" \
  && same="leaderboard.json identical" || same="leaderboard.json DIFFERS"
printf "MLP-S N=%s, 1 epoch: one process %.2f s; models across 2 ranks %.2f s (%s); data across 2 ranks %.2f s\n" \
  "$models" "${best[one]}" "${best[models]}" "$same" "${best[data]}"
echo "models across 2 ranks: ${share[models]}"
echo "data across 2 ranks: ${share[data]}"

# SEQUENCES=1: also the fortunes transformer classifier (4 models, dynamic
# batches of a 4096-token budget, one epoch of 329 steps), where a step's
# compute is large against its parameters: one process against its data
# across 2 ranks.
if [ "${SEQUENCES:-0}" = 1 ]; then
  mkdir "$work/seq"
  "$bin/mbtc" "$here/examples/fortunes_transformer.mbt" --distribute=data \
    --set 'epochs = 1' -o "$work/seq/model.so"
  t0=$(now)
  "$bin/mbt-run" "$work/seq/model.so" --out "$work/seq/one" > /dev/null 2>&1
  t1=$(now)
  port=$((20000 + RANDOM % 20000))
  for r in 0 1; do
    RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
      OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \
      "$bin/mbt-run" "$work/seq/model.so" --distribute data --out "$work/seq/data" \
      > /dev/null 2> "$work/seq/data.$r.err" &
  done
  wait
  t2=$(now)
  printf "fortunes_transformer, 1 epoch: one process %.2f s; data across 2 ranks %.2f s\n" \
    "$(awk "BEGIN{print $t1 - $t0}")" "$(awk "BEGIN{print $t2 - $t1}")"
  echo "data across 2 ranks: $(grep -h collectives "$work/seq/data.0.err" | sed 's/^mbt-run: //')"
fi
