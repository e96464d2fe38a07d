#!/usr/bin/env bash
# Prepares, on a host with the compiler, what tools/bench/gpu_check.sh needs
# on a GPU host that has CUDA, CMake and PyTorch but no MLIR and no network:
#   build-gpu/artifacts/mlp-s-N.{cpu,cuda}.so   MLP-S 784-128-10, batch 128,
#                                               Adam, N in {64, 1024}, the
#                                               same spec for the CPU and
#                                               for --target=cuda (sm_90)
#   build-gpu/artifacts/mlp-s-1.cuda.so         the same spec with one
#                                               model
#   build-gpu/artifacts/*-check.*.so            each of these with tanh for
#                                               relu, and the 16-bit ones
#                                               with SGD for Adam: the
#                                               comparisons, whose step must
#                                               be smooth (gpu_check.sh)
#   build-gpu/artifacts/mlp-s-64-freeze.*.so   the N = 64 spec with its
#                                               first layer frozen
#   build-gpu/artifacts/mlp-s-1024-P.{cpu,cuda}.so  the N = 1024 spec with
#                                               precision = P, P in {bf16,
#                                               f16}: its GEMMs on the
#                                               tensor cores
#   build-gpu/deps/                             nlohmann/json, CLI11, fmt,
#                                               zlib and MLIR's
#                                               CRunnerUtils.h headers for
#                                               the runtime build
#   build-gpu/data/                             Fashion-MNIST (30 MB), for
#                                               one epoch trained by mbt-run
# build-gpu/ is ignored by git; hand it to the GPU host with the tree.
#
#   tools/bench/gpu_prepare.sh [--chip sm_90]
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
bin="${MBT_BUILD_DIR:-$here/build}/bin"
chip=sm_90
while [ $# -gt 0 ]; do
  case "$1" in
    --chip) chip="$2"; shift 2 ;;
    *) echo "gpu_prepare.sh: error: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
# shellcheck source=tools/bench/mlp_spec.sh
source "$here/tools/bench/mlp_spec.sh"
out="$here/build-gpu"
rm -rf "$out/artifacts" "$out/deps" "$out/data"
mkdir -p "$out/artifacts" "$out/deps"
# compile NAME: NAME.mbt to NAME.cpu.so (but for one model) and NAME.cuda.so.
# The host code for x86-64-v3 (AVX2), which every x86 GPU host has: code
# for this host's CPU (AVX-512 here) would be refused by the GPU host's
# runtime where its CPU lacks an extension of this one.
compile() {
  local spec="$out/artifacts/$1"
  # Serial loops: the GPU host has no LLVM OpenMP runtime for the CPU twin.
  case "$1" in mlp-s-1|mlp-s-1-*) ;; *)
    "$bin/mbtc" --mcpu=x86-64-v3 --parallel=false "$spec.mbt" \
      -o "$spec.cpu.so" ;;
  esac
  "$bin/mbtc" --mcpu=x86-64-v3 --target=cuda --cuda-chip="$chip" "$spec.mbt" \
    -o "$spec.cuda.so"
}
names=()
for n in 1 64 1024; do
  mlp_spec 784,128,10 "$n" "adam(lr = logspace(1e-4, 1e-2, models))" \
    "fashion_mnist(batch = 128)" > "$out/artifacts/mlp-s-$n.mbt"
  names+=("mlp-s-$n")
done
for p in bf16 f16; do
  sed -e "\$ s/^}\$/  precision = $p\n}/" "$out/artifacts/mlp-s-1024.mbt" \
    > "$out/artifacts/mlp-s-1024-$p.mbt"
  names+=("mlp-s-1024-$p")
done
# The N = 64 spec with its first layer frozen (the sweep's freeze: the
# trainable parameters first in a row, the update over their columns).
sed -e "\$ s/^}\$/  freeze = [\"w0\", \"b0\"]\n}/" "$out/artifacts/mlp-s-64.mbt" \
  > "$out/artifacts/mlp-s-64-freeze.mbt"
names+=("mlp-s-64-freeze")
for name in "${names[@]}"; do
  smooth=(-e 's/= relu(/= tanh(/')
  case "$name" in *-bf16|*-f16) smooth+=(-e 's/= adam(/= sgd(/') ;; esac
  sed "${smooth[@]}" "$out/artifacts/$name.mbt" > "$out/artifacts/$name-check.mbt"
  compile "$name"
  compile "$name-check"
done
data="${MBT_DATA_DIR:-/usr/share/datasets/fashion-mnist}"
mkdir -p "$out/data"
cp "$data"/*-idx?-ubyte* "$out/data/"
cp -r /usr/include/nlohmann /usr/include/CLI "$out/deps/"
cp /usr/include/zlib.h /usr/include/zconf.h "$out/deps/"
# fmt (the runtime's messages): its headers alone, used header-only there
# (FMT_HEADER_ONLY, cmake/MbtHeaderOnly.cmake).
cp -r /usr/include/fmt "$out/deps/"
# MLIR's header-only CRunnerUtils.h: the memref descriptor (Abi.h).
mkdir -p "$out/deps/mlir/ExecutionEngine"
cp /usr/lib/llvm-19/include/mlir/ExecutionEngine/CRunnerUtils.h \
  "$out/deps/mlir/ExecutionEngine/"
du -sh "$out"
