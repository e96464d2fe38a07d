#!/usr/bin/env bash
# Runs the generated-GEMM benchmark built by build.sh. Arg: repeats (default 20).
# OpenBLAS must be told the core type on this VM, or it falls back to its
# SSE3 "Prescott" kernels; one OpenBLAS thread per caller (threads are ours).
set -euo pipefail
out=${GG_BUILD:-/tmp/mbt-generated-gemm}
export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-SkylakeX}
export OPENBLAS_NUM_THREADS=1
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
exec "$out/bench" "${1:-20}"
