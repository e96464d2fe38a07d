#!/usr/bin/env bash
# The GPU check of issue 6, on a host with an NVIDIA GPU, the CUDA toolkit,
# CMake, ninja and Python with PyTorch, but no MLIR and no network. Run
# tools/bench/gpu_prepare.sh first on a host with the compiler and bring
# build-gpu/ along with the tree. This script:
#   1. builds the runtime alone (no compiler, no OpenBLAS: the CPU twin's
#      matmuls use the reference loop) with the CUDA runtime and
#      mbt-gpu-check, and where NCCL is (the toolkit's or pip's) the NCCL
#      plugin and mbt-nccl-check, which sums and broadcasts on one GPU
#      through NCCL of one rank as data across ranks does (exact values,
#      timed);
#   2. trains MLP-S at N = 64 (10 steps) and N = 1024 (1 step) on the GPU
#      and on the CPU from the same start and batches, and compares every
#      model's parameters (mbt-gpu-check: within 1e-4); at N = 64 also
#      models 0, 1, 32 and 63 trained alone on the GPU against their rows of
#      the batch (within 1e-5: cuBLAS sums in another order for a batch of
#      one). These comparisons use tanh for relu: a
#      ReLU input within rounding of zero flips between the two devices and
#      moves its model far more than rounding does;
#   2a. the same check at N = 64 with the first layer frozen (freeze);
#   2b. the same check at N = 1024 with precision = bf16 and f16, whose
#      GEMMs run on the tensor cores (cuBLAS's FAST_16BF / FAST_16F compute
#      types on operands that hold 16-bit values), with SGD for Adam: each
#      model's first update within two units of 16-bit rounding of the
#      CPU's, 2^-8 for bf16 and 2^-10 for f16 (--updates; both round the
#      operands alike, the GPU accumulates in another order and a 16-bit
#      rounding of a result may then differ by one unit). Adam's
#      first step is lr * sign(g) where |g| >> eps, so a gradient within
#      16-bit rounding of zero flips a whole lr: not a comparison of
#      arithmetic. Then timed with Adam;
#   3. trains MLP-S N = 64 for one epoch of Fashion-MNIST on the GPU with
#      mbt-run (the whole runtime: data, steps, evaluation, leaderboard),
#      once with the steps captured as CUDA graphs and once without, and
#      compares the two final checkpoints byte for byte;
#   4. times the GPU step (mbt-gpu-check --bench-steps) and the PyTorch
#      peers on the same GPU (tools/bench/gpu_peers.py: torch.func vmap
#      eager, the same under torch.compile, sequential);
#   5. prints a table: ms per step and model-samples/s per system, and mbt's
#      speed-up over each.
# Exit status 1 if any check fails. Takes a few minutes.
#
#   tools/bench/gpu_check.sh [--steps S]
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
prep="$here/build-gpu"
steps=50
while [ $# -gt 0 ]; do
  case "$1" in
    --steps) steps="$2"; shift 2 ;;
    *) echo "gpu_check.sh: error: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[ -d "$prep/artifacts" ] || { echo "gpu_check.sh: error: no $prep/artifacts (run tools/bench/gpu_prepare.sh on a host with mbtc)" >&2; exit 1; }
python=${PYTHON:-python3}

echo "== GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo unknown)"

# 1. The runtime, without the compiler. zlib: the system's, with the
#    carried headers where the system has none.
build="$prep/runtime"
zlib_args=()
if [ ! -f /usr/include/zlib.h ]; then
  zlib_lib=$(ls /usr/lib/x86_64-linux-gnu/libz.so* /lib/x86_64-linux-gnu/libz.so* /usr/lib64/libz.so* 2>/dev/null | head -1 || true)
  [ -n "$zlib_lib" ] || { echo "gpu_check.sh: error: no libz on this host" >&2; exit 1; }
  zlib_args=(-DZLIB_INCLUDE_DIR="$prep/deps" -DZLIB_LIBRARY="$zlib_lib")
fi
# NCCL: the toolkit's, else pip's (nvidia-nccl, beside PyTorch).
nccl_args=()
nccl_root=$(python3 -c 'import nvidia.nccl, os; print(os.path.dirname(nvidia.nccl.__file__))' 2>/dev/null || true)
[ -n "$nccl_root" ] && nccl_args=(-DMBT_NCCL_ROOT="$nccl_root")
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DMBT_BUILD_COMPILER=OFF -DMBT_BUILD_TESTS=OFF -DMBT_WITH_OPENBLAS=OFF \
  -DMBT_WITH_IMAGES=OFF -DMBT_WITH_NPZ=OFF -DMBT_WITH_TORCH=OFF \
  -DMBT_BUILD_CUDA=ON -DMBT_NLOHMANN_JSON_INCLUDE_DIR="$prep/deps" \
  -DMBT_CLI11_INCLUDE_DIR="$prep/deps" -DMBT_FMT_INCLUDE_DIR="$prep/deps" \
  -DMBT_MLIR_RUNNER_UTILS_INCLUDE_DIR="$prep/deps" \
  "${zlib_args[@]}" "${nccl_args[@]}" > "$prep/cmake.log" 2>&1 || { cat "$prep/cmake.log"; exit 1; }
nccl_check=()
ninja -C "$build" -t targets all | grep -q '^mbt-nccl-check:' && nccl_check=(mbt-nccl-check)
ninja -C "$build" mbt-gpu-check mbt-run "${nccl_check[@]}" > "$prep/ninja.log" 2>&1 || { tail -40 "$prep/ninja.log"; exit 1; }
check="$build/bin/mbt-gpu-check"

status=0
# 0. NCCL, for data across ranks of GPUs: a communicator of one rank sums
#    and broadcasts the gradients' size of MLP-S at N = 64.
if [ ${#nccl_check[@]} -gt 0 ]; then
  echo "== mbt-nccl-check: NCCL of one rank (data across ranks' sums)"
  "$build/bin/mbt-nccl-check" || status=1
else
  echo "== mbt-nccl-check: not built (no nccl.h and libnccl here)"
fi
declare -A mbt_ms
# time_step NAME KEY: times the GPU step of NAME (a ReLU spec, as the
# peers run) and keeps its ms/step in mbt_ms[KEY].
time_step() {
  local out
  out=$("$check" "$prep/artifacts/$1.cpu.so" "$prep/artifacts/$1.cuda.so" \
          --steps 0 --bench-steps "$steps") || status=1
  echo "$out"
  mbt_ms[$2]=$(awk '/^gpu models/ {for (i = 1; i <= NF; i++) if ($i == "ms/step") print $(i+1)}' <<< "$out")
}
for n in 64 1024; do
  check_steps=10 alone=(--alone "$prep/artifacts/mlp-s-1-check.cuda.so")
  [ "$n" = 1024 ] && check_steps=1 alone=()
  echo "== mbt-gpu-check, MLP-S N = $n, tanh: $check_steps steps against the CPU"
  "$check" "$prep/artifacts/mlp-s-$n-check.cpu.so" "$prep/artifacts/mlp-s-$n-check.cuda.so" \
    --steps "$check_steps" "${alone[@]}" || status=1
  echo "== mbt-gpu-check, MLP-S N = $n: $steps GPU steps timed"
  time_step "mlp-s-$n" "$n"
done

echo "== mbt-gpu-check, MLP-S N = 64, first layer frozen, tanh: 10 steps against the CPU"
"$check" "$prep/artifacts/mlp-s-64-freeze-check.cpu.so" \
  "$prep/artifacts/mlp-s-64-freeze-check.cuda.so" --steps 10 || status=1

declare -A rounding=([bf16]=3.9e-3 [f16]=9.8e-4)
for p in bf16 f16; do
  echo "== mbt-gpu-check, MLP-S N = 1024, precision = $p, tanh, SGD: 1 step against the CPU"
  "$check" "$prep/artifacts/mlp-s-1024-$p-check.cpu.so" \
    "$prep/artifacts/mlp-s-1024-$p-check.cuda.so" --steps 1 --updates \
    --tolerance "${rounding[$p]}" || status=1
  echo "== mbt-gpu-check, MLP-S N = 1024, precision = $p: $steps GPU steps timed"
  time_step "mlp-s-1024-$p" "$p"
done

echo "== mbt-run, MLP-S N = 64, one epoch of Fashion-MNIST on the GPU"
start=$(date +%s.%N)
MBT_DATA_DIR="$prep/data" "$build/bin/mbt-run" "$prep/artifacts/mlp-s-64.cuda.so" \
  --epochs 1 --quiet --out "$prep/results-64" > "$prep/mbt-run-64.log" 2>&1 || status=1
graphs_s=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
head -8 "$prep/mbt-run-64.log"
# The same epoch with every launch issued one by one (no CUDA graphs): the
# final checkpoints (every model's parameters and Adam state) must match
# byte for byte, since a replayed graph runs the same kernels.
start=$(date +%s.%N)
MBT_CUDA_GRAPHS=0 MBT_DATA_DIR="$prep/data" "$build/bin/mbt-run" \
  "$prep/artifacts/mlp-s-64.cuda.so" --epochs 1 --quiet \
  --out "$prep/results-64-nographs" > "$prep/mbt-run-64-nographs.log" 2>&1 || status=1
plain_s=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
if cmp -s "$prep/results-64/checkpoint.mbtrun" "$prep/results-64-nographs/checkpoint.mbtrun"; then
  echo "CUDA graphs: same final checkpoint as launch by launch (epoch: $graphs_s s with graphs, $plain_s s without)"
else
  echo "CUDA graphs: FINAL CHECKPOINTS DIFFER from launch by launch"; status=1
fi

declare -A peer_ms
for n in 64 1024; do
  echo "== PyTorch peers, MLP-S N = $n"
  out=$("$python" "$here/tools/bench/gpu_peers.py" --models "$n" --steps "$steps") || status=1
  echo "$out"
  for p in vmap vmap-compiled sequential; do
    peer_ms[$p-$n]=$(awk -v p="$p" '$1 == "PEER" && $2 == p && $3 == "ms/step" {print $4}' <<< "$out")
  done
done

echo
printf '%-8s %6s %14s %12s %16s %12s\n' workload N system ms/step model-samples/s "mbt speed-up"
for n in 64 1024; do
  m=${mbt_ms[$n]:-}
  printf '%-8s %6s %14s %12s %16s %12s\n' MLP-S "$n" mbt "${m:-failed}" \
    "$( [ -n "$m" ] && awk -v n="$n" -v t="$m" 'BEGIN {printf "%.0f", n * 128 / (t / 1e3)}')" "-"
  for p in vmap vmap-compiled sequential; do
    t=${peer_ms[$p-$n]:-}
    if [ -z "$t" ]; then
      printf '%-8s %6s %14s %12s %16s %12s\n' "" "" "$p" "-" "-" "-"
      continue
    fi
    printf '%-8s %6s %14s %12s %16s %12s\n' "" "" "$p" "$t" \
      "$(awk -v n="$n" -v t="$t" 'BEGIN {printf "%.0f", n * 128 / (t / 1e3)}')" \
      "$( [ -n "$m" ] && awk -v a="$t" -v b="$m" 'BEGIN {printf "%.2fx", a / b}')"
  done
done
for p in bf16 f16; do
  m=${mbt_ms[$p]:-}
  printf '%-8s %6s %14s %12s %16s %12s\n' MLP-S 1024 "mbt $p" "${m:-failed}" \
    "$( [ -n "$m" ] && awk -v t="$m" 'BEGIN {printf "%.0f", 1024 * 128 / (t / 1e3)}')" \
    "$( [ -n "$m" ] && [ -n "${mbt_ms[1024]:-}" ] && awk -v a="${mbt_ms[1024]}" -v b="$m" 'BEGIN {printf "%.2fx f32", a / b}')"
done
exit $status
