#!/usr/bin/env bash
# Mutation check of the numeric reference tests: breaks one thing at a time
# (a wrong bias correction, an off-by-one step count, a wrong batch-norm
# momentum), rebuilds what it touched, runs the tests that guard it, and
# reports whether each test failed, as it must. Restores the tree and
# rebuilds at the end, also when interrupted.
#   tools/dev/mutants.sh [BUILD_DIR]        (default: build)
# Prints one line per (mutant, test): "caught" or "MISSED", with the first
# failed assertion; exits 1 if any mutant was missed.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$here/build}" && pwd)
ref="$build/test/unit/reference"

# name | file | text | replacement | tests (space-separated SUITE=TEST).
# The step count reaches SGD only through its first step's buffer
# (`where(step == 1, d, ...)`), which is the same without dampening: the
# off-by-one is caught by Adam's cases and by the SGD sweep with dampening,
# and it is no error at all for the undampened SGD cases.
R=mbt-torch-reference-tests B=mbt-torch-batchnorm-tests O=mbt-torch-optimizer-tests
mutants=(
  "adam-bias-correction-without-sqrt|stdlib/optim.mbt|denom = sqrt(second) / sqrt(1 - pow(beta2, step)) + eps|denom = sqrt(second) / (1 - pow(beta2, step)) + eps|$R=EquivalenceWithLibTorch.AdamReluHeadWithinFloat32Rounding $R=EquivalenceWithLibTorch.F64AdamReluHeadMatchesTorchFloat64 $R=EquivalenceWithLibTorch.AdamLoneModelMatchesTorchOptim"
  "adam-first-moment-correction-one-step-late|stdlib/optim.mbt|param = param - lr / (1 - pow(beta1, step)) * (exp_avg / denom)|param = param - lr / (1 - pow(beta1, step + 1)) * (exp_avg / denom)|$R=EquivalenceWithLibTorch.AdamReluHeadWithinFloat32Rounding $R=EquivalenceWithLibTorch.F64AdamReluHeadMatchesTorchFloat64"
  "optimizer-step-count-off-by-one|runtime/lib/Trainer.cpp|static_cast<double>(stepCount) : 0.0|static_cast<double>(stepCount + 1) : 0.0|$R=EquivalenceWithLibTorch.AdamReluHeadWithinFloat32Rounding $R=EquivalenceWithLibTorch.F64AdamReluHeadMatchesTorchFloat64 $O=OptimizersMatchTorch.SgdMomentumDampeningWeightDecay"
  "batch-norm-momentum-0.2|compiler/Frontend/SemaBuiltins.cpp|{\"momentum\", ConstScalar::Float, 0.1}|{\"momentum\", ConstScalar::Float, 0.2}|$B=BatchNormWithLibTorch.DenseFeaturesMatchTorchBatchNorm1d $B=BatchNormWithLibTorch.ConvolutionChannelsWithinFloat32Rounding $B=BatchNormWithLibTorch.F64DenseFeaturesMatchTorchBatchNorm1d $B=BatchNormWithLibTorch.F64ConvolutionChannelsMatchTorchBatchNorm2d $B=BatchNormWithLibTorch.F64ReluMaxPoolChannelsMatchTorchBatchNorm2d"
)

backup=$(mktemp -d)
touched=()
restore() {
  for f in "${touched[@]}"; do cp "$backup/$(echo "$f" | tr / _)" "$here/$f"; done
  touched=()
}
trap 'restore; ninja -C "$build" >/dev/null' EXIT

# Replaces the first occurrence of $2 in file $1 by $3; fails if absent.
mutate() {
  python3 - "$here/$1" "$2" "$3" <<'PY'
import sys
path, old, new = sys.argv[1:]
text = open(path).read()
if old not in text:
    sys.exit(f"mutants.sh: '{old}' not found in {path}")
open(path, "w").write(text.replace(old, new, 1))
PY
}

missed=0
for entry in "${mutants[@]}"; do
  IFS='|' read -r name file old new tests <<<"$entry"
  cp "$here/$file" "$backup/$(echo "$file" | tr / _)"
  touched=("$file")
  mutate "$file" "$old" "$new"
  ninja -C "$build" "$R" "$B" "$O" mbtc >/dev/null
  for item in $tests; do
    suite=${item%%=*} test=${item#*=}
    log=$("$ref/$suite" --gtest_filter="$test" 2>&1 || true)
    if grep -q "^\[  PASSED  \] 1 test" <<<"$log"; then
      echo "MISSED  $name  $test"
      missed=1
    elif grep -q "^\[  FAILED  \]" <<<"$log"; then
      first=$(grep -m1 -A1 "Failure" <<<"$log" | tail -1 | tr -s ' ')
      echo "caught  $name  $test  ($first)"
    else
      echo "MISSED  $name  $test  (no test ran: check the filter)"
      missed=1
    fi
  done
  restore
done
exit $missed
