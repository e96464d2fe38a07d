#!/usr/bin/env python3
"""A batched Optuna search on Fashion-MNIST that prunes inside the batch.

64 trials of the MLP in optuna_search.mbt, each choosing a learning rate
and a weight decay (AdamW's, set at run time), a width (64, 128 or 256:
a program each) and a dropout rate. Optuna's TPE sampler asks 16 trials
at a time (its constant liar keeps them apart); mbt trains each batch's
trials together, reports every trial's validation accuracy every 100
steps and at each epoch's end, and stops the models whose trial the
median pruner prunes. The best trial's model is in its run folder.

    python3 examples/optuna_search.py [--trials 64] [--batch 16]
                                      [--epochs 3] [--out results/optuna]

tools/bench/optuna_search.py runs the same search against Optuna driving
one PyTorch model per trial.
"""
import argparse
import os
import time
import warnings

import optuna

import mbt

SPEC = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                    "optuna_search.mbt")


def space(trial):
    """One model's hyperparameters: AdamW's learning rate and weight
    decay, the hidden layer's width and its dropout rate."""
    return {
        "lr": trial.suggest_float("lr", 1e-4, 1e-1, log=True),
        "weight_decay": trial.suggest_float("weight_decay", 1e-5, 1e-1,
                                            log=True),
        "width": trial.suggest_categorical("width", [64, 128, 256]),
        "dropout": trial.suggest_float("dropout", 0.0, 0.5),
    }


def make_study(seed=0, prune=True):
    """A study that maximizes accuracy: TPE with constant liar (a batch's
    trials are sampled knowing of each other), and a median pruner that
    lets the first 8 trials and each trial's first 200 steps run."""
    warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
    pruner = (optuna.pruners.MedianPruner(n_startup_trials=8,
                                          n_warmup_steps=200)
              if prune else optuna.pruners.NopPruner())
    return optuna.create_study(
        direction="maximize", pruner=pruner,
        sampler=optuna.samplers.TPESampler(seed=seed, constant_liar=True))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=64)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--out", default="results/optuna")
    args = parser.parse_args()

    study = make_study()
    start = time.perf_counter()
    mbt.optuna.optimize(study, mbt.compile(SPEC), space,
                        n_trials=args.trials, batch=args.batch, metric="acc",
                        epochs=args.epochs, eval_every=100, out=args.out)
    seconds = time.perf_counter() - start
    states = [t.state.name for t in study.trials]
    print(f"{args.trials} trials in {seconds:.1f} s: "
          f"{states.count('COMPLETE')} complete, "
          f"{states.count('PRUNED')} pruned, {states.count('FAIL')} failed")
    best = study.best_trial
    print(f"best: trial {best.number}, validation accuracy {best.value:.4f}, "
          + ", ".join(f"{k} = {v:.4g}" if isinstance(v, float) else
                      f"{k} = {v}" for k, v in best.params.items()))
    print(f"its model: {best.user_attrs['mbt_run']}/models/"
          f"model-{best.user_attrs['mbt_model']}.safetensors")


if __name__ == "__main__":
    main()
