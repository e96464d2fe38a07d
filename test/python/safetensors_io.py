"""The safetensors format by its definition, for the tests that check mbt's
files without the safetensors package: a little-endian u64 header length,
the JSON header (name -> dtype, shape, data_offsets; "__metadata__"), then
the raw little-endian tensors."""
import json
import struct

import numpy as np

NUMPY_DTYPES = {"F32": "<f4", "F64": "<f8", "F16": "<f2"}


def read_safetensors(path):
    """name -> numpy array (F32, F64, F16) of the file at `path`."""
    with open(path, "rb") as f:
        data = f.read()
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + size])
    out = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        out[name] = np.frombuffer(
            data[8 + size + begin:8 + size + end],
            dtype=NUMPY_DTYPES[entry["dtype"]]).reshape(entry["shape"])
    return out


def write_safetensors(path, arrays):
    """Writes name -> float32 numpy array, in order, as safetensors does."""
    header, offset, blobs = {}, 0, []
    for name, array in arrays.items():
        blob = np.ascontiguousarray(array, dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(blob)]}
        offset += len(blob)
        blobs.append(blob)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))
