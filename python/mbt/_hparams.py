"""Per-model hyperparameters given to Sweep.train (`hparams=`).

The optimizer's hyperparameters are a table the artifact reads at every
step, so they change without compiling. The clipping bound, the
schedule's parameters and the model's numeric arguments are compiled
into the program: for those, the Sweep's spec is compiled once more with
each model's values written as per-model lists (Sweep.train caches that
program per values), which trains exactly as a spec that writes them.
"""

from ._errors import Error


def _number(value):
    """A number as the spec language writes it: an integral value as an
    int (an int argument refuses 128.0; a float one takes 128)."""
    value = float(value)
    if value.is_integer() and abs(value) < 2**53:
        return str(int(value))
    return repr(value)


def per_model(values):
    """One value for all models, or a list of one per model."""
    if len(set(values)) == 1:
        return _number(values[0])
    return "[" + ", ".join(_number(v) for v in values) + "]"


class _Columns:
    """One kind of per-model values of the manifest: names, and a row of
    values per model that the given dicts override."""

    def __init__(self, names, rows):
        self.names = list(names)
        self.rows = [list(row) for row in rows]
        self.given = False

    def take(self, model, name, value):
        if name not in self.names:
            return False
        self.rows[model][self.names.index(name)] = float(value)
        self.given = True
        return True

    def call(self, function):
        """`function(name = values, ...)` over every column."""
        args = ", ".join(
            f"{name} = {per_model([row[k] for row in self.rows])}"
            for k, name in enumerate(self.names))
        return f"{function}({args})"


def _known_names(manifest):
    names = list(manifest["optimizer"]["hyper"])
    if manifest.get("clip_norm"):
        names.append("clip")
    if manifest.get("schedule"):
        names += manifest["schedule"]["params"]
    if manifest.get("model_args"):
        names += manifest["model_args"]["names"]
    return names


def split(manifest, hparams):
    """(hyper, settings) for `hparams`, one dict per model: the [M, H]
    optimizer table over the spec's values ([] when no dict sets one),
    and the sweep settings that compile the rest in ({} when none does)."""
    models = manifest["models"]
    if len(hparams) != models:
        raise Error(f"hparams has {len(hparams)} dicts for the sweep's "
                    f"{models} models")
    optimizer = manifest["optimizer"]
    hyper = _Columns(optimizer["hyper"], manifest["hyper_values"])
    clip = _Columns(["clip"], [[c] for c in manifest.get("clip_norm") or []])
    schedule = manifest.get("schedule")
    scheduled = _Columns(schedule["params"] if schedule else [],
                         schedule["values"] if schedule else [])
    model_args = manifest.get("model_args") or {"names": [], "values": []}
    args = _Columns(model_args["names"], model_args["values"])
    for model, given in enumerate(hparams):
        for name, value in given.items():
            # The optimizer's first: its names win over the others'.
            if not any(columns.take(model, name, value)
                       for columns in (hyper, clip, scheduled, args)):
                raise Error(
                    f"model {model}: '{name}' is not a hyperparameter of the "
                    f"sweep ({', '.join(_known_names(manifest))}): the "
                    "optimizer's, 'clip' where the sweep clips, the "
                    "schedule's or a numeric argument of the model")
    settings = {}
    if clip.given:
        settings["clip"] = per_model([row[0] for row in clip.rows])
    if scheduled.given:
        settings["schedule"] = scheduled.call(schedule["name"])
    if args.given:
        settings["model"] = args.call(manifest["model"])
    return (hyper.rows if hyper.given else []), settings
