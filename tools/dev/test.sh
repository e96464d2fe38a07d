#!/usr/bin/env bash
# Installs, builds and runs every test: the lit suites (compiler output)
# and the GoogleTest suites (runtime, numerics, equivalence) through ctest.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
"$here/tools/dev/bootstrap.sh"
cd "$here/build"
ctest --output-on-failure -j"$(nproc)"
