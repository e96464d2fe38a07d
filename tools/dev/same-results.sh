#!/usr/bin/env bash
# Shows that a change to the compiler or the runtime changes no result.
#
#   tools/dev/same-results.sh --snapshot DIR     keep build/bin and build/lib
#                                                in DIR (before the change)
#   tools/dev/same-results.sh DIR [--train] [SPEC...]
#                                                compare DIR with build/
#
# The comparison compiles every example (or each SPEC) with DIR's mbtc and
# with build/'s into LLVM IR (`mbtc --emit=llvm`: the artifact's code and
# its manifest) and requires the two texts to be equal, or else the code to
# be equal and the two manifests to be equal as JSON values (a change of the
# manifest writer may spell the same numbers differently). With --train it
# also trains each pair of artifacts for one epoch, each with its own
# build's mbt-run, and requires equal leaderboard.json and metrics.jsonl,
# byte for byte. Prints one line per spec; exits 1 on any difference.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${MBT_BUILD_DIR:-$here/build}

if [ "${1:-}" = "--snapshot" ]; then
  dir=${2:?usage: same-results.sh --snapshot DIR}
  mkdir -p "$dir"
  cp -a "$build/bin" "$build/lib" "$dir/"
  echo "same-results: kept $build/bin and $build/lib in $dir"
  exit 0
fi

before=$(cd "${1:?usage: same-results.sh DIR [--train] [SPEC...]}" && pwd)
shift
train=0
if [ "${1:-}" = "--train" ]; then train=1; shift; fi
specs=("$@")
[ ${#specs[@]} -gt 0 ] || specs=("$here"/examples/*.mbt)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
for spec in "${specs[@]}"; do
  name=$(basename "$spec" .mbt)
  for side in before after; do
    bin=$before/bin
    [ $side = after ] && bin=$build/bin
    mkdir -p "$work/$side/$name"
    "$bin/mbtc" --emit=llvm "$spec" -o "$work/$side/$name.ll"
  done
  if cmp -s "$work/before/$name.ll" "$work/after/$name.ll"; then
    what="same LLVM IR"
  elif python3 "$here/tools/dev/compare-artifact-ir.py" \
      "$work/before/$name.ll" "$work/after/$name.ll"; then
    what="same code and manifest (the manifest's JSON text differs)"
  else
    echo "$name: the LLVM IR differs"
    status=1
    continue
  fi
  if [ $train = 0 ]; then
    echo "$name: $what"
    continue
  fi
  for side in before after; do
    bin=$before/bin
    [ $side = after ] && bin=$build/bin
    "$bin/mbtc" "$spec" -o "$work/$side/$name.so"
    "$bin/mbt-run" "$work/$side/$name.so" --out "$work/$side/$name" \
      --epochs 1 --quiet >/dev/null
  done
  same=1
  for file in leaderboard.json metrics.jsonl; do
    cmp -s "$work/before/$name/$file" "$work/after/$name/$file" || {
      echo "$name: $file differs"; same=0; status=1; }
  done
  [ $same = 1 ] && echo "$name: $what, same leaderboard and metrics"
done
exit $status
