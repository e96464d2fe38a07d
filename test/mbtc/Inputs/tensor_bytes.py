"""Writes the raw bytes of tensor NAME of a safetensors FILE to stdout.

    python3 tensor_bytes.py FILE NAME > OUT

The lit tests compare them with cmp: a frozen parameter's bytes must be the
ones it started from, a trained one's must not.
"""
import json
import struct
import sys


def main(path, name):
    with open(path, "rb") as f:
        data = f.read()
    (header_len,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + header_len])
    if name not in header:
        sys.exit(f"{path}: no tensor '{name}'")
    begin, end = header[name]["data_offsets"]
    sys.stdout.buffer.write(data[8 + header_len + begin:8 + header_len + end])


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
