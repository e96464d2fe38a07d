#!/usr/bin/env bash
# Installs the peer of tools/bench/batching.sh: the `online-dynamic-batching`
# package (PyPI) in a virtual environment over Debian's python3-torch (ODB's
# grouping needs only torch's tensors; the 1.13 Debian ships is enough, so
# no multi-GB PyTorch wheel is downloaded). Idempotent.
#   tools/bench/setup-batching-peer.sh [VENV]   (default: build/batching-venv)
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
venv="${1:-$here/build/batching-venv}"
if ! "$venv/bin/python3" -c 'import odb.grouping' 2>/dev/null; then
  /usr/bin/python3 -m venv --system-site-packages "$venv"
  "$venv/bin/pip" install --quiet --no-deps online-dynamic-batching==0.1.2
fi
"$venv/bin/python3" -c 'import odb, torch; print("peer: online-dynamic-batching", odb.__version__, "over torch", torch.__version__)'
