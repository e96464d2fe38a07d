#!/usr/bin/env python3
"""The Python snippets of a Markdown page run, in order, as they stand.

    doc_snippets.py PAGE.md

Each ```python block is executed in one shared namespace (later snippets
use what earlier ones made), in a fresh working directory. A snippet that
raises fails the page, naming the block and its first line. Exit status
0 when all run.
"""
import os
import re
import sys
import tempfile
import traceback


def main(page):
    with open(page, encoding="utf-8") as f:
        text = f.read()
    blocks = re.findall(r"^```python\n(.*?)^```", text, re.S | re.M)
    if not blocks:
        print(f"doc_snippets: FAIL: {page} has no python snippets")
        return 1
    os.chdir(tempfile.mkdtemp(prefix="mbt-doc-"))
    namespace = {"__name__": "__doc_snippets__"}
    for k, block in enumerate(blocks, 1):
        try:
            exec(compile(block, f"{page} snippet {k}", "exec"), namespace)
        except Exception:  # noqa: BLE001 - every failure is reported
            first = block.strip().splitlines()[0]
            print(f"doc_snippets: FAIL: snippet {k} of {page} ({first!r}):")
            traceback.print_exc()
            return 1
    print(f"doc_snippets: the {len(blocks)} snippets of {page} ran")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
