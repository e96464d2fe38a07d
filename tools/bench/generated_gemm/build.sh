#!/usr/bin/env bash
# Builds the generated-GEMM benchmark: batch_matmul.mlir scheduled by
# schedule.mlir (transform dialect) -> LLVM dialect -> LLVM IR -> object
# (opt-19/llc-19 -O3 for the host CPU, AVX-512), plus harness.cpp against
# OpenBLAS. Products go to $GG_BUILD (default /tmp/mbt-generated-gemm).
#   tools/bench/generated_gemm/build.sh && tools/bench/generated_gemm/run.sh
# GG_MCPU overrides the target CPU (default: native).
set -euo pipefail
src=$(cd "$(dirname "$0")" && pwd)
out=${GG_BUILD:-/tmp/mbt-generated-gemm}
mcpu=${GG_MCPU:-native}
mkdir -p "$out"
# 1. schedule + lower to the LLVM dialect
mlir-opt-19 "$src/batch_matmul.mlir" \
  --transform-preload-library="transform-library-paths=$src/schedule.mlir" \
  --transform-interpreter \
  -o "$out/scheduled.mlir"
mlir-opt-19 "$out/scheduled.mlir" \
  --canonicalize --cse \
  --convert-vector-to-scf=full-unroll=true --convert-linalg-to-loops \
  --lower-affine --convert-scf-to-cf --canonicalize \
  --convert-vector-to-llvm --expand-strided-metadata --lower-affine \
  --finalize-memref-to-llvm --convert-arith-to-llvm --convert-index-to-llvm \
  --convert-func-to-llvm --convert-cf-to-llvm --reconcile-unrealized-casts \
  -o "$out/kernels.llvm.mlir"
# 2. LLVM IR -> object. -mattr=-prefer-256-bit: keep 512-bit zmm registers
#    (Skylake-X/Icelake tuning otherwise splits <32 x float> into ymm halves).
mlir-translate-19 --mlir-to-llvmir "$out/kernels.llvm.mlir" -o "$out/kernels.ll"
opt-19 -O3 -mcpu="$mcpu" -mattr=-prefer-256-bit "$out/kernels.ll" -S -o "$out/kernels.opt.ll"
llc-19 -O3 -mcpu="$mcpu" -mattr=-prefer-256-bit "$out/kernels.opt.ll" -o "$out/kernels.s"
llc-19 -O3 -mcpu="$mcpu" -mattr=-prefer-256-bit -filetype=obj "$out/kernels.opt.ll" -o "$out/kernels.o"
# 3. harness (C++17) + OpenBLAS
cxx=${CXX:-clang++-14}
$cxx -O2 -std=c++17 -I/usr/include/x86_64-linux-gnu/openblas-pthread \
  "$src/harness.cpp" "$out/kernels.o" -o "$out/bench" -lopenblas -lpthread
echo "built $out/bench ($(grep -c zmm "$out/kernels.s") zmm instructions in kernels.s)"
