#!/usr/bin/env bash
# Installs, builds and runs every test: the sources' layout
# (tools/dev/format.sh --check), the lit suites (compiler output)
# and the GoogleTest suites (runtime, numerics, equivalence) through ctest,
# then the numeric suites again under OpenBLAS's other kernel types
# (tools/dev/test-blas-kernels.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
"$here/tools/dev/bootstrap.sh" --no-build
"$here/tools/dev/format.sh" --check
"$here/tools/dev/bootstrap.sh"
cd "$here/build"
ctest --output-on-failure -j"$(nproc)"
"$here/tools/dev/test-blas-kernels.sh" "$here/build"
