#!/usr/bin/env bash
# Formats the C++ sources with .clang-format (LLVM style), or checks them.
#   tools/dev/format.sh          rewrite every tracked .cpp/.h/.cu in place
#   tools/dev/format.sh --check  list the files that differ and fail (CI)
# Uses clang-format-19, the version of the LLVM the compiler builds on, so
# every machine formats alike; tools/dev/bootstrap.sh installs it.
set -euo pipefail
cd "$(dirname "$0")/../.."
format=$(command -v clang-format-19 || true)
if [ -z "$format" ]; then
  echo "format.sh: clang-format-19 not found (tools/dev/bootstrap.sh --no-build installs it)" >&2
  exit 2
fi
mapfile -t files < <(git ls-files --cached --others --exclude-standard '*.cpp' '*.h' '*.inc' '*.cu')
if [ "${1:-}" != "--check" ]; then
  "$format" -i "${files[@]}"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  "$format" --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [ ${#bad[@]} -gt 0 ]; then
  echo "format.sh: ${#bad[@]} file(s) differ from .clang-format:" >&2
  printf '  %s\n' "${bad[@]}" >&2
  echo "run tools/dev/format.sh (or git clang-format-19 for staged changes)" >&2
  exit 1
fi
echo "format.sh: ${#files[@]} files formatted as .clang-format says"
