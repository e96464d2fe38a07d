#!/usr/bin/env python3
"""mbt reads what torch.save writes, and refuses what is not a state dict.

One artifact (a 4-2 linear model, parameters w [4, 2] and b [2]) is
compiled once; each case writes a .pt file with torch.save and runs
`mbt-run ARTIFACT --init FILE` at lr 0:
  - files mbt must read: a plain dict, an OrderedDict saved with pickle
    protocol 4 (other opcodes), a transposed view (strided storage, copied
    out in C order) and a tensor at an offset of a shared storage, each
    ending with exactly the file's values;
  - files it must refuse, each with its own message naming the file and,
    where there is one, the tensor: a list, a checkpoint that nests the
    state dict, an object of another class, a legacy (non-zip) file, a
    truncated file, a complex tensor, an integer tensor, a wrong shape, a
    corrupt pickle; a refused file leaves no results behind.
A reader that accepts any of them, crashes, or reads a view wrongly fails
it. Exit status 0 when all behave; a message and 1 otherwise.

A third artifact has a batch norm: the state dict of torch's
nn.BatchNorm1d, whose num_batches_tracked mbt's batch norm does not have,
loads all the same (its weight and bias end as the file's at lr 0).
"""
import argparse
import collections
import os
import shutil
import subprocess
import sys
import zipfile

import numpy as np
import torch

from safetensors_io import read_safetensors

SPEC = """
model m {
  input  x: f32[4]
  target y: class[2]
  param  w: f32[4, 2] = xavier_uniform
  param  b: f32[2] = zeros
  loss   = cross_entropy(x @ w + b, y)
}
sweep {
  models = 1
  optim  = sgd(lr = 0.0)
  data   = npy(x = "x.npy", y = "y.npy", batch = 2)
  epochs = 1
}
"""

BN_SPEC = """
import "nn"
model m {
  input  x: f32[4]
  target y: class[2]
  param  w: f32[4, 2] = xavier_uniform
  bn     = batch_norm1d(x)
  loss   = cross_entropy(bn @ w, y)
}
sweep {
  models = 1
  optim  = sgd(lr = 0.0)
  data   = npy(x = "x.npy", y = "y.npy", batch = 2)
  epochs = 1
  init   = checkpoint("bn.pt")
}
"""


def check_batch_norm(args, w):
    """torch's BatchNorm1d state dict (with num_batches_tracked) loads."""
    bn = torch.nn.BatchNorm1d(4)
    with torch.no_grad():
        bn.weight.copy_(torch.tensor([1.5, 2.0, -1.0, 0.25]))
        bn.bias.copy_(torch.tensor([0.1, 0.2, 0.3, 0.4]))
    bn(torch.randn(8, 4))  # running statistics and the count move
    state = {"bn." + k: v for k, v in bn.state_dict().items()}
    state["w"] = torch.ones(4, 2)
    torch.save(state, w("bn.pt"))  # strict: every tensor is used
    with open(w("bn.mbt"), "w") as f:
        f.write(BN_SPEC)
    result = subprocess.run([args.mbtc, "train", w("bn.mbt"), "--out",
                             w("out-bn"), "--quiet"],
                            capture_output=True, text=True)
    if result.returncode != 0:
        return ["batch norm: refused: " + result.stderr.strip()]
    got = read_safetensors(w("out-bn/models/model-0.safetensors"))
    if not (np.array_equal(got["bn.weight"], bn.weight.detach().numpy()) and
            np.array_equal(got["bn.bias"], bn.bias.detach().numpy())):
        return ["batch norm: weight and bias are not the file's"]
    print("%-16s read" % "batch-norm")
    return []


def good_cases():
    """name -> (object to save, save arguments, expected w, expected b)."""
    w = torch.arange(8, dtype=torch.float32).reshape(4, 2) / 8
    b = torch.tensor([0.5, -0.25])
    shared = torch.arange(10, dtype=torch.float32)
    return {
        "plain-dict": ({"w": w, "b": b}, {}, w, b),
        "protocol-4": (collections.OrderedDict(w=w, b=b),
                       {"pickle_protocol": 4}, w, b),
        "transposed-view": ({"w": w.t().contiguous().t(), "b": b}, {}, w, b),
        "shared-storage": ({"w": shared[2:10].view(4, 2), "b": shared[:2]},
                           {}, shared[2:10].view(4, 2), shared[:2]),
    }


def bad_cases(work):
    """name -> (object to save or None, save arguments, expected text)."""
    w, b = torch.zeros(4, 2), torch.zeros(2)
    return {
        "list": ([w, b], {}, "holds a list, not a state dict"),
        "nested": ({"model": {"w": w, "b": b}, "epoch": 3}, {},
                   "entry 'model' is a dict, not a tensor"),
        "object": ({"w": w, "b": b, "args": argparse.Namespace(lr=1)}, {},
                   "names 'argparse.Namespace', which a state dict"),
        "legacy": ({"w": w, "b": b},
                   {"_use_new_zipfile_serialization": False},
                   "is a legacy torch.save file"),
        "complex": ({"w": w.to(torch.complex64), "b": b}, {},
                    "torch.ComplexFloatStorage, which mbt does not convert"),
        "integer": ({"w": w.long(), "b": b}, {},
                    "tensor 'w' holds i64 values"),
        "shape": ({"w": torch.zeros(2, 4), "b": b}, {},
                  "tensor 'w' has shape [2, 4], but 'w' of model 'm' is "
                  "[4, 2] (it looks transposed"),
        "truncated": (None, {}, "is not a .pt file"),
        "corrupt-pickle": (None, {}, "data.pkl, byte"),
    }


def damage(work, name):
    """The truncated and the corrupt-pickle files, made from a good one."""
    good = os.path.join(work, "plain-dict.pt")
    path = os.path.join(work, name + ".pt")
    if name == "truncated":
        with open(good, "rb") as f:
            data = f.read()
        with open(path, "wb") as f:
            f.write(data[:len(data) // 2])
        return path
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(path, "w") as dst:
        for item in src.infolist():
            data = src.read(item)
            if item.filename.endswith("data.pkl"):
                data = data[:len(data) // 2] + b"\xff" + data[len(data) // 2:]
            dst.writestr(item, data)
    return path


def run(args, path, out):
    return subprocess.run([args.mbt_run, args.artifact, "--init", path,
                           "--out", out, "--quiet"],
                          capture_output=True, text=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mbtc", required=True)
    parser.add_argument("--mbt-run", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    w = lambda name: os.path.join(args.work, name)
    np.save(w("x.npy"), np.ones((4, 4), np.float32))
    np.save(w("y.npy"), np.array([0, 1, 0, 1], np.int64))
    with open(w("spec.mbt"), "w") as f:
        f.write(SPEC)
    args.artifact = w("spec.so")
    compiled = subprocess.run([args.mbtc, w("spec.mbt"), "-o", args.artifact],
                              capture_output=True, text=True)
    if compiled.returncode != 0:
        print(compiled.stdout + compiled.stderr, file=sys.stderr)
        return 1

    failures = check_batch_norm(args, w)
    for name, (obj, kwargs, want_w, want_b) in good_cases().items():
        torch.save(obj, w(name + ".pt"), **kwargs)
        result = run(args, w(name + ".pt"), w("out-" + name))
        if result.returncode != 0:
            failures.append("%s: refused: %s" % (name, result.stderr.strip()))
            continue
        got = read_safetensors(w("out-%s/models/model-0.safetensors" % name))
        if not (np.array_equal(got["w"], want_w.numpy()) and
                np.array_equal(got["b"], want_b.numpy())):
            failures.append("%s: the model does not end with the file's "
                            "values" % name)
        print("%-16s read" % name)
    for name, (obj, kwargs, text) in bad_cases(args.work).items():
        path = w(name + ".pt")
        if obj is None:
            path = damage(args.work, name)
        else:
            torch.save(obj, path, **kwargs)
        out = w("out-" + name)
        result = run(args, path, out)
        message = result.stderr.strip()
        print("%-16s %s" % (name, message))
        if result.returncode == 0 or result.returncode >= 128:
            failures.append("%s: exit status %d" % (name, result.returncode))
        if text not in message or path not in message:
            failures.append("%s: expected '%s' and the path in: %s" %
                            (name, text, message))
        if os.path.exists(os.path.join(out, "models")):
            failures.append("%s: results were written" % name)
    for failure in failures:
        print("torch_checkpoint_errors: " + failure, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
