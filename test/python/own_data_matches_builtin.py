#!/usr/bin/env python3
"""The user's own files train exactly as the built-in Fashion-MNIST does.

Writes Fashion-MNIST (read from Debian's idx files) as NumPy writes it
(.npz, stored and deflated), as CSV text and as a folder of PNG images,
trains the same sweep of 2 models for one epoch (469 steps) on the built-in
loader and on each file, and compares the per-model state dicts
(DIR/models/model-<i>.pt) byte for byte: a reader that changes one pixel,
one label or the order of two samples changes the parameters.

The pixels are written as the built-in loader sees them: float32(p) / 255
for npz and CSV (CSV as '%.9g' text, which float32 reads back exactly) and
the bytes p for PNG, which the image reader scales the same way. An image
folder orders its samples class by class (torchvision's ImageFolder), not
in the idx order, so it is compared with an .npz written in that order;
that .npz's reader is the one shown equal to the built-in loader. With
--mbt-data, the folders `mbt-data images fashion_mnist` writes (libpng)
are trained on too and compared with the same .npz: a pixel or a label
that the writer changes, or files that list in another order, fail it.
Exit status 0 when every pair agrees; a message and 1 otherwise.
"""
import argparse
import gzip
import os
import shutil
import struct
import subprocess
import sys
import zlib

import numpy as np

SPEC = """
model mlp {
  input  x: %s
  target y: class[10]
  param  w1: f32[784, 32] = kaiming_uniform
  param  b1: f32[32] = zeros
  param  w2: f32[32, 10] = kaiming_uniform
  param  b2: f32[10] = zeros
  logits = tanh(%s @ w1 + b1) @ w2 + b2
  loss   = cross_entropy(logits, y)
  metric acc = accuracy(logits, y)
}
sweep {
  models = 2
  seed   = [3, 4]
  optim  = sgd(lr = [0.05, 0.2], momentum = 0.9)
  data   = %s
  epochs = 1
}
"""


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = struct.unpack(">" + "I" * dims, data[4:4 + 4 * dims])
    return np.frombuffer(data[4 + 4 * dims:], dtype=np.uint8).reshape(shape)


def write_png(path, pixels):
    """An 8-bit grayscale PNG, every row with filter 0."""
    h, w = pixels.shape
    raw = b"".join(b"\x00" + pixels[r].tobytes() for r in range(h))

    def chunk(kind, body):
        crc = zlib.crc32(kind + body) & 0xFFFFFFFF
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)

    ihdr = struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) +
                chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))


def write_csv(path, images, labels):
    """'%.9g' of every float32 pixel / 255: 256 distinct cells."""
    cells = ["%.9g" % v for v in np.arange(256, dtype=np.float32) /
             np.float32(255)]
    with open(path, "w") as f:
        f.write(",".join("p%d" % i for i in range(784)) + ",label\n")
        for image, label in zip(images.reshape(len(images), -1), labels):
            f.write(",".join(cells[p] for p in image) + ",%d\n" % label)


def write_folder(root, images, labels):
    """ImageFolder's layout: class folders, files in name order."""
    for c in range(10):
        os.makedirs(os.path.join(root, "class%d" % c))
    for i, (image, label) in enumerate(zip(images, labels)):
        write_png(os.path.join(root, "class%d" % label, "%05d.png" % i), image)


def folder_order(labels):
    """The order an image folder lists the samples in: class by class."""
    return np.argsort(labels, kind="stable")


def write_all(work, idx_dir):
    """Fashion-MNIST from `idx_dir` as the files this test trains on, in
    `work`: train/test .npz and .csv, photos-{train,test}/ and the .npz of
    the folders' order, sorted-{train,test}.npz."""
    os.makedirs(work, exist_ok=True)
    w = lambda name: os.path.join(work, name)
    split = {}
    for name, prefix in (("train", "train"), ("test", "t10k")):
        split[name] = (read_idx(os.path.join(idx_dir, prefix +
                                             "-images-idx3-ubyte.gz")),
                       read_idx(os.path.join(idx_dir, prefix +
                                             "-labels-idx1-ubyte.gz")))
    scaled = {k: (v[0].astype(np.float32) / np.float32(255), v[1])
              for k, v in split.items()}

    np.savez(w("train.npz"), images=scaled["train"][0].reshape(-1, 784),
             labels=scaled["train"][1])
    np.savez_compressed(w("test.npz"),
                        images=scaled["test"][0].reshape(-1, 784),
                        labels=scaled["test"][1].astype(np.int64))
    write_csv(w("train.csv"), *split["train"])
    write_csv(w("test.csv"), *split["test"])
    for name in ("train", "test"):
        images, labels = split[name]
        write_folder(w("photos-" + name), images, labels)
        order = folder_order(labels)
        np.savez(w("sorted-%s.npz" % name),
                 x=scaled[name][0][order].reshape(-1, 1, 28, 28),
                 y=labels[order])


def train(mbtc, work, name, input_type, data):
    flat = "x" if input_type == "f32[784]" else "reshape(x, [784])"
    spec = os.path.join(work, name + ".mbt")
    with open(spec, "w") as f:
        f.write(SPEC % (input_type, flat, data))
    out = os.path.join(work, name)
    run = subprocess.run([mbtc, "train", spec, "--out", out, "--quiet"],
                         capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit("%s: mbtc train failed:\n%s%s" % (name, run.stdout,
                                                   run.stderr))
    return out


def same_models(a, b):
    for i in range(2):
        pa = os.path.join(a, "models", "model-%d.pt" % i)
        pb = os.path.join(b, "models", "model-%d.pt" % i)
        with open(pa, "rb") as fa, open(pb, "rb") as fb:
            if fa.read() != fb.read():
                return "model %d differs (%s vs %s)" % (i, pa, pb)
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mbtc", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--data", required=True, help="Fashion-MNIST idx dir")
    parser.add_argument("--mbt-data", help="also train on the folders that "
                        "`mbt-data images` writes")
    args = parser.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)

    write_all(args.work, args.data)
    image = "f32[1, 28, 28]"
    pairs = [("builtin", "npz"), ("builtin", "csv"),
             ("sorted-npz", "image_folder")]
    extra = {}
    if args.mbt_data:
        # Its folders list the samples in the order of photos-*: class by
        # class (its folders sort by label), by position within a class.
        folders = os.path.join(args.work, "mbt-data-photos")
        run = subprocess.run([args.mbt_data, "images", "fashion_mnist",
                              folders, "--data-dir", args.data],
                             capture_output=True, text=True)
        if run.returncode != 0:
            sys.exit("mbt-data images failed:\n" + run.stdout + run.stderr)
        extra["mbt-data images"] = train(
            args.mbtc, args.work, "mbt-data-images", image,
            'image_folder("mbt-data-photos/train", test = '
            '"mbt-data-photos/test", batch = 128)')
        pairs.append(("sorted-npz", "mbt-data images"))
    runs = {
        "builtin": train(args.mbtc, args.work, "builtin", "f32[784]",
                         "fashion_mnist(batch = 128)"),
        "npz": train(args.mbtc, args.work, "npz", "f32[784]",
                     'npz("train.npz", x = "images", y = "labels", '
                     'test = "test.npz", batch = 128)'),
        "csv": train(args.mbtc, args.work, "csv", "f32[784]",
                     'csv("train.csv", target = "label", test = "test.csv", '
                     'batch = 128)'),
        "sorted-npz": train(args.mbtc, args.work, "sorted-npz", image,
                            'npz("sorted-train.npz", test = '
                            '"sorted-test.npz", batch = 128)'),
        "image_folder": train(args.mbtc, args.work, "image_folder", image,
                              'image_folder("photos-train", test = '
                              '"photos-test", batch = 128)'),
    }
    runs.update(extra)
    failures = []
    for a, b in pairs:
        problem = same_models(runs[a], runs[b])
        print("%-10s vs %-15s %s" % (a, b, problem or "identical"))
        if problem:
            failures.append(problem)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
