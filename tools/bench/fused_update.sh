#!/usr/bin/env bash
# The fused optimizer update against per-parameter, per-model loops (issue
# 4): compiles a 4-layer MLP (784-256-128-64-10, 8 parameter tensors,
# 242,762 parameters per model) trained as N models with Adam, each with
# its own learning rate and beta1, and times its optimizer step
# (mbt_optimizer_step) side by side with LibTorch's torch::optim::Adam
# stepping the same models one by one (per parameter tensor, and over one
# flat tensor per model), in one run with the same thread count.
#   tools/bench/fused_update.sh [N] [extra mbt-bench-fused-update flags]
#   (default N = 64; e.g. tools/bench/fused_update.sh 64 --threads 2)
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
bin="${MBT_BUILD_DIR:-$here/build}/bin"  # MBT_BUILD_DIR: another build tree
models="${1:-64}"
shift || true
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/deep.mbt" <<SPEC
import "nn"
model deep {
  input  x: f32[784]
  target y: class[10]
  fc1  = linear(x, 256)
  fc2  = linear(relu(fc1), 128)
  fc3  = linear(relu(fc2), 64)
  fc4  = linear(relu(fc3), dim(y))
  loss = cross_entropy(fc4, y)
}
sweep {
  models = $models
  optim  = adam(lr = logspace(1e-4, 1e-2, models),
                beta1 = linspace(0.8, 0.95, models))
}
SPEC
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
"$bin/mbtc" "$work/deep.mbt" -o "$work/deep.so"
"$bin/mbt-bench-fused-update" "$work/deep.so" "$@"
