#!/usr/bin/env python3
"""mbt.optuna.optimize: a batched search that prunes inside the batch.

The trials' parameters are enqueued, so each check knows what every
trial holds.
- Batch against alone: each finished trial's model (trained beside the
  batch's others, its learning rate and momentum set at run time, its
  dropout rate one of a program's per-model values) has the parameters,
  bit for bit, of the same hyperparameters trained alone, and the
  trial's value is that run's validation accuracy. Catches a trial given
  another model's value, hyperparameters or dropout rate.
- Grouping: one program per width in a batch (the trials of a width
  share a run folder), each compiled once; a float argument that must be
  a constant (`gain`, a function's constant argument) splits the
  programs too.
- Pruning: the trials the pruner prunes at their first report are
  PRUNED with that one report, and their models stopped there; the other
  models end as they do in a search without the pruner, bit for bit.
- A model that diverges fails its trial (FAIL) alone.
- Errors: a metric the model lacks, a study whose direction contradicts
  the metric, a space that returns no dict, a model argument the model
  lacks: mbt.Error, and the asked trials are FAIL, not left running;
  when one program of a batch fails, the trials of the programs trained
  before it keep their values.
Exit status 0 when all hold; a message and 1 otherwise.
"""
import filecmp
import os
import sys
import tempfile
import warnings

import numpy as np
import optuna

import mbt

SPEC = """
import "nn"

fn scaled(x, gain: float) {
  return gain * x
}
model mlp(width: int = 16, dropout: float = 0.0, gain: float = 1.0) {
  input  x: f32[16]
  target y: class[4]
  h      = dropout(relu(linear(x, width)), dropout)
  logits = scaled(linear(h, 4), gain)
  loss   = cross_entropy(logits, y)
  metric acc = accuracy(logits, y)
}
sweep {
  models = 1
  optim  = sgd(lr = 0.1, momentum = 0.9)
  data   = npy(x = "x.npy", y = "y.npy", batch = 16, validation = 0.25)
  epochs = 2
}
"""

FAILED = []


def check(condition, message):
    if not condition:
        FAILED.append(message)
        print(f"module_optuna: FAIL: {message}")


def data():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(320, 16)).astype(np.float32)
    y = (np.argmax(x[:, :4], axis=1) + (x[:, 4] > 1)).astype(np.int64) % 4
    return x, y


def space(trial):
    params = {"lr": trial.suggest_float("lr", 1e-3, 1e4, log=True),
              "momentum": trial.suggest_float("momentum", 0.0, 0.9),
              "width": trial.suggest_categorical("width", [8, 16]),
              "dropout": trial.suggest_float("dropout", 0.0, 0.5)}
    if "gain" in trial.study.user_attrs:
        params["gain"] = trial.suggest_float("gain", 0.5, 2.0)
    return params


TRIALS = [  # lr, momentum, width, dropout
    (0.05, 0.9, 8, 0.1), (0.02, 0.5, 16, 0.3), (0.1, 0.0, 8, 0.0),
    (0.03, 0.8, 16, 0.2), (0.2, 0.3, 8, 0.4), (0.01, 0.9, 16, 0.0),
]


def study_of(pruner=None, trials=TRIALS, gains=None):
    study = optuna.create_study(direction="maximize", pruner=pruner,
                                sampler=optuna.samplers.RandomSampler(0))
    for i, (lr, momentum, width, dropout) in enumerate(trials):
        params = {"lr": lr, "momentum": momentum, "width": width,
                  "dropout": dropout}
        if gains:
            params["gain"] = gains[i]
        study.enqueue_trial(params)
    if gains:
        study.set_user_attr("gain", True)
    return study


def model_file(trial):
    return os.path.join(trial.user_attrs["mbt_run"], "models",
                        f"model-{trial.user_attrs['mbt_model']}.safetensors")


class PruneFastLearners(optuna.pruners.BasePruner):
    """Prunes a trial whose learning rate exceeds `lr` at its first
    report."""

    def __init__(self, lr):
        self.lr = lr

    def prune(self, study, trial):
        return trial.params["lr"] > self.lr


def check_batch_against_alone(sweep, x, y, work):
    study = study_of()
    mbt.optuna.optimize(study, sweep, space, n_trials=6, batch=6,
                        train=(x, y), out=os.path.join(work, "search"))
    trials = study.trials
    check(all(t.state == optuna.trial.TrialState.COMPLETE for t in trials),
          f"not every trial finished: {[t.state.name for t in trials]}")
    runs = {t.params["width"]: set() for t in trials}
    for t in trials:
        runs[t.params["width"]].add(t.user_attrs["mbt_run"])
    check(all(len(r) == 1 for r in runs.values())
          and len(set().union(*runs.values())) == 2,
          f"the trials do not share one program per width: {runs}")
    for t in (trials[0], trials[3], trials[4]):
        p = t.params
        alone = sweep.recompile({
            "models": 1, "seed": [0],
            "model": f"mlp(width = {p['width']}, dropout = {p['dropout']!r})"})
        run = alone.train(train=(x, y), out=os.path.join(work, f"alone-{t.number}"),
                          hparams=[{"lr": p["lr"], "momentum": p["momentum"]}])
        check(filecmp.cmp(model_file(t),
                          os.path.join(run.out, "models/model-0.safetensors"),
                          shallow=False),
              f"trial {t.number}'s model differs from its run alone")
        check(t.value == run.leaderboard[0]["validation_acc"],
              f"trial {t.number}'s value {t.value} is not its run alone's "
              f"validation accuracy {run.leaderboard[0]['validation_acc']}")
        check(len(t.intermediate_values) >= 2,
              f"trial {t.number} has {len(t.intermediate_values)} reports")
    return study


def check_pruning(sweep, x, y, work, unpruned):
    study = study_of(PruneFastLearners(0.04))
    mbt.optuna.optimize(study, sweep, space, n_trials=6, batch=6,
                        train=(x, y), eval_every=5,
                        out=os.path.join(work, "pruned"))
    for t, u in zip(study.trials, unpruned.trials):
        if t.params["lr"] > 0.04:
            check(t.state == optuna.trial.TrialState.PRUNED
                  and list(t.intermediate_values) == [5],
                  f"trial {t.number} (lr {t.params['lr']}) is "
                  f"{t.state.name} after reports {t.intermediate_values}")
            board = mbt.Run(t.user_attrs["mbt_run"], sweep).leaderboard
            entry = next(e for e in board if e["model"] == t.user_attrs["mbt_model"])
            check(entry["stopped_at_step"] == 5,
                  f"trial {t.number}'s model stopped at "
                  f"{entry['stopped_at_step']}, not at step 5")
        else:
            check(t.state == optuna.trial.TrialState.COMPLETE
                  and t.value == u.value
                  and filecmp.cmp(model_file(t), model_file(u), shallow=False),
                  f"trial {t.number} ({t.state.name}, {t.value}) does not "
                  f"end as without the pruner ({u.value})")


def check_divergence(sweep, x, y, work):
    study = study_of(trials=[(0.05, 0.9, 8, 0.1), (1e4, 0.9, 8, 0.1),
                             (0.02, 0.5, 8, 0.0)])
    mbt.optuna.optimize(study, sweep, space, n_trials=3, batch=3,
                        train=(x, y), out=os.path.join(work, "diverged"))
    states = [t.state.name for t in study.trials]
    check(states == ["COMPLETE", "FAIL", "COMPLETE"],
          f"a diverging trial among two: states {states}")


def check_constant_float(sweep, x, y, work):
    study = study_of(trials=TRIALS[:4], gains=[1.0, 2.0, 1.0, 1.0])
    mbt.optuna.optimize(study, sweep, space, n_trials=4, batch=4,
                        train=(x, y), out=os.path.join(work, "gain"))
    runs = {t.number: t.user_attrs["mbt_run"] for t in study.trials}
    # widths 8, 16, 8, 16 and gains 1, 2, 1, 1: three programs.
    check(study.trials[0].state == optuna.trial.TrialState.COMPLETE
          and runs[0] == runs[2] and len(set(runs.values())) == 3,
          f"gain, a constant argument, does not split the programs: {runs}")


def check_failing_program(sweep, x, y, work):
    """A batch whose second program does not compile: the first
    program's trials keep their values, the others FAIL, and the error
    reaches the caller."""
    widths = [8, 8, -1]
    study = optuna.create_study(direction="maximize")
    try:
        mbt.optuna.optimize(
            study, sweep, lambda t: {"lr": 0.05, "width": widths[t.number]},
            n_trials=3, batch=3, train=(x, y), out=os.path.join(work, "bad"))
    except mbt.Error:
        pass
    else:
        check(False, "a width of -1 compiled")
    states = [t.state.name for t in study.trials]
    check(states == ["COMPLETE", "COMPLETE", "FAIL"],
          f"a batch whose second program fails: states {states}")


def expect_error(what, call, study, text):
    try:
        call()
    except mbt.Error as e:
        check(text in str(e), f"{what}: the message lacks '{text}': {e}")
    else:
        check(False, f"{what}: no mbt.Error")
    running = [t.number for t in study.trials
               if t.state == optuna.trial.TrialState.RUNNING]
    check(not running, f"{what}: trials {running} are left running")


def check_errors(sweep, x, y):
    study = study_of()
    expect_error("a metric the model lacks",
                 lambda: mbt.optuna.optimize(study, sweep, space, metric="f1",
                                             train=(x, y)),
                 study, "metric 'f1' is not an output of model 'mlp' (loss, acc)")
    wrong = optuna.create_study(direction="minimize")
    expect_error("a direction against the metric",
                 lambda: mbt.optuna.optimize(wrong, sweep, space, train=(x, y)),
                 wrong, "the study's direction is minimize, but 'acc' is "
                 "better higher")
    expect_error("a space without a dict",
                 lambda: mbt.optuna.optimize(study, sweep, lambda t: 0.1,
                                             n_trials=2, batch=2, train=(x, y)),
                 study, "space(trial) returned float, not a dict")
    expect_error("an argument the model lacks",
                 lambda: mbt.optuna.optimize(
                     study, sweep, lambda t: {"depth": 2}, n_trials=2, batch=2,
                     train=(x, y)),
                 study, "depth")


def main():
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
    x, y = data()
    with tempfile.TemporaryDirectory(prefix="mbt-optuna-test-") as work:
        sweep = mbt.compile(source=SPEC)
        unpruned = check_batch_against_alone(sweep, x, y, work)
        check_pruning(sweep, x, y, work, unpruned)
        check_divergence(sweep, x, y, work)
        check_constant_float(sweep, x, y, work)
        check_failing_program(sweep, x, y, work)
        check_errors(sweep, x, y)
    if FAILED:
        sys.exit(1)
    print("module_optuna: all checks hold")


if __name__ == "__main__":
    main()
