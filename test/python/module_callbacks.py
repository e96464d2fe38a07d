#!/usr/bin/env python3
"""The Python module's evaluation callback and Ctrl-C.

- on_eval(step, metrics) is called at each epoch's end and every
  eval_every steps, with each model's test and validation means; the
  models it returns stop there: model 0, stopped at the first epoch's
  end, ends with the parameters of a one-epoch run, bit for bit, and the
  leaderboard says when it stopped; the others train on.
- An exception in the callback reaches the caller as itself.
- Zero copy: a float32 x is read in place (NaNs written into it from the
  callback make every model diverge), a float64 one converted once (the
  same change is not seen).
- Ctrl-C (a SIGINT sent by another thread while the training runs with
  the GIL released) stops the run between two steps with
  KeyboardInterrupt after writing its checkpoint; resume=True then ends
  where an uninterrupted run ends, bit for bit.
Exit status 0 when all hold; a message and 1 otherwise.
"""
import filecmp
import os
import signal
import sys
import tempfile
import threading

import numpy as np

import mbt

SPEC = """
import "nn"

model mlp {
  input  x: f32[16]
  target y: class[4]
  h      = relu(linear(x, 32))
  logits = linear(h, 4)
  loss   = cross_entropy(logits, y)
  metric acc = accuracy(logits, y)
}
sweep {
  models = 3
  optim  = sgd(lr = [0.1, 0.05, 0.02], momentum = 0.9)
  data   = npy(x = "x.npy", y = "y.npy", batch = 8, validation = 0.1)
  epochs = 3
}
"""


def fail(message):
    print(f"module_callbacks: FAIL: {message}")
    sys.exit(1)


def same_models(a, b, models):
    return all(
        filecmp.cmp(os.path.join(a, f"models/model-{i}.safetensors"),
                    os.path.join(b, f"models/model-{i}.safetensors"),
                    shallow=False) for i in models)


def main():
    work = tempfile.mkdtemp(prefix="mbt-callbacks-")
    os.chdir(work)
    rng = np.random.default_rng(3)
    x = rng.normal(size=(12000, 16)).astype(np.float32)
    y = (np.argmax(x[:, :4], axis=1)).astype(np.int64)
    xt, yt = x[:1000], y[:1000]
    sweep = mbt.compile(source=SPEC)

    calls = []

    def stop_first(step, metrics):
        calls.append((step, metrics))
        return [0] if len(calls) == 1 else None

    run = sweep.train(train=(x, y), test=(xt, yt), out="stopped",
                      on_eval=stop_first, eval_every=500)
    steps_per_epoch = len(range(0, 10800, 8))
    epoch_ends = [k * steps_per_epoch for k in (1, 2, 3)]
    steps = [step for step, _ in calls]
    if not set(epoch_ends) <= set(steps) or 500 not in steps:
        fail(f"on_eval was called at steps {steps}; expected every 500 and "
             f"the epoch ends {epoch_ends}")
    step, metrics = calls[0]
    if (metrics["step"] != step or metrics["epoch"] != 1
            or len(metrics["test"]) != 3 or len(metrics["validation"]) != 3
            or set(metrics["test"][2]) != {"loss", "acc"}):
        fail(f"the first evaluation's metrics: {metrics}")
    board = {row["model"]: row for row in run.leaderboard}
    if board[0]["stopped_at_step"] != 500 or board[1]["stopped_at_step"]:
        fail(f"stopped_at_step: {[board[m]['stopped_at_step'] for m in board]}")

    # Model 0 stopped at step 500 has the parameters of a 500-step run.
    short = sweep.train(train=(x, y), test=(xt, yt), out="short",
                        on_eval=lambda step, metrics: [0, 1, 2] if step == 500
                        else None, eval_every=500, epochs=1)
    if not same_models(run.out, short.out, [0]):
        fail("model 0 stopped by the callback moved after it stopped")
    if same_models(run.out, short.out, [1]):
        fail("model 1 stopped although the callback did not stop it")

    def raises(step, metrics):
        raise ValueError("from the callback")

    try:
        sweep.train(train=(x, y), out="raises", on_eval=raises)
        fail("an exception in on_eval was swallowed")
    except ValueError as error:
        if str(error) != "from the callback":
            fail(f"on_eval's ValueError came back as {error!r}")

    # Zero copy: a float32 x is read where it is. Poisoned with NaN at the
    # first evaluation (step 500), it makes every model diverge after that
    # step; a float64 x is converted once, and the same change does not
    # reach the run.
    for dtype, seen in ((np.float32, True), (np.float64, False)):
        mutable = x.astype(dtype)

        def poison(step, metrics, mutable=mutable):
            mutable[:] = np.nan

        poisoned = sweep.train(train=(mutable, y), out=f"poisoned-{dtype.__name__}",
                               on_eval=poison, eval_every=500, epochs=1)
        diverged = [row["diverged_at_step"] for row in poisoned.leaderboard]
        if seen and not all(step and step > 500 for step in diverged):
            fail(f"a float32 x changed in place was not seen: {diverged}")
        if not seen and any(diverged):
            fail(f"a float64 x is converted, yet its change was seen: {diverged}")

    # Ctrl-C, from another thread, once training has started.
    straight = sweep.train(train=(x, y), test=(xt, yt), out="straight")

    def interrupt_soon(step, metrics):
        if step == 1000:
            threading.Timer(0.02, os.kill,
                            (os.getpid(), signal.SIGINT)).start()

    try:
        sweep.train(train=(x, y), test=(xt, yt), out="interrupted",
                    on_eval=interrupt_soon, eval_every=1000)
        fail("the run ended before the SIGINT stopped it")
    except KeyboardInterrupt:
        pass
    if not os.path.exists("interrupted/checkpoint.mbtrun"):
        fail("the interrupted run left no checkpoint")
    resumed = sweep.train(train=(x, y), test=(xt, yt), out="interrupted",
                          resume=True)
    if not same_models(straight.out, resumed.out, [0, 1, 2]):
        fail("the resumed run does not end where the straight run ends")
    print("module_callbacks: on_eval stops models, its errors propagate, "
          "Ctrl-C leaves a checkpoint that resumes to the straight run")


if __name__ == "__main__":
    main()
