"""Batched hyperparameter search with Optuna, pruning inside the batch.

    import optuna, mbt, mbt.optuna

    def space(trial):
        return {"lr": trial.suggest_float("lr", 1e-4, 1e-1, log=True),
                "width": trial.suggest_categorical("width", [64, 128, 256])}

    study = optuna.create_study(direction="maximize",
                                sampler=optuna.samplers.TPESampler(
                                    seed=0, constant_liar=True),
                                pruner=optuna.pruners.MedianPruner())
    mbt.optuna.optimize(study, mbt.compile("spec.mbt"), space,
                        n_trials=64, batch=16, metric="acc")

`optimize` asks `batch` trials at once and trains their models together,
one program for each structure the trials need. At every evaluation it
reports each trial's validation value (the test value where the data
set has no validation split) and stops the models whose trial the
pruner prunes; the others train on. A model that diverges fails its
trial alone. docs/python.md, "Batched search with Optuna", has the
details.
"""

import math
import os
import re
import tempfile
import warnings

import optuna

from . import Error, Sweep, _hparams, _spec_text, compile as _compile

__all__ = ["optimize"]

# The names the leaderboard ranks higher first (docs/language.md, rank_by).
_HIGHER_IS_BETTER = {"acc", "accuracy", "r2", "f1", "auc", "precision",
                     "recall"}


class _Trial:
    """One asked trial: its suggestions, split into the optimizer's
    hyperparameters (set at run time) and the model's arguments."""

    def __init__(self, trial, params, hyper_names):
        if not isinstance(params, dict):
            raise Error(f"trial {trial.number}: space(trial) returned "
                        f"{type(params).__name__}, not a dict of "
                        "hyperparameters")
        self.trial = trial
        self.hyper = {k: v for k, v in params.items() if k in hyper_names}
        self.args = {k: v for k, v in params.items() if k not in hyper_names}
        self.trained = False   # its program's run has ended
        self.pruned = False
        self.value = None


def _structure(trial, constant_args):
    """The model arguments that choose the program: those that are not
    floats (an int, bool or string is a shape or selects code), and those
    a compile found must be constants (`constant_args`). The models of
    one program may hold different values of the others."""
    return tuple(sorted(
        (k, v) for k, v in trial.args.items()
        if not isinstance(v, float) or k in constant_args))


def _model_setting(model, trials, structure):
    """The sweep's `model` setting for these trials: the structure's
    values, one value per model for the other arguments."""
    args = {k: _spec_text(v) for k, v in structure}
    for name in sorted(trials[0].args):
        if name not in args:
            args[name] = _hparams.per_model([t.args[name] for t in trials])
    if not args:
        return model
    return f"{model}(" + ", ".join(f"{k} = {v}" for k, v in args.items()) + ")"


class _Programs:
    """The sweep compiled once per (structure, model count, per-model
    values): model arguments are compiled into the program."""

    def __init__(self, sweep, seed):
        self.sweep = sweep
        self.seed = seed
        self.cache = {}
        self.compiles = 0
        # Arguments a compile found must agree within a program.
        self.constant_args = set()

    def get(self, trials, structure):
        n = len(trials)
        model = _model_setting(self.sweep.manifest["model"], trials, structure)
        settings = {"models": n, "model": model, "seed": [self.seed] * n}
        key = repr(sorted(settings.items()))
        if key not in self.cache:
            self.cache[key] = self.sweep.recompile(settings)
            self.compiles += 1
        return self.cache[key]


def _metric_value(row, metric):
    """A model's value of `metric` from its evaluation means, or None."""
    if row is None:
        return None
    value = row.get(metric)
    if value is None or not math.isfinite(value):
        return None
    return value


def _train_group(program, trials, metric, train_kwargs, out):
    """Trains one program's trials together in the run folder `out`,
    reporting to their trials and stopping the pruned ones."""

    def on_eval(step, metrics):
        split = metrics["validation"] or metrics["test"]
        if split is None:
            return None
        stop = []
        for model, t in enumerate(trials):
            if t.pruned:
                continue
            value = _metric_value(split[model], metric)
            if value is None:
                continue   # diverged: the leaderboard tells it at the end
            t.trial.report(value, step)
            if t.trial.should_prune():
                t.pruned = True
                stop.append(model)
        return stop

    hparams = [t.hyper for t in trials]
    run = program.train(hparams=hparams, on_eval=on_eval, out=out,
                        **train_kwargs)
    for entry in run.leaderboard:
        t = trials[entry["model"]]
        if t.pruned or entry.get("diverged"):
            continue
        t.value = entry.get(f"validation_{metric}")
        if t.value is None:
            t.value = entry.get(f"test_{metric}")
    return run


def _check_metric(study, sweep, metric):
    outputs = sweep.manifest.get("outputs", [])
    if metric not in outputs:
        raise Error(f"metric '{metric}' is not an output of model "
                    f"'{sweep.manifest['model']}' ({', '.join(outputs)})")
    maximize = metric in _HIGHER_IS_BETTER
    if study.direction == optuna.study.StudyDirection.NOT_SET:
        return
    if maximize != (study.direction == optuna.study.StudyDirection.MAXIMIZE):
        raise Error(f"the study's direction is {study.direction.name.lower()}"
                    f", but '{metric}' is better "
                    f"{'higher' if maximize else 'lower'}")


def _warn_without_liar(study, batch):
    sampler = study.sampler
    if (batch > 1 and isinstance(sampler, optuna.samplers.TPESampler)
            and not getattr(sampler, "_constant_liar", True)):
        warnings.warn("the study's TPESampler was created without "
                      "constant_liar=True: the trials of one batch are "
                      "sampled without knowing of each other", stacklevel=3)


def _groups(trials, programs):
    """The batch's trials by the program structure they need."""
    groups = {}
    for t in trials:
        groups.setdefault(_structure(t, programs.constant_args), []).append(t)
    return groups


_DIFFERS = re.compile(r"'(\w+)' differs between the models")


def _train_batch(trials, programs, metric, train_kwargs, runs, keep):
    """Trains a batch's trials, one run (folder `runs`/program-K) per
    program; with `keep`, each trial's user attributes name its run."""
    pending = list(_groups(trials, programs).items())
    count = 0
    while pending:
        structure, group = pending.pop(0)
        try:
            program = programs.get(group, structure)
        except Error as e:
            # A float argument used where the program needs a constant (a
            # shape, a function's constant argument): group by it too.
            match = _DIFFERS.search(str(e))
            if not match or match.group(1) in programs.constant_args:
                raise
            programs.constant_args.add(match.group(1))
            pending.extend(_groups(group, programs).items())
            continue
        out = os.path.join(runs, f"program-{count}")
        count += 1
        _train_group(program, group, metric, train_kwargs, out)
        for model, t in enumerate(group):
            t.trained = True
            if keep:
                t.trial.set_user_attr("mbt_run", out)
                t.trial.set_user_attr("mbt_model", model)


# Under Optuna's logger, so that optuna.logging's verbosity applies.
_LOG = optuna.logging.get_logger("optuna.mbt")


def _tell(study, t):
    """Tells the study a trial's end, and logs it as Study.optimize does."""
    number = t.trial.number
    if t.pruned:
        study.tell(t.trial, state=optuna.trial.TrialState.PRUNED)
        step = max(study.trials[number].intermediate_values, default=0)
        _LOG.info(f"Trial {number} pruned at step {step}.")
    elif t.value is None:
        study.tell(t.trial, state=optuna.trial.TrialState.FAIL)
        _LOG.warning(f"Trial {number} failed: its model diverged "
                     f"({t.trial.params}).")
    else:
        study.tell(t.trial, t.value)
        best = study.best_trial
        _LOG.info(f"Trial {number} finished with value: {t.value} and "
                  f"parameters: {t.trial.params}. Best is trial "
                  f"{best.number} with value: {best.value}.")


def optimize(study, sweep, space, n_trials=64, batch=16, metric="acc", *,
             train=None, test=None, epochs=None, eval_every=0, seed=0,
             out=None, quiet=True):
    """Runs `n_trials` trials of `study`, `batch` at a time.

    `sweep` is an mbt.Sweep (or a spec's path) whose spec describes one
    model; `space(trial)` returns that model's hyperparameters from
    `trial.suggest_*` as a dict: the optimizer's (set at run time, as
    Sweep.train's `hparams`) and the model's arguments (compiled in: a
    float may differ between the models of one program, an int, bool or
    string chooses the program, so trials are grouped by them and each
    group compiled once). Every model starts from seed `seed`.

    Each trial's value is its model's `metric` at the end of training, on
    the validation split when the data set has one, else on the test
    split; every evaluation (each epoch's end and every `eval_every`
    steps) is reported with `trial.report(value, step)`, and a trial the
    study's pruner prunes has its model stopped there (PRUNED). A model
    that diverges is FAIL; the others in its batch train on. `train`,
    `test`, `epochs` and `quiet` are Sweep.train's; each program's run
    goes under `out` (default: a temporary folder removed at the end),
    and each trial's user attributes name its run folder and model
    ("mbt_run", "mbt_model") when `out` is given.
    """
    if isinstance(sweep, (str, os.PathLike)):
        sweep = _compile(sweep)
    if not isinstance(sweep, Sweep):
        raise TypeError("mbt.optuna.optimize takes an mbt.Sweep or a spec's "
                        "path")
    if n_trials < 1 or batch < 1:
        raise Error(f"n_trials ({n_trials}) and batch ({batch}) must be "
                    "positive")
    _check_metric(study, sweep, metric)
    _warn_without_liar(study, batch)
    hyper_names = set(sweep.manifest["optimizer"]["hyper"])
    programs = _Programs(sweep, seed)
    workdir = None
    if out is None:
        workdir = tempfile.TemporaryDirectory(prefix="mbt-optuna-")
        root = workdir.name
    else:
        root = os.fspath(out)
    try:
        for first in range(0, n_trials, batch):
            asked = [study.ask() for _ in range(min(batch, n_trials - first))]
            trials = []
            try:
                for a in asked:
                    trials.append(_Trial(a, space(a), hyper_names))
                runs = os.path.join(root, f"batch-{first // batch}")
                kwargs = dict(train=train, test=test, epochs=epochs,
                              eval_every=eval_every, quiet=quiet)
                _train_batch(trials, programs, metric, kwargs, runs,
                             keep=out is not None)
            finally:
                # Also when a program fails or Ctrl-C stops the search: the
                # trials whose runs ended keep their results, the others
                # fail rather than stay RUNNING.
                for a in asked:
                    t = next((t for t in trials if t.trial is a), None)
                    if t is not None and t.trained:
                        _tell(study, t)
                    else:
                        study.tell(a, state=optuna.trial.TrialState.FAIL)
    finally:
        if workdir is not None:
            workdir.cleanup()
