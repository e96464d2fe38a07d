"""mbt: compile a sweep of models and train them all at once, from Python.

    import mbt

    sweep = mbt.compile("spec.mbt")          # or mbt.compile(source="...")
    run = sweep.train(train=(x, y), test=(x_test, y_test), out="results/run")
    run.leaderboard                          # as leaderboard.json
    run.state_dict(3)                        # {name: torch.Tensor or ndarray}

The spec's own data set is replaced by the arrays given to `train`: NumPy
arrays or CPU torch tensors, x holding samples of the model's input shape
and y its targets (class indices, or values for a regression target).
Errors of the compiler (with its diagnostics) and of the runtime are
raised as mbt.Error. docs/python.md has the whole API.
"""

import json
import os
import tempfile

from . import _blas

_blas.use_vector_kernels()  # before NumPy or _mbt loads OpenBLAS

import numpy as np  # noqa: E402

from . import _hparams, _mbt  # noqa: E402
from ._errors import Error

__all__ = ["Error", "Sweep", "Run", "compile"]


def __getattr__(name):
    # mbt.optuna imports Optuna, which mbt itself does not need: it loads
    # on first use.
    if name == "optuna":
        import importlib
        return importlib.import_module(".optuna", __name__)
    raise AttributeError(f"module 'mbt' has no attribute '{name}'")


def _reraise(error):
    raise Error(str(error)) from None


def _spec_text(value):
    """A Python value as the spec language writes it."""
    if isinstance(value, str):
        return value                     # spec text as it is: "mlp(hidden = 64)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_spec_text(v) for v in value) + "]"
    raise Error(f"cannot write {value!r} ({type(value).__name__}) as a "
                "sweep setting; give its spec text as a string")


def compile(path=None, *, source=None, out=None, parallel=True, settings=None,
            mcpu=None):
    """Compiles a spec (a file, or its text as `source`) into a Sweep.

    `out` is where the artifact (a shared library) goes; by default a
    temporary folder that lives as long as the Sweep. Paths in the spec
    (data files, checkpoints, imports) resolve against the spec's folder,
    or the working directory for `source`. `settings` replaces (or adds)
    settings of the spec's sweep, as `mbtc --set` does: {"models": 16,
    "model": "mlp(hidden = 64)", "epochs": 3}, numbers and lists as
    Python values, anything else as its spec text. `mcpu` compiles the
    artifact's code for another CPU by LLVM's name, as `mbtc --mcpu` does
    ("haswell" for machines with AVX2 alone, "x86-64" for any x86-64);
    by default, this host's CPU with all its extensions. An artifact whose
    CPU has an extension the machine that loads it lacks is refused there.
    """
    if (path is None) == (source is None):
        raise TypeError("mbt.compile takes a spec's path or source=, not both")
    if path is not None:
        path = os.fspath(path)
        try:
            with open(path, encoding="utf-8") as f:
                source = f.read()
        except OSError as e:
            raise Error(f"cannot read spec '{path}': {e.strerror}") from None
        name = path
    else:
        name = "<string>"
    return _Spec(source, name, parallel, dict(settings or {}),
                 mcpu or "").compile({}, out)


class _Spec:
    """What a Sweep is compiled from; Sweep.recompile compiles it again
    with other settings (mbt.optuna compiles one program per structure)."""

    def __init__(self, source, name, parallel, settings, mcpu=""):
        self.source = source
        self.name = name          # the file, or "<string>"
        self.parallel = parallel
        self.settings = settings
        self.mcpu = mcpu          # "": this host's CPU

    def compile(self, settings, out=None):
        merged = dict(self.settings)
        merged.update(settings)
        workdir = None
        if out is None:
            workdir = tempfile.TemporaryDirectory(prefix="mbt-")
            out = os.path.join(workdir.name, "model.so")
        out = os.fspath(out)
        lines = [f"{key} = {_spec_text(value)}"
                 for key, value in merged.items()]
        ok, diagnostics, manifest = _mbt.compile_spec(
            self.source, self.name, out, self.parallel, lines, self.mcpu)
        if not ok:
            raise Error(diagnostics.rstrip() or f"cannot compile '{self.name}'")
        spec = _Spec(self.source, self.name, self.parallel, merged, self.mcpu)
        return Sweep(out, json.loads(manifest), diagnostics, workdir, spec)


def _as_array(value, what):
    """A C-contiguous NumPy view of an array or CPU torch tensor."""
    if type(value).__module__.startswith("torch"):
        if value.device.type != "cpu":
            raise Error(f"{what} is on {value.device}; pass a CPU tensor")
        value = value.detach().numpy()
    array = np.asarray(value)
    if not array.flags.c_contiguous:
        array = np.ascontiguousarray(array)
    return array


def _split(pair, name):
    if pair is None:
        return None, None
    try:
        x, y = pair
    except (TypeError, ValueError):
        raise Error(f"{name} must be a pair (x, y) of arrays") from None
    if x is None or y is None:
        raise Error(f"the {name} split needs both x and y")
    return _as_array(x, f"{name} x"), _as_array(y, f"{name} y")


class Sweep:
    """A compiled sweep: the artifact and its manifest."""

    def __init__(self, library, manifest, warnings, workdir=None, spec=None):
        self.library = library
        self.manifest = manifest
        #: The compiler's warnings, as mbtc prints them ("" for none).
        self.warnings = warnings
        self._workdir = workdir
        self._spec = spec
        self._programs = {}

    def recompile(self, settings, out=None):
        """The same spec compiled with more settings (over those it was
        compiled with), as a new Sweep: {"models": 4, "model": "mlp(width
        = 64)"}."""
        if self._spec is None:
            raise Error("this Sweep was not compiled by mbt.compile")
        return self._spec.compile(settings, out)

    @property
    def models(self):
        """The number of models the sweep trains."""
        return self.manifest["models"]

    def hyperparameters(self):
        """Each model's optimizer hyperparameters as the spec set them: one
        dict per model ({"lr": ..., "weight_decay": ..., ...})."""
        names = self.manifest["optimizer"]["hyper"]
        return [dict(zip(names, row)) for row in self.manifest["hyper_values"]]

    def _program_for(self, settings):
        """This sweep compiled with `settings` too (once per settings)."""
        key = repr(sorted(settings.items()))
        if key not in self._programs:
            self._programs[key] = self.recompile(settings)
        return self._programs[key]

    def data(self):
        """The spec's own data set, as `train` reads it when given no
        arrays: {"train": (x, y), "test": (x, y)}, NumPy arrays (x float32
        of the input's shape, y int64 class indices or float32 values)."""
        try:
            return _mbt.load_data(self.library)
        except _mbt.Error as e:
            _reraise(e)

    def train(self, train=None, test=None, out=None, epochs=None, quiet=True,
              hparams=None, on_eval=None, eval_every=0, resume=False,
              max_steps=None):
        """Trains every model on `train` = (x, y), evaluating on `test`
        (without `train`: on the spec's own data set, as mbtc train does);
        writes the run's results (leaderboard.json, models/, the
        checkpoint) to `out` (default: a new temporary folder) and returns
        the Run. `epochs` overrides the spec's; `max_steps` ends the run
        after that many steps in all, with an epoch end's evaluation,
        results and checkpoint (Hugging Face's max_steps; `mbtc train
        --max-steps`); `quiet=False` shows the progress and prints the
        leaderboard, as `mbtc train` does.
        `hparams`, one dict per model, sets hyperparameters of each model
        ([{"lr": 1e-3, "dropout": 0.1}, ...]: what a dict leaves out keeps
        the spec's value): the optimizer's without recompiling; the
        clipping bound ("clip"), the schedule's parameters and the model's
        numeric arguments by compiling the spec once more with those
        values (once per values: the Sweep keeps the program).

        `on_eval(step, metrics)` is called at every evaluation (each
        epoch's end, and every `eval_every` steps): `metrics` holds the
        epoch, the step and each model's test and validation means
        ({"loss": ..., "acc": ...} per model; None for a split the run does
        not have); it may return the models to stop, which freeze as
        halving's do. Ctrl-C stops the run between two steps with
        KeyboardInterrupt, after writing its checkpoint: `resume=True`
        with the same `out` continues it."""
        if max_steps is not None and int(max_steps) < 1:
            raise Error(f"max_steps must be at least 1, got {max_steps}")
        train_x, train_y = _split(train, "train")
        test_x, test_y = _split(test, "test")
        if out is None:
            out = tempfile.mkdtemp(prefix="mbt-run-")
        out = os.fspath(out)
        if resume and not os.path.exists(os.path.join(out, "checkpoint.mbtrun")):
            raise Error(f"resume=True continues the run in '{out}', which has "
                        "no checkpoint.mbtrun")
        os.makedirs(out, exist_ok=True)
        program, hyper = self, []
        if hparams is not None:
            hyper, settings = _hparams.split(self.manifest, hparams)
            if settings:
                program = self._program_for(settings)
        try:
            _mbt.train(program.library, out,
                       -1 if epochs is None else int(epochs), quiet, train_x,
                       train_y, test_x, test_y, hyper, on_eval,
                       int(eval_every), resume,
                       0 if max_steps is None else int(max_steps))
        except _mbt.Error as e:
            _reraise(e)
        return Run(out, program)

    def __repr__(self):
        return (f"mbt.Sweep({self.manifest['model']!r}, "
                f"models={self.models}, library={self.library!r})")


class Run:
    """The results of one training run, in its folder."""

    def __init__(self, out, sweep):
        self.out = out
        self.sweep = sweep

    @property
    def leaderboard(self):
        """The models ranked, as leaderboard.json holds them."""
        with open(os.path.join(self.out, "leaderboard.json"),
                  encoding="utf-8") as f:
            return json.load(f)

    def state_dict(self, model):
        """Model `model`'s parameters and buffers by name: torch tensors
        where torch is installed, NumPy arrays otherwise."""
        if not 0 <= model < self.sweep.models:
            raise Error(f"model {model} is not one of the sweep's "
                        f"{self.sweep.models}")
        path = os.path.join(self.out, "models", f"model-{model}.safetensors")
        tensors = _read_safetensors(path)
        try:
            import torch
        except ImportError:
            return tensors
        return {name: torch.from_numpy(array) for name, array in tensors.items()}

    def __repr__(self):
        return f"mbt.Run({self.out!r})"


_DTYPES = {"F32": np.float32, "F64": np.float64}


def _read_safetensors(path):
    """The tensors of a safetensors file that mbt wrote, as NumPy arrays."""
    with open(path, "rb") as f:
        data = f.read()
    length = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + length])
    base = 8 + length
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        array = np.frombuffer(data[base + begin:base + end],
                              dtype=_DTYPES[entry["dtype"]])
        tensors[name] = array.reshape(entry["shape"]).copy()
    return tensors
