#!/usr/bin/env python3
"""The peers of tools/bench/side_by_side.sh: the same training workload as an
mbt sweep, written the ways people train many models with PyTorch.

  peers.py --layers 784,128,10 --models N --batch B --steps S --threads T
           [--peers sequential,vmap,modelbatch,hfta,compile] [--warmup 5]
           [--autocast]

Every peer trains N models (ReLU MLPs with the given layer widths, Adam with
a learning rate per model, logspace(1e-4, 1e-1, N) as the mbt sweep) on
Fashion-MNIST batches of B samples taken in order from the training set
(the same batch for every model, as mbt's shared routing), and times S
steps after `--warmup` untimed ones. Prints one line per peer:

  PEER <name> ms/step <t> model-samples/s <r>

and first, with --gemm, the machine's float32 GEMM rate at this thread
count (torch.mm of 2048 x 2048 matrices, best of 5):

  GEMM gflops <g>

Peers:
  sequential  one nn.Module and one torch.optim.Adam per model, a Python
              loop over the models every step
  vmap        torch.func.functional_call under torch.vmap over stacked
              parameters, one Adam (foreach) over the stacked tensors with
              a param group per model
  modelbatch  the `modelbatch` package (ModelBatch + OptimizerFactory), the
              published vmap approach
  hfta        HFTA-style fused operators: weights stacked [N, in, out],
              torch.baddbmm for every layer, one Adam over the stacked
              tensors
  compile     hfta with its forward and loss torch.compile'd (Inductor;
              the backward is compiled with it), the warm-up steps paying
              the compilation
With --autocast every peer runs its forward pass and loss under
torch.autocast("cpu", dtype=torch.bfloat16), as mixed precision is trained
in PyTorch (mbt's `precision = bf16`); the backward pass and Adam run
outside it, as autocast's documentation asks.
The data comes from the IDX files mbt reads ($MBT_DATA_DIR or
/usr/share/datasets/fashion-mnist).
"""
import argparse
import gzip
import math
import os
import struct
import sys
import time

import contextlib

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


def read_idx(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = struct.unpack(">" + "I" * dims, data[4:4 + 4 * dims])
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def load_train():
    root = os.environ.get("MBT_DATA_DIR", "/usr/share/datasets/fashion-mnist")
    def find(name):
        for candidate in (name, name + ".gz"):
            path = os.path.join(root, candidate)
            if os.path.exists(path):
                return path
        sys.exit(f"peers.py: error: no {name} in {root} (set MBT_DATA_DIR)")
    x = read_idx(find("train-images-idx3-ubyte")).reshape(-1, 784)
    y = read_idx(find("train-labels-idx1-ubyte"))
    return (torch.from_numpy(x.astype(np.float32) / 255.0),
            torch.from_numpy(y.astype(np.int64)))


# The context every peer's forward pass and loss run in (--autocast).
forward_context = contextlib.nullcontext


def mlp(widths):
    layers = []
    for i in range(len(widths) - 1):
        layers.append(nn.Linear(widths[i], widths[i + 1]))
        if i + 2 < len(widths):
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def learning_rates(n):
    if n == 1:
        return [1e-4]
    return [1e-4 * (1e-1 / 1e-4) ** (i / (n - 1)) for i in range(n)]


class Batches:
    """Consecutive batches of the training set, wrapping around."""
    def __init__(self, x, y, batch):
        self.x, self.y, self.batch, self.pos = x, y, batch, 0

    def next(self):
        if self.pos + self.batch > self.x.shape[0]:
            self.pos = 0
        s = slice(self.pos, self.pos + self.batch)
        self.pos += self.batch
        return self.x[s], self.y[s]


def sequential(widths, n, batches):
    models = [mlp(widths) for _ in range(n)]
    optims = [torch.optim.Adam(m.parameters(), lr=lr)
              for m, lr in zip(models, learning_rates(n))]
    def step():
        x, y = batches.next()
        for model, opt in zip(models, optims):
            opt.zero_grad(set_to_none=True)
            with forward_context():
                loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
    return step


def vmap_peer(widths, n, batches):
    from torch.func import functional_call, stack_module_state
    models = [mlp(widths) for _ in range(n)]
    params, buffers = stack_module_state(models)
    base = mlp(widths).to("meta")
    stacked = {k: nn.Parameter(v) for k, v in params.items()}
    # One Adam over the stacked tensors, so one learning rate for all the
    # models (a rate per model needs a param group per model, which is what
    # the modelbatch peer does); the step costs the same.
    opt = torch.optim.Adam(stacked.values(), lr=1e-3, foreach=True)
    def loss_one(p, b, x, y):
        return F.cross_entropy(functional_call(base, (p, b), (x,)), y)
    def step():
        x, y = batches.next()
        opt.zero_grad(set_to_none=True)
        with forward_context():
            losses = torch.vmap(loss_one, in_dims=(0, 0, None, None))(
                stacked, buffers, x, y)
        losses.sum().backward()
        opt.step()
    return step


def modelbatch_peer(widths, n, batches):
    from modelbatch import ModelBatch
    from modelbatch.optimizer import OptimizerFactory
    mb = ModelBatch([mlp(widths) for _ in range(n)], shared_input=True)
    opt = OptimizerFactory(torch.optim.Adam).create_optimizer(
        mb, [{"lr": lr} for lr in learning_rates(n)])
    def step():
        x, y = batches.next()
        opt.zero_grad()
        with forward_context():
            loss = mb.compute_loss(mb(x), y, F.cross_entropy)
        loss.backward()
        opt.step()
    return step


def hfta(widths, n, batches, compiled=False):
    weights, biases = [], []
    for i in range(len(widths) - 1):
        fan_in = widths[i]
        bound = 1 / math.sqrt(fan_in)
        weights.append(nn.Parameter(
            torch.empty(n, widths[i], widths[i + 1]).uniform_(-bound, bound)))
        biases.append(nn.Parameter(
            torch.empty(n, 1, widths[i + 1]).uniform_(-bound, bound)))
    # HFTA fuses the optimizers too: one Adam over the stacked tensors.
    opt = torch.optim.Adam(weights + biases, lr=1e-3, foreach=True)
    def loss_of(x, y):
        h = x.unsqueeze(0).expand(n, -1, -1)
        for i, (w, b) in enumerate(zip(weights, biases)):
            h = torch.baddbmm(b, h, w)
            if i + 1 < len(weights):
                h = torch.relu(h)
        # The mean over each model's batch, summed over the models: every
        # model gets its own cross-entropy gradient.
        return F.cross_entropy(h.reshape(-1, h.shape[-1]),
                               y.repeat(n), reduction="sum") / y.shape[0]
    if compiled:
        loss_of = torch.compile(loss_of, fullgraph=True)
    def step():
        x, y = batches.next()
        opt.zero_grad(set_to_none=True)
        with forward_context():
            loss = loss_of(x, y)
        loss.backward()
        opt.step()
    return step


def timed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


PEERS = {"sequential": sequential, "vmap": vmap_peer,
         "modelbatch": modelbatch_peer, "hfta": hfta,
         "compile": lambda widths, n, batches: hfta(widths, n, batches,
                                                    compiled=True)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--layers", required=True)
    ap.add_argument("--models", type=int, required=True)
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--threads", type=int, required=True)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--peers", default=",".join(PEERS))
    ap.add_argument("--gemm", action="store_true")
    ap.add_argument("--autocast", action="store_true",
                    help="forward passes under bf16 autocast")
    args = ap.parse_args()
    if args.autocast:
        global forward_context
        forward_context = lambda: torch.autocast("cpu", dtype=torch.bfloat16)
    torch.set_num_threads(args.threads)
    if args.gemm:
        a, b = torch.randn(2048, 2048), torch.randn(2048, 2048)
        torch.mm(a, b)
        best = min(timed(lambda: torch.mm(a, b)) for _ in range(5))
        print(f"GEMM gflops {2 * 2048 ** 3 / best / 1e9:.1f}", flush=True)
    torch.manual_seed(0)
    widths = [int(w) for w in args.layers.split(",")]
    x, y = load_train()
    for name in [p for p in args.peers.split(",") if p]:
        if name not in PEERS:
            sys.exit(f"peers.py: error: unknown peer '{name}'")
        batches = Batches(x, y, args.batch)
        step = PEERS[name](widths, args.models, batches)
        for _ in range(args.warmup):
            step()
        start = time.perf_counter()
        for _ in range(args.steps):
            step()
        seconds = time.perf_counter() - start
        rate = args.steps * args.batch * args.models / seconds
        print(f"PEER {name} ms/step {1e3 * seconds / args.steps:.3f} "
              f"model-samples/s {rate:.1f}", flush=True)


if __name__ == "__main__":
    main()
