#!/usr/bin/env python3
"""Load times of Fashion-MNIST (60,000 + 10,000 images of 28 x 28) from the
user's own files: mbt's readers against NumPy, pandas and torchvision.

Writes the files once (as test/python/own_data_matches_builtin.py does:
.npz, CSV, a folder of PNGs), then times, each `--repeat` times, best of:
  mbt     `mbt-run MODEL.so --check-data` of a spec per source (its own
          "loaded in" time: both splits into training floats);
  peers   NumPy's np.load of the .npz into float32 arrays, pandas'
          read_csv into float32 arrays, torchvision's ImageFolder (PIL,
          Grayscale, ToTensor) through a DataLoader (batch 128, workers =
          cores) into stacked tensors.
Prints one markdown table row per source with the ratio, and for scale the
wall time of one epoch of examples/fashion_mlp_sweep.mbt (16 MLPs), which
a run pays per epoch where it loads its data once.
  tools/bench/load_peers.py --mbtc build/bin/mbtc --mbt-run build/bin/mbt-run
"""
import argparse
import os
import re
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "test", "python"))
import own_data_matches_builtin as files  # noqa: E402

SPEC = """
model m {
  input x: %s
  target y: class[10]
  param w: f32[784, 10] = zeros
  loss = cross_entropy(%s @ w, y)
}
sweep {
  models = 1
  optim = sgd(lr = 0.1)
  data = %s
}
"""


def best(repeat, fn):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def mbt_load(args, work, name, input_type, data):
    flat = "x" if input_type == "f32[784]" else "reshape(x, [784])"
    spec = os.path.join(work, "load-%s.mbt" % name)
    with open(spec, "w") as f:
        f.write(SPEC % (input_type, flat, data))
    model = os.path.join(work, "load-%s.so" % name)
    subprocess.run([args.mbtc, spec, "-o", model], check=True)
    seconds = []
    for _ in range(args.repeat):
        out = subprocess.run([args.mbt_run, model, "--check-data"], check=True,
                             capture_output=True, text=True).stdout
        seconds.append(float(re.search(r"loaded in ([0-9.]+) s", out)[1]))
    return min(seconds)


def numpy_load(work):
    for split in ("train", "test"):
        with np.load(os.path.join(work, split + ".npz")) as d:
            np.ascontiguousarray(d["images"], dtype=np.float32)
            d["labels"].astype(np.int64)


def pandas_load(work):
    import pandas
    for split in ("train", "test"):
        table = pandas.read_csv(os.path.join(work, split + ".csv"))
        table.drop(columns="label").to_numpy(np.float32)
        table["label"].to_numpy(np.int64)


def torchvision_load(work):
    import torch
    import torchvision
    from torchvision import transforms
    transform = transforms.Compose([transforms.Grayscale(),
                                    transforms.ToTensor()])
    for split in ("train", "test"):
        folder = torchvision.datasets.ImageFolder(
            os.path.join(work, "photos-" + split), transform=transform)
        loader = torch.utils.data.DataLoader(
            folder, batch_size=128, num_workers=os.cpu_count())
        xs = [x for x, _ in loader]
        torch.cat(xs)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mbtc", required=True)
    parser.add_argument("--mbt-run", required=True)
    parser.add_argument("--work", default="build/bench-load")
    parser.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    work = os.path.abspath(args.work)
    if not os.path.exists(os.path.join(work, "photos-test")):
        files.write_all(work, args.data)
    rows = [
        ("npz (float32)", mbt_load(args, work, "npz", "f32[784]",
                                   'npz("%s/train.npz", x = "images", '
                                   'y = "labels", test = "%s/test.npz")'
                                   % (work, work)),
         "NumPy np.load", best(args.repeat, lambda: numpy_load(work))),
        ("CSV (text)", mbt_load(args, work, "csv", "f32[784]",
                                'csv("%s/train.csv", target = "label", '
                                'test = "%s/test.csv")' % (work, work)),
         "pandas read_csv", best(args.repeat, lambda: pandas_load(work))),
        ("PNG folder", mbt_load(args, work, "png", "f32[1, 28, 28]",
                                'image_folder("%s/photos-train", '
                                'test = "%s/photos-test")' % (work, work)),
         "torchvision ImageFolder + DataLoader",
         best(args.repeat, lambda: torchvision_load(work))),
    ]
    example = os.path.join(HERE, "..", "..", "examples",
                           "fashion_mlp_sweep.mbt")
    model = os.path.join(work, "example.so")
    subprocess.run([args.mbtc, example, "-o", model], check=True)
    epoch = best(1, lambda: subprocess.run(
        [args.mbt_run, model, "--epochs", "1", "--quiet", "--out",
         os.path.join(work, "example-run")], check=True,
        stdout=subprocess.DEVNULL))
    print("one epoch of examples/fashion_mlp_sweep.mbt (16 models): "
          "%.2f s" % epoch)
    print("| source | mbt (s) | peer | peer (s) | peer / mbt |")
    print("|---|---|---|---|---|")
    for source, mbt, peer, seconds in rows:
        print("| %s | %.2f | %s | %.2f | %.1f |" % (source, mbt, peer, seconds,
                                                   seconds / mbt))


if __name__ == "__main__":
    sys.exit(main())
