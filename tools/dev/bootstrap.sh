#!/usr/bin/env bash
# Installs what mbt needs on Debian 12 (idempotent: apt skips what is
# installed), then configures and builds mbt in build/ (incremental).
#   tools/dev/bootstrap.sh            install + build
#   tools/dev/bootstrap.sh --no-build install only
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)

packages=(build-essential cmake ninja-build python3
  llvm-19-dev llvm-19-tools libmlir-19-dev mlir-19-tools
  libomp-19-dev  # OpenMP runtime: mbtc --parallel (the default)
  libgtest-dev libgmock-dev libfmt-dev libopenblas0-pthread libopenblas-dev
  libdnnl-dev  # oneDNN: bf16 products where the CPU has them (precision = bf16)
  zlib1g-dev nlohmann-json3-dev
  libminizip-dev libcsv-dev libpng-dev libjpeg62-turbo-dev  # your own data: npz, CSV, images
  libcli11-dev dataset-fashion-mnist libtorch-dev libgloo-dev
  pybind11-dev python3-dev  # the Python module (python/): import mbt
  python3-numpy  # test/python: writes .npy/.npz as NumPy does
  python3-torch  # test/python: mbt's .pt state dicts, loaded by PyTorch
  python3-sklearn  # examples/: its data sets (Boston housing, iris) as CSV
  python3-optuna  # mbt.optuna: the batched search (Debian 12: Optuna 3.1)
  fortunes  # the default text task (docs/data.md)
  chromium  # test/report: report.html as a browser renders it
  clang-14 libclang-rt-14-dev  # clang + libFuzzer: tools/dev/fuzz.sh
  clang-format-19)  # tools/dev/format.sh: the sources' layout (.clang-format)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  echo "bootstrap: installing ${missing[*]}"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

[ "${1:-}" = "--no-build" ] && exit 0

build="$here/build"
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR=/usr/lib/llvm-19/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-19/build/utils/lit/lit.py
fi
ninja -C "$build" -j"$(nproc)"

# `import mbt` from the build tree, for the system's Python: a .pth file in
# its site-packages names build/python (python/CMakeLists.txt).
if [ -d "$build/python/mbt" ]; then
  site=$(/usr/bin/python3 -c 'import site; print(site.getsitepackages()[0])')
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo mkdir -p "$site"
  echo "$build/python" | $sudo tee "$site/mbt.pth" > /dev/null
fi
