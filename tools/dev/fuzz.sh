#!/usr/bin/env bash
# Builds a fuzzer (test/fuzz) with clang, ASan and UBSan in a build of its
# own, then fuzzes for SECONDS (default 60): TARGET `frontend` (the
# default: the .mbt lexer, parser and checks) or `data` (the runtime's
# readers of data files (idx, token sequences, npy/npz, safetensors, CSV,
# images), checkpoints and manifests).
#   tools/dev/fuzz.sh [SECONDS] [BUILD_DIR] [TARGET]
# BUILD_DIR defaults to build-fuzz next to the main build
# (${MBT_BUILD_DIR:-build}-fuzz); it is configured once, then rebuilt
# incrementally. MBT_FUZZ_JOBS caps the build's parallelism.
# New inputs go to BUILD_DIR/corpus (BUILD_DIR/data-corpus for `data`; the
# committed seeds in test/fuzz/corpus and test/fuzz/data-corpus are only
# read), crashes to BUILD_DIR/artifacts. Exits non-zero on any
# crash, leak, timeout (an input that runs over 10 s), out-of-memory or
# sanitizer report.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
seconds=${1:-60}
build=${2:-${MBT_BUILD_DIR:-$here/build}-fuzz}
target=${3:-frontend}
case "$target" in
  frontend) fuzzer=mbt-frontend-fuzzer corpus=corpus
            extra=(-dict="$here/test/fuzz/mbt.dict") ;;
  data) fuzzer=mbt-data-fuzzer corpus=data-corpus extra=(-max_len=8192) ;;
  *) echo "fuzz.sh: unknown target '$target' (frontend or data)" >&2; exit 2 ;;
esac

cxx=$(command -v clang++-14 || true)
cc=$(command -v clang-14 || true)
if [ -z "$cxx" ] || [ -z "$cc" ]; then
  echo "fuzz.sh: clang-14 is missing" \
    "(apt-get install clang-14 libclang-rt-14-dev)" >&2
  exit 1
fi

if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$here" -B "$build" -DMBT_FUZZ_ONLY=ON \
    -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_C_COMPILER="$cc" \
    -DMLIR_DIR=/usr/lib/llvm-19/lib/cmake/mlir
fi
ninja -C "$build" -j"${MBT_FUZZ_JOBS:-$(nproc)}" "$fuzzer"

mkdir -p "$build/$corpus" "$build/artifacts"
asan=detect_leaks=1:detect_stack_use_after_return=1
export ASAN_OPTIONS=${ASAN_OPTIONS:-$asan}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# The first corpus directory receives new inputs; the second is only read.
exec "$build/bin/$fuzzer" \
  -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  "${extra[@]}" -print_final_stats=1 \
  -artifact_prefix="$build/artifacts/" \
  "$build/$corpus" "$here/test/fuzz/$corpus"
