#!/usr/bin/env python3
"""The sequence models of the examples, trained by the PyTorch peers on
the step plan mbt trains on, timed side by side with mbt.

Workloads (4 models each, Adam at 4 learning rates, as the examples):
  transformer  examples/fortunes_transformer.mbt: byte embeddings and
               learned positions (width 32), a pre-norm block of causal
               4-head self-attention over the real tokens and a ReLU
               feed-forward layer, the mean over the real tokens, 43
               classes; texts cut to 128 bytes
  gru          examples/fortunes_gru_sweep.mbt: byte embeddings (16), a
               GRU of 32, the mean of its states over the real tokens;
               texts cut to 256 bytes
  lstm         examples/fortunes_lstm_sweep.mbt: the GRU workload with an
               LSTM of 32
  lm           examples/fortunes_char_lm.mbt: the transformer's block at
               width 64, a layer norm and the next byte's logits at every
               position, the mean cross entropy over the real target
               tokens; texts framed as [1, bytes..., 2] and cut to 129
               tokens (docs/data.md), rows of at most 128

Every runner trains the same steps of one plan (`mbt-data batch
--steps-out`, dynamic batches of at most 4096 padded tokens, windows of
1024), padded with token 0 as mbt pads them, and times steps
[warmup, warmup + steps) of it:
  mbt          `mbt-run --bench-steps` on the plan (`--steps`)
  loop         a Python loop over 4 torch.nn models, one torch.optim.Adam
               each (the attention is torch's scaled_dot_product_attention)
  vmap         torch.func: the 4 models' parameters stacked, vmap of
               grad over them, one Adam update of the stacked tensors with a
               learning rate per model
  compile      the loop, each model's loss and backward torch.compile'd
               (dynamic shapes)

With --autocast, mixed precision: mbt compiles the example with
`precision = bf16`, and every peer runs its forward pass and loss under
torch.autocast("cpu", dtype=torch.bfloat16), the backward pass and the
optimizer outside it, as autocast's documentation asks.

Prints one table row per workload and runner: model-samples/s and the peak
resident memory of the process that ran it (each runner runs in its own
process, so the peaks do not mix).

  tools/bench/sequence_peers.py [--workloads transformer,gru,lm] [--steps 30]
      [--runners mbt,loop,vmap,compile] [--threads 2] [--autocast]

Needs the peers' virtual environment (tools/bench/setup-peers.sh) and a
build (build/bin/mbtc, mbt-run, mbt-data).
"""
import argparse
import contextlib
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

import machine  # tools/bench/machine.py, beside this script

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

WORKLOADS = {
    "transformer": dict(example="examples/fortunes_transformer.mbt",
                        max_length=128, lrs=[3e-4, 1e-3, 3e-3, 1e-2]),
    "gru": dict(example="examples/fortunes_gru_sweep.mbt", max_length=256,
                lrs=[1e-3, 3e-3, 1e-2, 3e-2]),
    "lstm": dict(example="examples/fortunes_lstm_sweep.mbt", max_length=256,
                 lrs=[1e-3, 3e-3, 1e-2, 3e-2]),
    "lm": dict(example="examples/fortunes_char_lm.mbt", max_length=128,
               lrs=[1e-3, 3e-3, 1e-2, 3e-2], next_token=True),
}
BEGIN, END = 1, 2
VOCAB, CLASSES = 259, 43


def read_mbtseq(path):
    """Tokens, offsets and labels of a .mbtseq file (docs/data.md)."""
    import numpy as np
    raw = open(path, "rb").read()
    if raw[:8] != b"MBTSEQ01":
        sys.exit(f"{path}: not an .mbtseq file")
    count, total = np.frombuffer(raw, dtype="<u8", count=2, offset=16)
    offsets = np.frombuffer(raw, dtype="<u8", count=int(count) + 1, offset=32)
    start = 32 + 8 * (int(count) + 1)
    tokens = np.frombuffer(raw, dtype="<i4", count=int(total), offset=start)
    labels = np.frombuffer(raw, dtype="<i4", count=int(count),
                           offset=start + 4 * int(total))
    return tokens, offsets.astype("int64"), labels


def prepare(workload, work, args):
    """The data (texts cut to max_length) and the plan of steps. A language
    model's plan is in row lengths, one token longer than the text (the
    begin token) up to max_length, as the runtime frames it."""
    spec = WORKLOADS[workload]
    data = os.path.join(work, f"{workload}.mbtseq")
    plan = os.path.join(work, f"{workload}.plan.jsonl")
    common = ["--max-length", str(spec["max_length"])]
    if not os.path.exists(data):
        subprocess.run([args.mbt_data, "convert", "fortunes:train", data] +
                       common, check=True, stdout=subprocess.DEVNULL)
    if not os.path.exists(plan):
        source = "fortunes:train"
        if spec.get("next_token"):
            _, offsets, _ = read_mbtseq(data)
            source = os.path.join(work, f"{workload}.lengths")
            with open(source, "w") as f:
                for length in offsets[1:] - offsets[:-1]:
                    print(min(int(length) + 1, spec["max_length"]), file=f)
        subprocess.run([args.mbt_data, "batch", source, "--window", "1024",
                        "--token-budget", "4096", "--steps-out", plan] +
                       common, check=True, stdout=subprocess.DEVNULL)
    return data, plan


def load_steps(workload, data, plan, count):
    """The plan's first `count` steps as (x, y) blocks padded with token 0:
    y the labels, or for a language model the next tokens."""
    import numpy as np
    next_token = WORKLOADS[workload].get("next_token", False)
    tokens, offsets, labels = read_mbtseq(data)
    steps = []
    with open(plan) as f:
        for line in f:
            if len(steps) == count:
                break
            step = json.loads(line)
            samples = step["samples"]
            shape = (len(samples), step["padded_length"])
            x = np.zeros(shape, dtype="int64")
            y = np.zeros(shape, dtype="int64")
            for row, i in enumerate(samples):
                sample = tokens[offsets[i]:offsets[i + 1]]
                if next_token:
                    framed = np.concatenate(([BEGIN], sample, [END]))
                    framed = framed[:shape[1] + 1]
                    x[row, :len(framed) - 1] = framed[:-1]
                    y[row, :len(framed) - 1] = framed[1:]
                else:
                    x[row, :len(sample)] = sample
            steps.append((x, y if next_token else
                          labels[samples].astype("int64")))
    return steps


# The models, as torch.nn modules of the examples' architecture.
def models_module():
    import torch
    import torch.nn.functional as F
    from torch import nn

    class Transformer(nn.Module):
        """The classifier; with lm, the byte-level language model."""

        def __init__(self, width=32, heads=4, max_len=128, lm=False):
            super().__init__()
            self.heads, self.lm = heads, lm
            self.embed = nn.Embedding(VOCAB, width)
            self.position = nn.Embedding(max_len, width)
            self.norm1, self.norm2 = nn.LayerNorm(width), nn.LayerNorm(width)
            self.q, self.k, self.v, self.o = (
                nn.Linear(width, width, bias=False) for _ in range(4))
            self.ff1 = nn.Linear(width, 2 * width)
            self.ff2 = nn.Linear(2 * width, width)
            self.head = nn.Linear(width, VOCAB if lm else CLASSES)
            if lm:
                self.norm3 = nn.LayerNorm(width)

        def attention(self, h, real):
            b, t, d = h.shape
            split = lambda y: y.view(b, t, self.heads, -1).transpose(1, 2)
            causal = torch.ones(t, t, dtype=torch.bool).tril()
            mask = causal & real[:, None, None, :]
            y = F.scaled_dot_product_attention(split(self.q(h)),
                                               split(self.k(h)),
                                               split(self.v(h)),
                                               attn_mask=mask)
            return self.o(y.transpose(1, 2).reshape(b, t, d))

        def forward(self, x):
            real = x != 0
            h = self.embed(x) + self.position(
                torch.arange(x.shape[1], device=x.device))
            a = h + self.attention(self.norm1(h), real)
            f = a + self.ff2(F.relu(self.ff1(self.norm2(a))))
            if self.lm:
                return self.head(self.norm3(f))
            weight = real.unsqueeze(-1).to(f.dtype)
            mean = (f * weight).sum(1) / weight.sum(1).clamp(min=1)
            return self.head(mean)

    class Recurrent(nn.Module):
        def __init__(self, width=32, embedding=16, cell=nn.GRU):
            super().__init__()
            self.embed = nn.Embedding(VOCAB, embedding)
            self.rnn = cell(embedding, width, batch_first=True)
            self.head = nn.Linear(width, CLASSES)

        def forward(self, x):
            real = x != 0
            states, _ = self.rnn(self.embed(x))
            weight = real.unsqueeze(-1).to(states.dtype)
            mean = (states * weight).sum(1) / weight.sum(1).clamp(min=1)
            return self.head(mean)

    return {"transformer": Transformer, "gru": Recurrent,
            "lstm": lambda: Recurrent(cell=nn.LSTM),
            "lm": lambda: Transformer(width=64, lm=True)}


def run_torch(workload, runner, steps, args):
    """Trains the steps with one PyTorch runner; returns seconds for the
    timed steps."""
    import torch
    import torch.nn.functional as F
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    lrs = WORKLOADS[workload]["lrs"]
    make = models_module()[workload]
    models = [make() for _ in lrs]

    def loss_fn(logits, y):
        if not WORKLOADS[workload].get("next_token"):
            return F.cross_entropy(logits, y)
        # A language model's mean over the real target tokens (0 pads).
        return F.cross_entropy(logits.flatten(0, -2), y.flatten(),
                               ignore_index=0)
    batches = [(torch.from_numpy(x), torch.from_numpy(y)) for x, y in steps]

    def forward_context():
        if args.autocast:
            return torch.autocast("cpu", dtype=torch.bfloat16)
        return contextlib.nullcontext()

    if runner in ("loop", "compile"):
        optims = [torch.optim.Adam(m.parameters(), lr=lr)
                  for m, lr in zip(models, lrs)]

        def loss_and_backward(model, x, y):
            with forward_context():
                loss = loss_fn(model(x), y)
            loss.backward()
            return loss

        step_fns = [loss_and_backward] * len(models)
        if runner == "compile":
            step_fns = [torch.compile(loss_and_backward, dynamic=True)
                        for _ in models]

        def train_step(x, y):
            for model, optim, fn in zip(models, optims, step_fns):
                optim.zero_grad(set_to_none=True)
                fn(model, x, y)
                optim.step()
    elif runner == "vmap":
        from torch.func import functional_call, grad, stack_module_state
        params, buffers = stack_module_state(models)
        base = make().to("meta")
        lr = torch.tensor(lrs)
        state = {k: (torch.zeros_like(p), torch.zeros_like(p))
                 for k, p in params.items()}
        count = [0]

        def loss_of(p, b, x, y):
            with forward_context():
                return loss_fn(functional_call(base, (p, b), (x,)), y)

        grads_of = torch.vmap(grad(loss_of), in_dims=(0, 0, None, None))

        def train_step(x, y):
            grads = grads_of(params, buffers, x, y)
            count[0] += 1
            t = count[0]
            with torch.no_grad():
                for k, p in params.items():
                    m, v = state[k]
                    g = grads[k]
                    m.mul_(0.9).add_(g, alpha=0.1)
                    v.mul_(0.999).addcmul_(g, g, value=0.001)
                    step = (lr / (1 - 0.9 ** t)).view(-1, *[1] * (p.dim() - 1))
                    denom = (v / (1 - 0.999 ** t)).sqrt_().add_(1e-8)
                    p.sub_(step * m / denom)
    else:
        raise ValueError(runner)

    for x, y in batches[:args.warmup]:
        train_step(x, y)
    start = time.perf_counter()
    for x, y in batches[args.warmup:]:
        train_step(x, y)
    return time.perf_counter() - start


def run_mbt(workload, data, plan, args):
    """`mbt-run --bench-steps` on the plan; returns (model-samples/s,
    compile seconds)."""
    spec = WORKLOADS[workload]
    with tempfile.TemporaryDirectory() as work:
        artifact = os.path.join(work, "model.so")
        start = time.perf_counter()
        precision = ["--set", "precision = bf16"] if args.autocast else []
        subprocess.run([args.mbtc, os.path.join(ROOT, spec["example"]), "-o",
                        artifact] + precision, check=True)
        compile_seconds = time.perf_counter() - start
        env = dict(os.environ, MBT_NUM_THREADS=str(args.threads),
                   OMP_NUM_THREADS=str(args.threads))
        out = subprocess.run([args.mbt_run, artifact, "--steps", plan,
                              "--bench-steps", str(args.steps)],
                             check=True, capture_output=True, text=True,
                             env=env).stdout
    match = re.search(r"model-samples/s ([0-9.]+)", out)
    if not match:
        sys.exit(f"mbt-run printed no throughput:\n{out}")
    return float(match.group(1)), compile_seconds


def child(args):
    """One runner in this process: prints a JSON line."""
    data, plan = prepare(args.workload, args.work, args)
    if args.runner == "mbt":
        rate, compile_seconds = run_mbt(args.workload, data, plan, args)
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        print(json.dumps(dict(rate=rate, compile=compile_seconds,
                              peak_kb=peak)))
        return
    steps = load_steps(args.workload, data, plan, args.warmup + args.steps)
    samples = sum(len(x) for x, _ in steps[args.warmup:])
    try:
        seconds = run_torch(args.workload, args.runner, steps, args)
        rate = samples * len(WORKLOADS[args.workload]["lrs"]) / seconds
        error = None
    except Exception as e:  # a runner without batching rules, say
        rate, error = None, f"{type(e).__name__}: {str(e).splitlines()[0]}"
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps(dict(rate=rate, peak_kb=peak, error=error)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", default="transformer,gru,lstm,lm")
    parser.add_argument("--runners", default="mbt,loop,vmap,compile")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--autocast", action="store_true",
                        help="mbt with precision = bf16, the peers' forward "
                        "passes under bf16 autocast")
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--work", help=argparse.SUPPRESS)
    parser.add_argument("--workload", help=argparse.SUPPRESS)
    parser.add_argument("--runner", help=argparse.SUPPRESS)
    args = parser.parse_args()
    bin_dir = os.path.join(args.build, "bin")
    args.mbtc = os.path.join(bin_dir, "mbtc")
    args.mbt_run = os.path.join(bin_dir, "mbt-run")
    args.mbt_data = os.path.join(bin_dir, "mbt-data")
    if args.runner:
        return child(args)

    work = tempfile.mkdtemp(prefix="mbt-sequence-peers-")
    precision = ("bf16 (mbt: precision = bf16; peers: bf16 autocast)"
                 if args.autocast else "f32")
    print(f"{machine.describe()}; {args.threads} threads, "
          f"{args.steps} timed steps after "
          f"{args.warmup}, {precision}")
    print("| workload | runner | model-samples/s | peak RSS | vs mbt |")
    print("|---|---|---:|---:|---:|")
    for workload in args.workloads.split(","):
        mbt_rate = None
        for runner in args.runners.split(","):
            out = subprocess.run(
                [sys.executable, __file__, "--workload", workload, "--runner",
                 runner, "--work", work] + sys.argv[1:],
                check=True, capture_output=True, text=True).stdout
            result = json.loads(out.strip().splitlines()[-1])
            rate = result["rate"]
            if runner == "mbt":
                mbt_rate = rate
                runner = f"mbt (compiles in {result['compile']:.1f} s)"
            peak = f"{result['peak_kb'] / 1024:.0f} MB"
            if rate is None:
                print(f"| {workload} | {runner} | n/a: {result['error']} | "
                      f"{peak} | |")
                continue
            ratio = f"{mbt_rate / rate:.2f}x" if mbt_rate else ""
            print(f"| {workload} | {runner} | {rate:,.0f} | {peak} | "
                  f"{ratio} |", flush=True)


if __name__ == "__main__":
    main()
