#!/usr/bin/env bash
# Batching side by side: fixed, fixed-shape, group-by-length, the
# online-dynamic-batching package and mbt's dynamic batcher, on ODB's
# synthetic length mix and on the fortunes text task, then the training
# throughput of each plan on fortunes. Installs the ODB peer
# (tools/bench/setup-batching-peer.sh) and builds mbt-data, mbtc and
# mbt-run first.
#   tools/bench/batching.sh [batching.py options, e.g. --window 64]
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
build="${MBT_BUILD_DIR:-$here/build}"
ninja -C "$build" mbt-data mbtc mbt-run >/dev/null
"$here/tools/bench/setup-batching-peer.sh" "$build/batching-venv"
exec "$build/batching-venv/bin/python3" "$here/tools/bench/batching.py" \
  --mbt-data "$build/bin/mbt-data" --mbtc "$build/bin/mbtc" \
  --mbt-run "$build/bin/mbt-run" "$@"
