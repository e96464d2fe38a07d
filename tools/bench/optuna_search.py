#!/usr/bin/env python3
"""The batched Optuna search against Optuna driving one PyTorch model per
trial, on Fashion-MNIST, in one run on this machine.

Three searches of the same space (examples/optuna_search.py's: AdamW's
learning rate and weight decay, a width of 64, 128 or 256, a dropout
rate), the same sampler (TPE, seed 0, constant liar), the same budget
(N trials of E epochs, batch 128) and the same data: Fashion-MNIST's
training split less its last 6000 samples, which are the validation set
every trial is scored on (its accuracy at the end of training):

- pytorch: `study.optimize` with one torch.nn MLP per trial (nn.Linear,
  ReLU, nn.Dropout, nn.Linear; torch.optim.AdamW), the median pruner
  fed the same reports (every 100 steps and each epoch's end);
- mbt: mbt.optuna.optimize, B trials per batch, the same pruner;
- mbt-no-pruner: the same without the pruner (every trial trains to the
  end).

Each prints its wall time for the N trials (compiling included), the
best validation accuracy found and how many trials were pruned.

    tools/bench/optuna_search.py [--trials 64] [--batch 16] [--epochs 3]
                                 [--only pytorch,mbt,mbt-no-pruner]
"""
import argparse
import os
import platform
import sys
import time

import numpy as np
import optuna

import mbt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import machine  # noqa: E402  (tools/bench/machine.py)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples"))
from optuna_search import SPEC, make_study, space  # noqa: E402

VALIDATION = 6000
EVAL_EVERY = 100


def splits(sweep):
    """Training and validation arrays: the spec's training split, its last
    VALIDATION samples held out."""
    x, y = sweep.data()["train"]
    return (x[:-VALIDATION], y[:-VALIDATION]), (x[-VALIDATION:], y[-VALIDATION:])


def search_mbt(args, train, validation, prune):
    study = make_study(prune=prune)
    # The validation arrays are the run's test split: no split of its own.
    sweep = mbt.compile(SPEC, settings={"data": "fashion_mnist(batch = 128)"})
    mbt.optuna.optimize(study, sweep, space, n_trials=args.trials,
                        batch=args.batch, metric="acc", train=train,
                        test=validation, epochs=args.epochs,
                        eval_every=EVAL_EVERY)
    return study


def search_pytorch(args, train, validation):
    import torch
    from torch import nn

    torch.set_num_threads(os.cpu_count())
    x, y = torch.from_numpy(train[0]), torch.from_numpy(train[1])
    xv, yv = torch.from_numpy(validation[0]), torch.from_numpy(validation[1])

    def accuracy(model):
        model.eval()
        with torch.no_grad():
            acc = (model(xv).argmax(1) == yv).float().mean().item()
        model.train()
        return acc

    def objective(trial):
        p = space(trial)
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(784, p["width"]), nn.ReLU(),
                              nn.Dropout(p["dropout"]),
                              nn.Linear(p["width"], 10))
        optim = torch.optim.AdamW(model.parameters(), lr=p["lr"],
                                  weight_decay=p["weight_decay"])
        loss_fn = nn.CrossEntropyLoss()
        step, acc = 0, 0.0
        for _ in range(args.epochs):
            order = torch.randperm(len(x))
            for begin in range(0, len(x), 128):
                rows = order[begin:begin + 128]
                optim.zero_grad()
                loss = loss_fn(model(x[rows]), y[rows])
                loss.backward()
                optim.step()
                step += 1
                last = begin + 128 >= len(x)
                if step % EVAL_EVERY == 0 or last:
                    acc = accuracy(model)
                    if not np.isfinite(loss.item()):
                        raise optuna.TrialPruned()  # never with this space
                    trial.report(acc, step)
                    if trial.should_prune():
                        raise optuna.TrialPruned()
        return acc

    study = make_study(prune=True)
    study.optimize(objective, n_trials=args.trials)
    return study


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=64)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--only", default="pytorch,mbt,mbt-no-pruner")
    args = parser.parse_args()
    optuna.logging.set_verbosity(optuna.logging.WARNING)

    train, validation = splits(mbt.compile(SPEC))
    flags = ("avx2", "avx512f", "amx_tile")
    print(f"machine: {machine.describe(flags)}; "
          f"Python {platform.python_version()}, "
          f"Optuna {optuna.__version__}")
    print(f"{args.trials} trials of {args.epochs} epochs, batch 128, "
          f"{len(train[0])} training and {len(validation[0])} validation "
          f"samples; mbt batches of {args.batch}")
    searches = {
        "pytorch": lambda: search_pytorch(args, train, validation),
        "mbt": lambda: search_mbt(args, train, validation, prune=True),
        "mbt-no-pruner": lambda: search_mbt(args, train, validation,
                                            prune=False),
    }
    results = {}
    for name in args.only.split(","):
        start = time.perf_counter()
        study = searches[name]()
        seconds = time.perf_counter() - start
        states = [t.state.name for t in study.trials]
        results[name] = (seconds, study.best_value)
        print(f"{name:14s} {seconds:8.1f} s  best validation accuracy "
              f"{study.best_value:.4f}  pruned {states.count('PRUNED'):2d}  "
              f"failed {states.count('FAIL')}  best {study.best_params}",
              flush=True)
    for other in ("pytorch", "mbt-no-pruner"):
        if "mbt" in results and other in results:
            (seconds, best), (base, base_best) = results["mbt"], results[other]
            print(f"mbt vs {other}: {base / seconds:.2f}x the speed "
                  f"({base - seconds:.1f} s saved), best accuracy "
                  f"{best - base_best:+.4f}")

if __name__ == "__main__":
    main()
