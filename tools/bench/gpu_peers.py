#!/usr/bin/env python3
"""The PyTorch peers of mbt on a GPU: N MLPs trained with Adam, on CUDA.

   gpu_peers.py --layers 784,128,10 --models N --batch 128 --steps S

Peers: `vmap` (torch.func over stacked parameters, eager), `vmap-compiled`
(the same step under torch.compile), `sequential` (a module and an Adam per
model, a Python loop; --sequential-max-models caps it, it is slow for large
N). Data: a fixed synthetic batch set on the device (features uniform in
[0, 1), labels uniform), the same for every model, as on the CPU peers'
shared batches; the GPU host need not have Fashion-MNIST. Prints one line
per peer: PEER name ms/step T model-samples/s R. Timing synchronizes the
device before reading the clock.
"""
import argparse
import time

import torch
import torch.nn.functional as F
from torch import nn


def mlp(widths):
    layers = []
    for i in range(len(widths) - 1):
        layers.append(nn.Linear(widths[i], widths[i + 1]))
        if i + 2 < len(widths):
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def batches(widths, batch, count, device):
    g = torch.Generator(device="cpu").manual_seed(0)
    xs = torch.rand(count, batch, widths[0], generator=g).to(device)
    ys = torch.randint(0, widths[-1], (count, batch), generator=g).to(device)
    return xs, ys


def vmap_step(widths, n, device, compiled):
    from torch.func import functional_call, stack_module_state
    models = [mlp(widths).to(device) for _ in range(n)]
    params, buffers = stack_module_state(models)
    base = mlp(widths).to("meta")
    stacked = {k: nn.Parameter(v) for k, v in params.items()}
    opt = torch.optim.Adam(stacked.values(), lr=1e-3, foreach=True)

    def loss_one(p, b, x, y):
        return F.cross_entropy(functional_call(base, (p, b), (x,)), y)

    def step(x, y):
        opt.zero_grad(set_to_none=True)
        losses = torch.vmap(loss_one, in_dims=(0, 0, None, None))(
            stacked, buffers, x, y)
        losses.sum().backward()
        opt.step()

    return torch.compile(step) if compiled else step


def sequential_step(widths, n, device):
    models = [mlp(widths).to(device) for _ in range(n)]
    optims = [torch.optim.Adam(m.parameters(), lr=1e-3) for m in models]

    def step(x, y):
        for model, opt in zip(models, optims):
            opt.zero_grad(set_to_none=True)
            F.cross_entropy(model(x), y).backward()
            opt.step()

    return step


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--layers", default="784,128,10")
    ap.add_argument("--models", type=int, required=True)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--peers", default="vmap,vmap-compiled,sequential")
    ap.add_argument("--sequential-max-models", type=int, default=64)
    args = ap.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("gpu_peers.py: error: no CUDA device")
    device = torch.device("cuda")
    widths = [int(w) for w in args.layers.split(",")]
    xs, ys = batches(widths, args.batch, 16, device)
    for name in [p for p in args.peers.split(",") if p]:
        if name == "sequential" and args.models > args.sequential_max_models:
            print(f"PEER {name} skipped (more than "
                  f"{args.sequential_max_models} models)", flush=True)
            continue
        torch.manual_seed(0)
        if name == "sequential":
            step = sequential_step(widths, args.models, device)
        elif name in ("vmap", "vmap-compiled"):
            step = vmap_step(widths, args.models, device,
                             compiled=name == "vmap-compiled")
        else:
            raise SystemExit(f"gpu_peers.py: error: unknown peer '{name}'")
        for i in range(args.warmup):
            step(xs[i % 16], ys[i % 16])
        torch.cuda.synchronize()
        start = time.perf_counter()
        for i in range(args.steps):
            step(xs[i % 16], ys[i % 16])
        torch.cuda.synchronize()
        seconds = time.perf_counter() - start
        rate = args.steps * args.batch * args.models / seconds
        print(f"PEER {name} ms/step {1e3 * seconds / args.steps:.4f} "
              f"model-samples/s {rate:.1f}", flush=True)


if __name__ == "__main__":
    main()
