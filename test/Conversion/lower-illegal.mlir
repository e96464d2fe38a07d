// RUN: not mbt-opt --mbt-autodiff --mbt-batch-models --mbt-lower-to-linalg %S/../Transforms/Inputs/mlp.mlir 2>&1 | FileCheck %s

// mbt-lower-to-linalg is a dialect conversion in which every mbt op but
// the sweep and the update rules is illegal: an op it has no pattern for
// (here the per-parameter updates, which mbt-fuse-optimizer replaces)
// fails the pass with the op named, rather than passing through.

// CHECK: error: failed to legalize operation 'mbt.update' that was explicitly marked illegal
