#!/usr/bin/env python3
"""`import mbt` trains to the CLI's parameters, bit for bit.

One spec (an MLP on the user's arrays, 3 models, Adam, a validation split
and dropout: every model draws its own masks and the data order is the
runtime's) is trained by `mbtc train` on x.npy / y.npy, and by the
Python module on the same arrays as NumPy arrays (float64 x, int64 y:
converted by the runtime as the .npy reader converts them) and, a third
time, as torch tensors. Each run's models/model-<i>.safetensors must be
the CLI's byte for byte, and the leaderboards must agree. Also: a spec
given as text compiles as its file does; state_dict(i) holds the file's
tensors; hyperparameters given at run time (hparams=) train to the
bytes of a spec that writes the same values, and are reported as such;
and sweep settings given at compile time (settings=) do the same; model arguments,
a schedule's parameters and the clipping bound given in hparams (the
spec compiled again once, with them) do the same; with
no arrays, train() reads the spec's own files and ends where the CLI
does, and data() returns them. Exit status 0 when all hold; a message and 1 otherwise.
"""
import argparse
import filecmp
import json
import os
import shutil
import subprocess
import sys

# mbt first: on a CPU OpenBLAS does not know, it picks OpenBLAS's kernels
# as mbt-run does only while OpenBLAS is not loaded (NumPy loads it).
import mbt

import numpy as np

SPEC = """
import "nn"

model mlp {
  input  x: f32[6]
  target y: class[3]
  h      = relu(linear(x, 8))
  logits = linear(dropout(h, rate = 0.25), 3)
  loss   = cross_entropy(logits, y)
  metric acc = accuracy(logits, y)
}
sweep {
  models = 3
  optim  = adam(lr = [0.01, 0.003, 0.001])
  data   = npy(x = "x.npy", y = "y.npy", test_x = "xt.npy",
               test_y = "yt.npy", batch = 16, validation = 0.2)
  epochs = 3
}
"""


def fail(message):
    print(f"module_matches_cli: FAIL: {message}")
    sys.exit(1)


def same_models(a, b, models, what):
    for i in range(models):
        name = f"models/model-{i}.safetensors"
        if not filecmp.cmp(os.path.join(a, name), os.path.join(b, name),
                           shallow=False):
            fail(f"{what}: {name} differs from the CLI's")


TUNED = """
import "nn"

model mlp(width: int = 8, rate: float = 0.25, gain: float = 1.0) {
  input  x: f32[6]
  target y: class[3]
  h      = relu(linear(x, width))
  logits = gain * linear(dropout(h, rate = rate), 3)
  loss   = cross_entropy(logits, y)
  metric acc = accuracy(logits, y)
}
sweep {
  models   = 3
  model    = MODEL
  optim    = sgd(lr = LR, momentum = 0.9)
  schedule = cosine(total = 40, warmup = WARMUP)
  clip     = CLIP
  data     = npy(x = "x.npy", y = "y.npy", test_x = "xt.npy",
                 test_y = "yt.npy", batch = 16)
  epochs   = 3
}
"""


def check_compiled_hparams(work, spec, x, y, xt, yt):
    """hparams that the program compiles in (model arguments, the
    schedule's parameters, the clipping bound), with the optimizer's:
    the models and leaderboard of a spec that writes the same values."""
    def tuned(model, lr, warmup, clip):
        text = (TUNED.replace("MODEL", model).replace("LR", lr)
                .replace("WARMUP", warmup).replace("CLIP", clip))
        return mbt.compile(source=text)

    os.chdir(work)
    base = tuned("mlp", "0.05", "5", "1.0")
    written = tuned("mlp(rate = [0.1, 0.25, 0.4], gain = [1.0, 0.5, 2.0])",
                    "[0.05, 0.02, 0.1]", "[5, 0, 10]", "[1.0, 0.5, 2.0]")
    hparams = [{"rate": 0.1, "gain": 1.0, "warmup": 5, "clip": 1.0},
               {"rate": 0.25, "gain": 0.5, "warmup": 0, "clip": 0.5,
                "lr": 0.02},
               {"rate": 0.4, "gain": 2.0, "warmup": 10, "clip": 2.0,
                "lr": 0.1}]
    written_run = written.train(out=os.path.join(work, "tuned-written"))
    given_run = base.train(hparams=hparams,
                           out=os.path.join(work, "tuned-given"))
    same_models(written_run.out, given_run.out, 3,
                "model arguments, schedule and clip in hparams (against the "
                "spec that writes them)")
    if given_run.leaderboard != written_run.leaderboard:
        fail("model arguments, schedule and clip in hparams: the "
             "leaderboard differs from the spec's")
    # The program is compiled once per values, then reused.
    again = base.train(hparams=hparams, out=os.path.join(work, "tuned-again"))
    if again.sweep is not given_run.sweep:
        fail("the same hparams compiled the program again")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mbtc", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()

    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    rng = np.random.default_rng(7)
    x = rng.normal(size=(200, 6))
    y = (x[:, 0] + x[:, 1] > 0).astype(np.int64) + (x[:, 2] > 1)
    xt = rng.normal(size=(50, 6))
    yt = (xt[:, 0] + xt[:, 1] > 0).astype(np.int64) + (xt[:, 2] > 1)
    for name, array in [("x", x), ("y", y), ("xt", xt), ("yt", yt)]:
        np.save(os.path.join(args.work, f"{name}.npy"), array)
    spec = os.path.join(args.work, "spec.mbt")
    with open(spec, "w") as f:
        f.write(SPEC)

    cli = os.path.join(args.work, "cli")
    subprocess.run([args.mbtc, "train", spec, "--out", cli, "--quiet"],
                   check=True, stdout=subprocess.DEVNULL)

    sweep = mbt.compile(spec)
    if sweep.models != 3:
        fail(f"the sweep has {sweep.models} models, not 3")
    numpy_run = sweep.train(train=(x, y), test=(xt, yt),
                            out=os.path.join(args.work, "numpy"))
    same_models(cli, numpy_run.out, 3, "NumPy arrays")
    with open(os.path.join(cli, "leaderboard.json")) as f:
        if json.load(f) != numpy_run.leaderboard:
            fail("the leaderboards differ")
    # Without arrays, train reads the spec's own files, as mbtc does, and
    # data() gives them as arrays (float32 x, int64 y).
    own_run = sweep.train(out=os.path.join(args.work, "own"))
    same_models(cli, own_run.out, 3, "the spec's own data set")
    own = sweep.data()
    if not (np.array_equal(own["train"][0], x.astype(np.float32))
            and own["train"][0].dtype == np.float32
            and np.array_equal(own["test"][1], yt)):
        fail("data() does not give the spec's arrays")
    # float32 samples are read in place, not converted: the same models.
    borrowed = sweep.train(train=(x.astype(np.float32), y.astype(np.int32)),
                           test=(xt.astype(np.float32), yt),
                           out=os.path.join(args.work, "float32"))
    same_models(cli, borrowed.out, 3, "float32 arrays read in place")

    # Hyperparameters at run time: the first artifact trained with another
    # spec's learning rates and weight decay ends where that spec's own
    # artifact ends, and reports them.
    other = SPEC.replace("lr = [0.01, 0.003, 0.001]",
                         "lr = [0.02, 0.005, 0.002], weight_decay = 0.01")
    written = mbt.compile(source=other, out=os.path.join(args.work, "b.so"))
    written_run = written.train(train=(x, y), test=(xt, yt),
                                out=os.path.join(args.work, "written"))
    hparams = [{"lr": lr, "weight_decay": 0.01} for lr in (0.02, 0.005, 0.002)]
    if written.hyperparameters()[1]["lr"] != 0.005:
        fail(f"hyperparameters() gives {written.hyperparameters()}")
    given_run = sweep.train(train=(x, y), test=(xt, yt), hparams=hparams,
                            out=os.path.join(args.work, "given"))
    same_models(written_run.out, given_run.out, 3,
                "hparams at run time (against the spec that writes them)")
    if given_run.leaderboard != written_run.leaderboard:
        fail("hparams at run time: the leaderboard differs from the spec's")

    # settings= replaces the spec's sweep settings at compile time: the
    # first spec with the other spec's optim trains to its models.
    overridden = mbt.compile(spec, settings={
        "optim": "adam(lr = [0.02, 0.005, 0.002], weight_decay = 0.01)",
        "epochs": 3})
    settings_run = overridden.train(train=(x, y), test=(xt, yt),
                                    out=os.path.join(args.work, "settings"))
    same_models(written_run.out, settings_run.out, 3,
                "settings= (against the spec that writes them)")
    resized = mbt.compile(spec, settings={"models": 2,
                                          "optim": "adam(lr = [0.1, 0.2])"})
    if resized.models != 2:
        fail(f"settings={{'models': 2}} gave {resized.models} models")
    check_compiled_hparams(args.work, spec, x, y, xt, yt)

    # max_steps= is mbtc train --max-steps: 5 steps of the 10 of an epoch
    # (the CLI's models), and a run of 5 steps is not the full run's.
    cli5 = os.path.join(args.work, "cli5")
    subprocess.run([args.mbtc, "train", spec, "--out", cli5, "--quiet",
                    "--max-steps", "5"], check=True, stdout=subprocess.DEVNULL)
    short_run = sweep.train(train=(x, y), test=(xt, yt), max_steps=5,
                            out=os.path.join(args.work, "short"))
    same_models(cli5, short_run.out, 3, "max_steps=5")
    with open(os.path.join(cli, "models", "model-0.safetensors"), "rb") as a, \
            open(os.path.join(cli5, "models", "model-0.safetensors"), "rb") as b:
        if a.read() == b.read():
            fail("--max-steps 5 trained as far as the whole run")
    try:
        sweep.train(train=(x, y), test=(xt, yt), max_steps=0)
        fail("max_steps=0 was taken")
    except mbt.Error as e:
        if "max_steps must be at least 1" not in str(e):
            fail(f"max_steps=0: {e}")

    # The spec as text (its paths resolve against the working directory).
    os.chdir(args.work)
    from_text = mbt.compile(source=SPEC)
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        torch_run = from_text.train(
            train=(torch.from_numpy(x), torch.from_numpy(y)),
            test=(torch.from_numpy(xt), torch.from_numpy(yt)), out="torch")
        same_models(cli, torch_run.out, 3, "torch tensors, spec as text")
        state = torch_run.state_dict(2)
        if sorted(state) != ["linear_0.b", "linear_0.w", "logits.b",
                             "logits.w"]:
            fail(f"state_dict(2) holds {sorted(state)}")
        if tuple(state["linear_0.w"].shape) != (6, 8):
            fail(f"linear_0.w has shape {tuple(state['linear_0.w'].shape)}")
    print("module_matches_cli: the module's models equal the CLI's, bit "
          "for bit (NumPy" + (", torch" if torch is not None else "") + ")")


if __name__ == "__main__":
    main()
