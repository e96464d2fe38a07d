#!/usr/bin/env python3
"""Compares two artifacts' LLVM IR (mbtc --emit=llvm) as same-results.sh
needs: the code outside the embedded manifest must be the same text, and the
two manifests the same JSON values (numbers compared by value, keys in any
order). Prints what differs; exits 0 when both hold, 1 otherwise.

    compare-artifact-ir.py BEFORE.ll AFTER.ll
"""
import json
import re
import sys

MANIFEST = re.compile(
    r'^@mbt\.manifest = (.*)constant \[\d+ x i8\] c"(.*)"(.*)$')


def split(path):
    """The IR without the manifest's bytes, and the manifest as JSON."""
    code, manifest = [], None
    with open(path, encoding="latin-1") as ir:
        for line in ir:
            match = MANIFEST.match(line.rstrip("\n"))
            if not match:
                code.append(line)
                continue
            # LLVM writes a byte that is not printable, '"' or '\' as \XX.
            text = re.sub(r"\\([0-9A-Fa-f]{2})",
                          lambda m: chr(int(m.group(1), 16)), match.group(2))
            manifest = json.loads(text.rstrip("\0").encode("latin-1"))
            code.append("@mbt.manifest = %sconstant c\"...\"%s\n"
                        % (match.group(1), match.group(3)))
    return code, manifest


def main():
    before, after = (split(path) for path in sys.argv[1:3])
    same = True
    if before[0] != after[0]:
        print("  the code differs")
        same = False
    if before[1] != after[1]:
        print("  the manifests differ as JSON values:")
        print("  before: %s" % json.dumps(before[1], sort_keys=True)[:2000])
        print("  after:  %s" % json.dumps(after[1], sort_keys=True)[:2000])
        same = False
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
