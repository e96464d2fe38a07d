#!/usr/bin/env python3
"""Every error of `import mbt` is an mbt.Error with a clear message.

Each case does one wrong thing and must raise mbt.Error whose message
holds the expected text (the interpreter must survive every one): a spec
with a syntax error (the compiler's diagnostic, with its line), a
semantic error, a spec file that is not there; training data whose
samples have the wrong shape, labels out of range, x and y of different
lengths, a NaN, strings, a split given as one array or half a pair;
hyperparameters the sweep lacks, for another model count or not
finite, a model argument's value that does not compile; a model index out of range. Exit status 0 when all behave; a message and 1
otherwise.
"""
import os
import sys
import tempfile

import numpy as np

import mbt

SPEC = """
model m {
  input  x: f32[4]
  target y: class[3]
  param  w: f32[4, 3] = xavier_uniform
  loss   = cross_entropy(x @ w, y)
}
sweep {
  models = 2
  optim  = sgd(lr = [0.1, 0.01])
  data   = npy(x = "x.npy", y = "y.npy", batch = 4)
}
"""

failures = []


def expect(what, text, call):
    try:
        call()
    except mbt.Error as error:
        if text not in str(error):
            failures.append(f"{what}: the message\n  {error}\nlacks '{text}'")
        return
    except Exception as error:  # noqa: BLE001 - any other type is the bug
        failures.append(f"{what}: raised {type(error).__name__}: {error}")
        return
    failures.append(f"{what}: raised nothing")


def main():
    os.chdir(tempfile.mkdtemp(prefix="mbt-errors-"))
    expect("a syntax error", "<string>:2:10: error: expected '}'",
           lambda: mbt.compile(source="\nmodel m {"))
    expect("an unknown name", "error: use of undeclared name 'v'",
           lambda: mbt.compile(source=SPEC.replace("x @ w", "x @ v")))
    expect("a missing spec", "cannot read spec 'nowhere.mbt'",
           lambda: mbt.compile("nowhere.mbt"))
    expect("a CPU LLVM does not know", "error: mcpu=no-such-cpu: unknown "
           "CPU 'no-such-cpu'",
           lambda: mbt.compile(source=SPEC, mcpu="no-such-cpu"))
    expect("a setting the sweep does not know", "--set #2:1:1: error: "
           "unknown sweep setting 'modles'",
           lambda: mbt.compile(source=SPEC,
                               settings={"epochs": 2, "modles": 3}))
    expect("a setting that is not spec text", "cannot write {1: 2} (dict)",
           lambda: mbt.compile(source=SPEC, settings={"models": {1: 2}}))
    sweep = mbt.compile(source=SPEC)
    x = np.zeros((8, 4), np.float32)
    y = np.zeros(8, np.int64)
    expect("samples of the wrong shape",
           "holds samples of shape [3] but the input is f32[4]",
           lambda: sweep.train(train=(x[:, :3], y)))
    expect("a label out of range", "label 3",
           lambda: sweep.train(train=(x, y + 3)))
    expect("x and y of different lengths", "8",
           lambda: sweep.train(train=(x, y[:5])))
    nan = x.copy()
    nan[2, 1] = np.nan
    expect("a NaN", "sample 2 holds NaN at element 1", lambda: sweep.train(train=(nan, y)))
    expect("strings", "format",
           lambda: sweep.train(train=(np.array([["a"] * 4] * 8), y)))
    expect("one array for a split", "must be a pair (x, y)",
           lambda: sweep.train(train=x))
    expect("half a test split", "the test split needs both x and y",
           lambda: sweep.train(train=(x, y), test=(x, None)))
    expect("a hyperparameter the optimizer lacks",
           "model 1: 'momentum_x' is not a hyperparameter of the sweep (lr, "
           "momentum, dampening, weight_decay)",
           lambda: sweep.train(train=(x, y),
                               hparams=[{"lr": 0.1}, {"momentum_x": 0.9}]))
    # A model argument given at run time compiles the spec again: its
    # diagnostic, for the value hparams gave, is the error.
    with_width = mbt.compile(source=SPEC.replace("model m {", "model m(width: int = 4) {")
                             .replace("f32[4, 3]", "f32[width, 3]"))
    expect("a model argument's value that does not compile",
           "argument 'width' of model 'm' must be an int, got 4.5",
           lambda: with_width.train(train=(x, y),
                                    hparams=[{"width": 4.5}, {}]))
    expect("hparams for another model count",
           "hparams has 1 dicts for the sweep's 2 models",
           lambda: sweep.train(train=(x, y), hparams=[{"lr": 0.1}]))
    expect("a hyperparameter that is not finite", "model 0's lr is inf",
           lambda: sweep.train(train=(x, y),
                               hparams=[{"lr": float("inf")}, {}]))
    run = sweep.train(train=(x, y))
    expect("a model out of range", "model 2 is not one of the sweep's 2",
           lambda: run.state_dict(2))
    try:
        mbt.compile("a.mbt", source=SPEC)
        failures.append("a path and a source: raised nothing")
    except TypeError:
        pass
    if failures:
        print("module_errors: FAIL:\n" + "\n".join(failures))
        sys.exit(1)
    print("module_errors: every error is an mbt.Error that says what")


if __name__ == "__main__":
    main()
