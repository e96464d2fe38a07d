#!/usr/bin/env python3
"""A sweep that starts from PyTorch's weights trains as PyTorch does.

Builds a two-layer MLP in PyTorch (nn.Linear 8-16-3, tanh), initialized by
torch's own rules, and writes its weights twice, each nn.Linear weight in
PyTorch's [out, in] layout:
  - as a .safetensors file (by the format's definition: a little-endian
    u64 header length, the JSON header, the raw float32 tensors) under the
    spec's parameter names;
  - as torch.save(module.state_dict()) writes it (a .pt file: a zip
    holding the pickle of an OrderedDict), under PyTorch's names, which
    the sweep maps with `rename = {"fc1.w": "fc1.weight", ...}`.
Where the safetensors package is installed, also as
safetensors.torch.save_file(module.state_dict()) writes it, under PyTorch's
names. From each file, an mbt sweep starts two models with `init = checkpoint(...,
transpose = [...])`:
  - model 0 has lr 0: its test loss is the initial one, which must be the
    loss of the PyTorch module on the same test set (within 1e-6), and its
    parameters stay the file's, bit for bit;
  - model 1 trains 20 steps of SGD (lr 0.1, every step the whole training
    set, so the batch order cannot matter): its parameters must be those
    of the PyTorch module after the same 20 steps (within 1e-5).
A loader that ignores the file, transposes the wrong parameter or reads a
tensor into another's place fails it, and so does a step that is not
torch's SGD. Exit status 0 when all agree; a message and 1 otherwise.
"""
import argparse
import copy
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import torch

from safetensors_io import read_safetensors, write_safetensors

SPEC = """
import "nn"
model mlp {
  input  x: f32[8]
  target y: class[3]
  fc1    = linear(x, 16)
  fc2    = linear(tanh(fc1), 3)
  loss   = cross_entropy(fc2, y)
}
sweep {
  models = 2
  seed   = [0, 1]
  optim  = sgd(lr = [0.0, 0.1])
  data   = npy(x = "x.npy", y = "y.npy", test_x = "tx.npy", test_y = "ty.npy",
               batch = 64)
  epochs = 20
  init   = checkpoint(%s, transpose = ["fc1.w", "fc2.w"]%s)
}
"""
# The spec's name of each parameter, and PyTorch's.
TORCH_NAMES = {"fc1.w": "fc1.weight", "fc1.b": "fc1.bias",
               "fc2.w": "fc2.weight", "fc2.b": "fc2.bias"}
STEPS, LR = 20, 0.1


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(8, 16)
        self.fc2 = torch.nn.Linear(16, 3)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))


def mbt_names(module):
    """The module's tensors under the spec's names, in PyTorch's layout."""
    return {"fc1.w": module.fc1.weight, "fc1.b": module.fc1.bias,
            "fc2.w": module.fc2.weight, "fc2.b": module.fc2.bias}


def check_sweep(mbtc, w, path, extra, initial, start, trained):
    """Trains the sweep from `path`; what differs from torch."""
    name = path.replace(".", "-")
    with open(w(name + ".mbt"), "w") as f:
        f.write(SPEC % ('"%s"' % path, extra))
    run = subprocess.run([mbtc, "train", w(name + ".mbt"), "--out",
                          w("run-" + name), "--quiet"],
                         capture_output=True, text=True)
    if run.returncode != 0:
        return ["from %s: mbtc failed:\n%s" % (path, run.stdout + run.stderr)]
    with open(w("run-%s/leaderboard.json" % name)) as f:
        board = {row["model"]: row for row in json.load(f)}
    failures = []
    loss0 = board[0]["test_loss"]
    print("from %s: initial test loss: torch %.9f, mbt (lr 0) %.9f" %
          (path, initial, loss0))
    if abs(loss0 - initial) > 1e-6:
        failures.append("from %s: initial test loss %r, torch's %r" %
                        (path, loss0, initial))

    def layout(name, array):  # the spec's [in, out] from torch's [out, in]
        return array.T if name.endswith(".w") else array

    unchanged = read_safetensors(w("run-%s/models/model-0.safetensors" % name))
    for param, tensor in start.items():
        if not np.array_equal(unchanged[param], layout(param, tensor.numpy())):
            failures.append("from %s: model 0 (lr 0): %s is not the file's" %
                            (path, param))
    after = read_safetensors(w("run-%s/models/model-1.safetensors" % name))
    worst = max(float(np.max(np.abs(after[n] - layout(n, trained[n]))))
                for n in trained)
    print("from %s: after %d SGD steps: largest parameter difference to "
          "torch %.2e (tolerance 1e-5)" % (path, STEPS, worst))
    if worst > 1e-5:
        failures.append("from %s: parameters after %d steps differ by %g" %
                        (path, STEPS, worst))
    return failures


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mbtc", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    w = lambda name: os.path.join(args.work, name)

    rng = np.random.default_rng(7)
    x = rng.standard_normal((64, 8)).astype(np.float32)
    y = rng.integers(0, 3, 64).astype(np.int64)
    tx = rng.standard_normal((32, 8)).astype(np.float32)
    ty = rng.integers(0, 3, 32).astype(np.int64)
    for name, array in (("x", x), ("y", y), ("tx", tx), ("ty", ty)):
        np.save(w(name + ".npy"), array)

    torch.manual_seed(3)
    module = Mlp()
    start = {k: v.detach().clone() for k, v in mbt_names(module).items()}
    module_state = copy.deepcopy(module.state_dict())  # an OrderedDict
    write_safetensors(w("base.safetensors"),
                      {k: v.numpy() for k, v in start.items()})
    with torch.no_grad():
        initial = torch.nn.functional.cross_entropy(
            module(torch.from_numpy(tx)), torch.from_numpy(ty)).item()
    optimizer = torch.optim.SGD(module.parameters(), lr=LR)
    for _ in range(STEPS):
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(
            module(torch.from_numpy(x)), torch.from_numpy(y)).backward()
        optimizer.step()
    trained = {k: v.detach().numpy() for k, v in mbt_names(module).items()}

    torch.save(module_state, w("base.pt"))
    rename = ", rename = {%s}" % ", ".join(
        '"%s": "%s"' % item for item in TORCH_NAMES.items())
    files = [("base.safetensors", ""), ("base.pt", rename)]
    try:
        from safetensors.torch import save_file
        save_file(module_state, w("torch.safetensors"))
        files.append(("torch.safetensors", rename))
    except ImportError:
        print("safetensors is not installed: its writer is not checked")
    failures = []
    for path, extra in files:
        failures += check_sweep(args.mbtc, w, path, extra, initial, start,
                                trained)
    for failure in failures:
        print("warm_start_matches_torch: " + failure, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
