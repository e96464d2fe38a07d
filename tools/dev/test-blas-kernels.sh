#!/usr/bin/env bash
# Reruns the tests labelled `blas` (batch-vs-alone, LibTorch references,
# finite differences: every number goes through a GEMM library, in mbt's
# runtime and in LibTorch) under the summation orders the first ctest run
# did not see, so a tolerance that holds only for one of them fails here
# and not on the next machine. mbt's f32 products run on oneDNN or OpenBLAS
# by their shape and the CPU (docs/abi.md); each pass below takes one
# library for all of them (MBT_F32_MATMUL):
#   OpenBLAS under its kernel types other than the one it picks here:
#     Haswell   AVX2 + FMA (AMD Zen gets these too)
#     SkylakeX  AVX-512 (only where the CPU has avx512f)
#     Prescott  SSE3, the generic x86-64 kernels
#   oneDNN    every f32 product, where the runtime has it
# The Prescott pass also runs every f32 convolution on the runtime's
# reference loops (MBT_CONV=reference) instead of oneDNN's convolution,
# and the attention on the runtime's baseline x86-64 code
# (MBT_ATTENTION_CODE=baseline); the Haswell pass runs the attention on its
# x86-64-v3 code (AVX2 + FMA) where the CPU has it.
# Artifacts compiled by the first ctest run are reused
# (MBT_TEST_REUSE_ARTIFACTS), so each pass costs training time only.
#   tools/dev/test-blas-kernels.sh [BUILD_DIR]      (default: build)
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$here/build}" && pwd)

# The kernel type OpenBLAS picks here; the first ctest run tested it.
native=$(OPENBLAS_VERBOSE=2 "$build/bin/mbt-run" --help 2>&1 |
         sed -n 's/^Core: //p' | head -n1)
kernels=(Haswell Prescott)
grep -qw avx512f /proc/cpuinfo && kernels=(SkylakeX "${kernels[@]}")

# Whether the CPU has x86-64-v3's features (the attention's AVX2 code).
has_x86_64_v3() {
  local flag
  for flag in avx2 fma bmi1 bmi2 f16c movbe abm; do
    grep -qw "$flag" /proc/cpuinfo || return 1
  done
}

status=0
for kernel in "${kernels[@]}"; do
  [ "$kernel" = "$native" ] && continue
  conv=""
  attention=""
  [ "$kernel" = Prescott ] && conv=reference && attention=baseline
  [ "$kernel" = Haswell ] && has_x86_64_v3 && attention=x86-64-v3
  echo "== tests labelled blas under OPENBLAS_CORETYPE=$kernel (native: ${native:-unknown})${conv:+, convolutions on the reference loops}${attention:+, attention on its $attention code}"
  (cd "$build" &&
   OPENBLAS_CORETYPE=$kernel MBT_F32_MATMUL=openblas MBT_CONV=$conv \
     MBT_ATTENTION_CODE=$attention \
     MBT_TEST_REUSE_ARTIFACTS=1 \
     ctest -L '^blas$' --output-on-failure -j"$(nproc)") || status=1
done

cache="$build/CMakeCache.txt"
if grep -q '^MBT_WITH_DNNL:BOOL=ON' "$cache" &&
   grep -q '^MBT_DNNL_LIBRARY:FILEPATH=/' "$cache"; then
  echo "== tests labelled blas with every f32 product on oneDNN"
  (cd "$build" &&
   MBT_F32_MATMUL=onednn MBT_TEST_REUSE_ARTIFACTS=1 \
     ctest -L '^blas$' --output-on-failure -j"$(nproc)") || status=1
fi
exit $status
