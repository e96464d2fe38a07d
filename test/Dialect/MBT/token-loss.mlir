// RUN: mbt-opt %s | mbt-opt | FileCheck %s

// mbt.token_cross_entropy, its adjoint and mbt.token_accuracy print and
// parse back, over one model's [B, T, V] logits and with a leading model
// dimension.

// CHECK-LABEL: func.func @one_model
// CHECK: mbt.token_cross_entropy %arg0, %arg1 : (tensor<?x?x259xf32>, tensor<?x?xi32>) -> tensor<f32>
// CHECK: mbt.token_accuracy %arg0, %arg1 : (tensor<?x?x259xf32>, tensor<?x?xi32>) -> tensor<f32>
// CHECK: mbt.token_cross_entropy_grad %arg0, %arg1, %{{.*}} : (tensor<?x?x259xf32>, tensor<?x?xi32>, tensor<f32>) -> tensor<?x?x259xf32>
func.func @one_model(%l: tensor<?x?x259xf32>, %y: tensor<?x?xi32>) -> (tensor<f32>, tensor<?x?x259xf32>) {
  %loss = mbt.token_cross_entropy %l, %y : (tensor<?x?x259xf32>, tensor<?x?xi32>) -> tensor<f32>
  %acc = mbt.token_accuracy %l, %y : (tensor<?x?x259xf32>, tensor<?x?xi32>) -> tensor<f32>
  %g = mbt.token_cross_entropy_grad %l, %y, %acc : (tensor<?x?x259xf32>, tensor<?x?xi32>, tensor<f32>) -> tensor<?x?x259xf32>
  return %loss, %g : tensor<f32>, tensor<?x?x259xf32>
}

// CHECK-LABEL: func.func @batched
// CHECK: mbt.token_cross_entropy %arg0, %arg1 : (tensor<4x?x?x7xf64>, tensor<4x?x?xi32>) -> tensor<4xf64>
func.func @batched(%l: tensor<4x?x?x7xf64>, %y: tensor<4x?x?xi32>) -> tensor<4xf64> {
  %loss = mbt.token_cross_entropy %l, %y : (tensor<4x?x?x7xf64>, tensor<4x?x?xi32>) -> tensor<4xf64>
  return %loss : tensor<4xf64>
}
