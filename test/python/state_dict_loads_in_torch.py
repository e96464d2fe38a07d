#!/usr/bin/env python3
"""mbt's per-model state dicts, read by PyTorch.

Trains a sweep of 3 models for one epoch with `mbtc train`, then, for each
model, loads DIR/models/model-<i>.pt with torch.load into a torch.nn.Module
written to match the spec (the same parameter names and shapes),
load_state_dict(strict=True), evaluates it on the Fashion-MNIST test split
and checks that its mean loss and accuracy are the test_loss and test_acc
that mbt's leaderboard.json reports for that model. Then the same with
`precision = f16`: the module's products round to f16 (as autocast runs
them), and the state dict holds the module's parameters only, not the
loss scale that the run kept per model (strict loading fails on an extra
key). Each model's DIR/models/model-<i>.safetensors must hold the same
tensors as its .pt, bit for bit: read by safetensors.torch.load_file where
the package is installed, and always by the format's definition here (a
little-endian u64 header length, the JSON header, the raw tensors). Exit
status 0 when all agree; a message and 1 otherwise.
"""
import argparse
import gzip
import json
import os
import shutil
import struct
import subprocess
import sys

import torch

from safetensors_io import read_safetensors

SPEC = """
model mlp {
  input  x: f32[784]
  target y: class[10]
  param  w1: f32[784, 48] = kaiming_uniform
  param  b1: f32[48] = zeros
  param  w2: f32[48, 10] = kaiming_uniform
  param  b2: f32[10] = zeros
  logits = tanh(x @ w1 + b1) @ w2 + b2
  loss   = cross_entropy(logits, y)
  metric acc = accuracy(logits, y)
}
sweep {
  models = 3
  seed   = [11, 12, 13]
  optim  = sgd(lr = [0.01, 0.05, 0.2], momentum = 0.9)
  data   = fashion_mnist(batch = 128)
  epochs = 1
  %s
}
"""


class Mlp(torch.nn.Module):
    """The spec's model, parameter for parameter."""

    def __init__(self, f16=False):
        super().__init__()
        self.f16 = f16
        self.w1 = torch.nn.Parameter(torch.empty(784, 48))
        self.b1 = torch.nn.Parameter(torch.empty(48))
        self.w2 = torch.nn.Parameter(torch.empty(48, 10))
        self.b2 = torch.nn.Parameter(torch.empty(10))

    def product(self, a, b):
        if not self.f16:
            return a @ b
        # autocast(float16): operands and result in f16, sums in f32.
        return (a.half().float() @ b.half().float()).half().float()

    def forward(self, x):
        h = torch.tanh(self.product(x, self.w1) + self.b1)
        return self.product(h, self.w2) + self.b2


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = struct.unpack(">" + "I" * dims, data[4:4 + 4 * dims])
    return torch.frombuffer(bytearray(data[4 + 4 * dims:]),
                            dtype=torch.uint8).reshape(shape)


def read_safetensors_as_torch(path):
    """The tensors of a .safetensors file, read by the format's definition."""
    return {name: torch.from_numpy(array.copy())
            for name, array in read_safetensors(path).items()}


def same_tensors(state, other):
    """None when `other` holds the tensors of `state` exactly, else why not."""
    if set(state) != set(other):
        return "names %s vs %s" % (sorted(state), sorted(other))
    for name, tensor in state.items():
        if tensor.dtype != other[name].dtype or not torch.equal(
                tensor, other[name]):
            return "tensor %s differs" % name
    return None


def safetensors_agree(path, state):
    """What differs between the .safetensors at `path` and `state`."""
    problems = []
    readers = [("by hand", read_safetensors_as_torch)]
    try:
        from safetensors.torch import load_file
        readers.append(("safetensors.torch", load_file))
    except ImportError:
        pass
    for how, read in readers:
        problem = same_tensors(state, read(path))
        if problem:
            problems.append("%s (read %s): %s" % (path, how, problem))
    return problems


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mbtc", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--data", required=True)
    args = parser.parse_args()

    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    images = read_idx(os.path.join(args.data, "t10k-images-idx3-ubyte.gz"))
    labels = read_idx(os.path.join(args.data, "t10k-labels-idx1-ubyte.gz"))
    x = images.reshape(len(images), 784).float() / 255.0
    y = labels.long()
    failures = []
    for precision in ("f32", "f16"):
        failures += check(args, precision, x, y)
    for failure in failures:
        print("state_dict_loads_in_torch: " + failure, file=sys.stderr)
    return 1 if failures else 0


def check(args, precision, x, y):
    """Trains the sweep in `precision`; what disagrees with torch."""
    spec = os.path.join(args.work, "sweep-%s.mbt" % precision)
    with open(spec, "w") as f:
        f.write(SPEC % ("precision = %s" % precision))
    out = os.path.join(args.work, "run-" + precision)
    subprocess.run([args.mbtc, "train", spec, "--out", out, "--quiet",
                    "--data-dir", args.data], check=True,
                   stdout=subprocess.DEVNULL)
    with open(os.path.join(out, "leaderboard.json")) as f:
        board = {row["model"]: row for row in json.load(f)}

    failures = []
    for i in range(3):
        path = os.path.join(out, "models", "model-%d.pt" % i)
        # weights_only, the default since PyTorch 2.6: the pickle may call
        # nothing but what rebuilds tensors and dicts.
        state = torch.load(path, weights_only=True)
        failures += safetensors_agree(path[:-3] + ".safetensors", state)
        module = Mlp(f16=precision == "f16")
        try:
            module.load_state_dict(state, strict=True)
        except RuntimeError as error:
            failures.append("%s model %d: %s" % (precision, i, error))
            continue
        with torch.no_grad():
            logits = module(x)
            loss = torch.nn.functional.cross_entropy(logits, y).item()
            acc = (logits.argmax(dim=1) == y).float().mean().item()
        want_loss, want_acc = board[i]["test_loss"], board[i]["test_acc"]
        print("%s model %d: torch loss %.6f acc %.4f, mbt loss %.6f acc %.4f"
              % (precision, i, loss, acc, want_loss, want_acc))
        # float32 sums in another order: a relative 1e-4 on the loss; the
        # accuracy may differ by a sample whose two top logits tie closely.
        if abs(loss - want_loss) > 1e-4 * max(1.0, abs(want_loss)):
            failures.append("%s model %d: loss %r, mbt reported %r"
                            % (precision, i, loss, want_loss))
        if abs(acc - want_acc) > 1.5 / len(y):
            failures.append("%s model %d: accuracy %r, mbt reported %r"
                            % (precision, i, acc, want_acc))
    # The models trained: they differ and beat chance by far.
    if min(board[i]["test_acc"] for i in range(3)) < 0.5:
        failures.append("a model did not train: %r" % board)
    return failures


if __name__ == "__main__":
    sys.exit(main())
