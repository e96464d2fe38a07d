#!/usr/bin/env bash
# Reruns the tests labelled `blas` (batch-vs-alone, LibTorch references,
# finite differences: every number goes through OpenBLAS's sgemm/dgemm in
# mbt's runtime and in LibTorch) under OpenBLAS's kernel types other than
# the one it picks on this CPU, so a tolerance that holds only for one
# kernel's summation order fails here and not on the next machine:
#   Haswell   AVX2 + FMA (AMD Zen gets these too)
#   SkylakeX  AVX-512 (only where the CPU has avx512f)
#   Prescott  SSE3, the generic x86-64 kernels
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

status=0
for kernel in "${kernels[@]}"; do
  [ "$kernel" = "$native" ] && continue
  echo "== tests labelled blas under OPENBLAS_CORETYPE=$kernel (native: ${native:-unknown})"
  (cd "$build" &&
   OPENBLAS_CORETYPE=$kernel MBT_TEST_REUSE_ARTIFACTS=1 \
     ctest -L '^blas$' --output-on-failure -j"$(nproc)") || status=1
done
exit $status
