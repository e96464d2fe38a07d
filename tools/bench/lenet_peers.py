#!/usr/bin/env python3
"""The PyTorch peers of tools/bench/lenet.sh: ModelBatch's LeNet-5 benchmark
(examples/lenet5_sweep.mbt) written the ways people train many CNNs at once.

  lenet_peers.py --models N --batch B --steps S --threads T
                 [--peers sequential,vmap,modelbatch,grouped,compile]
                 [--warmup 5]

Every peer trains N LeNet-5s (conv 6 k5 pad 2, max pool 2, conv 16 k5, max
pool 2, dense 120, 84, 10, ReLU) with dropout 0.1 + 0.02 i on the two
hidden dense layers and SGD at lr 0.01 * 0.5^i for model i, on the same
Fashion-MNIST batches of B images taken in order, and times S steps after
`--warmup` untimed ones. Prints one line per peer:

  PEER <name> ms/step <t> model-samples/s <r>

or, for a peer that cannot run this workload,

  PEER <name> fails <reason>

Peers:
  sequential  one nn.Module and one torch.optim.SGD per model, a Python
              loop over the models every step
  vmap        torch.func.functional_call under torch.vmap over stacked
              parameters (randomness="different"), one SGD per model's
              learning rate as a param group of the stacked tensors is not
              possible, so one SGD with model 0's; every model's dropout
              rate is model 0's (a module's rate is a Python constant)
  modelbatch  the `modelbatch` package (ModelBatch + OptimizerFactory, a
              learning rate per model)
  grouped     HFTA-style fused operators: the models as the groups of one
              grouped convolution per layer (model dimension as conv
              groups), torch.baddbmm for the dense layers, a dropout mask
              per model drawn at its own rate, and a fused SGD step with a
              learning rate per model
  compile     grouped with its forward and loss torch.compile'd (Inductor;
              the backward is compiled with it), the warm-up steps paying
              the compilation
The data comes from the IDX files mbt reads ($MBT_DATA_DIR or
/usr/share/datasets/fashion-mnist).
"""
import argparse
import math
import os
import sys
import time

import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peers import Batches, load_train, timed  # noqa: E402


def rates(n):
    return [0.1 + 0.02 * i for i in range(n)]


def learning_rates(n):
    return [0.01 * 0.5 ** i for i in range(n)]


class LeNet5(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(400, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)
        self.drop = nn.Dropout(p)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = F.relu(self.fc1(x.flatten(1)))
        x = F.relu(self.fc2(self.drop(x)))
        return self.fc3(self.drop(x))


def images(batches):
    x, y = batches.next()
    return x.view(-1, 1, 28, 28), y


def sequential(n, batches):
    models = [LeNet5(p) for p in rates(n)]
    optims = [torch.optim.SGD(m.parameters(), lr=lr)
              for m, lr in zip(models, learning_rates(n))]
    def step():
        x, y = images(batches)
        for model, opt in zip(models, optims):
            opt.zero_grad(set_to_none=True)
            F.cross_entropy(model(x), y).backward()
            opt.step()
    return step


def vmap_peer(n, batches):
    from torch.func import functional_call, stack_module_state
    models = [LeNet5(rates(n)[0]) for _ in range(n)]
    params, buffers = stack_module_state(models)
    base = LeNet5(rates(n)[0]).to("meta")
    stacked = {k: nn.Parameter(v) for k, v in params.items()}
    opt = torch.optim.SGD(stacked.values(), lr=learning_rates(n)[0],
                          foreach=True)
    def loss_one(p, b, x, y):
        return F.cross_entropy(functional_call(base, (p, b), (x,)), y)
    def step():
        x, y = images(batches)
        opt.zero_grad(set_to_none=True)
        losses = torch.vmap(loss_one, in_dims=(0, 0, None, None),
                            randomness="different")(stacked, buffers, x, y)
        losses.sum().backward()
        opt.step()
    return step


def modelbatch_peer(n, batches):
    from modelbatch import ModelBatch
    from modelbatch.optimizer import OptimizerFactory
    mb = ModelBatch([LeNet5(p) for p in rates(n)], shared_input=True)
    opt = OptimizerFactory(torch.optim.SGD).create_optimizer(
        mb, [{"lr": lr} for lr in learning_rates(n)])
    def step():
        x, y = images(batches)
        opt.zero_grad()
        out = mb(x)
        mb.compute_loss(out, y, F.cross_entropy).backward()
        opt.step()
    return step


def grouped(n, batches, compiled=False):
    def uniform(*shape, fan_in):
        bound = 1 / math.sqrt(fan_in)
        return nn.Parameter(torch.empty(*shape).uniform_(-bound, bound))
    # Convolutions: N models as N groups of one conv (HFTA's fused conv).
    c1w, c1b = uniform(n * 6, 1, 5, 5, fan_in=25), uniform(n * 6, fan_in=25)
    c2w, c2b = uniform(n * 16, 6, 5, 5, fan_in=150), uniform(n * 16, fan_in=150)
    dense = [(uniform(n, 400, 120, fan_in=400), uniform(n, 1, 120, fan_in=400)),
             (uniform(n, 120, 84, fan_in=120), uniform(n, 1, 84, fan_in=120)),
             (uniform(n, 84, 10, fan_in=84), uniform(n, 1, 10, fan_in=84))]
    params = [c1w, c1b, c2w, c2b] + [t for layer in dense for t in layer]
    keep = 1 - torch.tensor(rates(n)).view(n, 1, 1)
    lr = torch.tensor(learning_rates(n))
    def dropout(h):
        mask = (torch.rand_like(h) < keep).to(h.dtype) / keep
        return h * mask
    def loss_of(x, y):
        b = x.shape[0]
        h = x.repeat(1, n, 1, 1)                                # [B, N, 28, 28]
        h = F.max_pool2d(F.relu(F.conv2d(h, c1w, c1b, padding=2, groups=n)), 2)
        h = F.max_pool2d(F.relu(F.conv2d(h, c2w, c2b, groups=n)), 2)
        h = h.view(b, n, 400).transpose(0, 1)                   # [N, B, 400]
        (w1, b1), (w2, b2), (w3, b3) = dense
        h = F.relu(torch.baddbmm(b1, h, w1))
        h = F.relu(torch.baddbmm(b2, dropout(h), w2))
        h = torch.baddbmm(b3, dropout(h), w3)
        return F.cross_entropy(h.reshape(-1, 10), y.repeat(n),
                               reduction="sum") / b
    if compiled:
        loss_of = torch.compile(loss_of, fullgraph=True)
    def step():
        x, y = images(batches)
        for t in params:
            t.grad = None
        loss_of(x, y).backward()
        with torch.no_grad():  # SGD, a learning rate per model
            c1w.sub_(c1w.grad * lr.repeat_interleave(6).view(-1, 1, 1, 1))
            c1b.sub_(c1b.grad * lr.repeat_interleave(6))
            c2w.sub_(c2w.grad * lr.repeat_interleave(16).view(-1, 1, 1, 1))
            c2b.sub_(c2b.grad * lr.repeat_interleave(16))
            for w, bias in dense:
                w.sub_(w.grad * lr.view(n, 1, 1))
                bias.sub_(bias.grad * lr.view(n, 1, 1))
    return step


PEERS = {"sequential": sequential, "vmap": vmap_peer,
         "modelbatch": modelbatch_peer, "grouped": grouped,
         "compile": lambda n, batches: grouped(n, batches, compiled=True)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", type=int, required=True)
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--threads", type=int, required=True)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--peers", default=",".join(PEERS))
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    x, y = load_train()
    for name in [p for p in args.peers.split(",") if p]:
        if name not in PEERS:
            sys.exit(f"lenet_peers.py: error: unknown peer '{name}'")
        batches = Batches(x, y, args.batch)
        try:
            step = PEERS[name](args.models, batches)
            for _ in range(args.warmup):
                step()
        except Exception as error:  # a peer that cannot run this workload
            reason = str(error).splitlines()[0] if str(error) else repr(error)
            print(f"PEER {name} fails {type(error).__name__}: {reason}",
                  flush=True)
            continue
        seconds = timed(lambda: [step() for _ in range(args.steps)])
        rate = args.steps * args.batch * args.models / seconds
        print(f"PEER {name} ms/step {1e3 * seconds / args.steps:.3f} "
              f"model-samples/s {rate:.1f}", flush=True)


if __name__ == "__main__":
    main()
