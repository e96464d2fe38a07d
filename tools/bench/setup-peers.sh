#!/usr/bin/env bash
# Installs the Python peers of tools/bench/side_by_side.sh into a virtual
# environment: PyTorch and the `modelbatch` package from PyPI (PyTorch's
# PyPI wheel brings its own optimized BLAS; Debian's python3-torch 1.13 is
# too old for torch.func and modelbatch). Idempotent.
#   tools/bench/setup-peers.sh [VENV]     (default: $MBT_BENCH_VENV or build/bench-venv)
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
venv="${1:-${MBT_BENCH_VENV:-$here/build/bench-venv}}"
if ! "$venv/bin/python3" -c 'import torch, modelbatch' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet torch modelbatch numpy
fi
"$venv/bin/python3" -c 'import torch, modelbatch; print("peers: torch", torch.__version__, "modelbatch", getattr(modelbatch, "__version__", "?"))'
