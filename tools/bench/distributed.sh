#!/usr/bin/env bash
# What running a sweep's models across ranks costs (docs/distributed.md):
# MLP-S (784-128-10, Adam, batch 128) at N = 64 models, one epoch of
# Fashion-MNIST with the default logging (about 20 gathers of the train
# means) and an evaluation at the end, trained
#   - in one process on every core (OpenMP, OpenBLAS);
#   - on 2 ranks of this host, one core each (Gloo over loopback), launched
#     as torchrun or srun would (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT).
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
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "flags: $(grep -m1 '^flags' /proc/cpuinfo | grep -o -w -E 'avx2|avx512f|avx512_bf16|amx_bf16' | tr '\n' ' ')"

now() { date +%s.%N; }
one_process() {
  "$bin/mbt-run" "$work/model.so" --out "$work/one" > /dev/null 2> "$work/one.err"
}
two_ranks() {
  local port=$((20000 + RANDOM % 20000)) r
  for r in 0 1; do
    RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
      OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \
      "$bin/mbt-run" "$work/model.so" --out "$work/two" > /dev/null 2> "$work/two.$r.err" &
  done
  wait
}
best_one=""; best_two=""; share=""
for ((i = 0; i < runs; i++)); do
  t0=$(now); one_process; t1=$(now); two_ranks; t2=$(now)
  a=$(awk "BEGIN{print $t1 - $t0}"); b=$(awk "BEGIN{print $t2 - $t1}")
  if [ -z "$best_one" ] || awk "BEGIN{exit !($a < $best_one)}"; then best_one=$a; fi
  if [ -z "$best_two" ] || awk "BEGIN{exit !($b < $best_two)}"; then
    best_two=$b; share=$(grep -h "collectives" "$work/two.0.err" | sed 's/^mbt-run: //')
  fi
done
cmp -s "$work/one/leaderboard.json" "$work/two/leaderboard.json" \
  && same="leaderboard.json identical" || same="leaderboard.json DIFFERS"
printf "MLP-S N=%s, 1 epoch: one process %.2f s; 2 ranks %.2f s (%s)\n" \
  "$models" "$best_one" "$best_two" "$same"
echo "2 ranks: $share"
