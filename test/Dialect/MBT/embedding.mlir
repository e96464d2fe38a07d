// RUN: mbt-opt %s | mbt-opt | FileCheck %s

// mbt.embedding and its adjoint print and parse back, unbatched (one
// model's function) and with a leading model dimension.

// CHECK-LABEL: func.func @one_model
// CHECK: %[[E:.*]] = mbt.embedding %arg0, %arg1 : (tensor<259x16xf32>, tensor<?x12xi32>) -> tensor<?x12x16xf32>
// CHECK: mbt.embedding_grad %arg1, %[[E]] like %arg0 : (tensor<?x12xi32>, tensor<?x12x16xf32>, tensor<259x16xf32>) -> tensor<259x16xf32>
func.func @one_model(%w: tensor<259x16xf32>, %i: tensor<?x12xi32>) -> tensor<259x16xf32> {
  %e = mbt.embedding %w, %i : (tensor<259x16xf32>, tensor<?x12xi32>) -> tensor<?x12x16xf32>
  %g = mbt.embedding_grad %i, %e like %w : (tensor<?x12xi32>, tensor<?x12x16xf32>, tensor<259x16xf32>) -> tensor<259x16xf32>
  return %g : tensor<259x16xf32>
}

// CHECK-LABEL: func.func @batched
// CHECK: mbt.embedding %arg0, %arg1 : (tensor<3x10x4xf64>, tensor<3x?xi32>) -> tensor<3x?x4xf64>
func.func @batched(%w: tensor<3x10x4xf64>, %i: tensor<3x?xi32>) -> tensor<3x?x4xf64> {
  %e = mbt.embedding %w, %i : (tensor<3x10x4xf64>, tensor<3x?xi32>) -> tensor<3x?x4xf64>
  return %e : tensor<3x?x4xf64>
}
