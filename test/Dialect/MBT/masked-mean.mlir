// RUN: mbt-opt %s | mbt-opt | FileCheck %s

// mbt.masked_mean and its adjoint print and parse back, over one model's
// [B, T, D] rows and with a leading model dimension.

// CHECK-LABEL: func.func @one_model
// CHECK: %[[P:.*]] = mbt.masked_mean %arg0, %arg1 : (tensor<?x?x16xf32>, tensor<?x?xi32>) -> tensor<?x16xf32>
// CHECK: mbt.masked_mean_grad %arg1, %[[P]] like %arg0 : (tensor<?x?xi32>, tensor<?x16xf32>, tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
func.func @one_model(%h: tensor<?x?x16xf32>, %t: tensor<?x?xi32>) -> tensor<?x?x16xf32> {
  %p = mbt.masked_mean %h, %t : (tensor<?x?x16xf32>, tensor<?x?xi32>) -> tensor<?x16xf32>
  %g = mbt.masked_mean_grad %t, %p like %h : (tensor<?x?xi32>, tensor<?x16xf32>, tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  return %g : tensor<?x?x16xf32>
}

// CHECK-LABEL: func.func @batched
// CHECK: mbt.masked_mean %arg0, %arg1 : (tensor<3x?x?x4xf64>, tensor<3x?x?xi32>) -> tensor<3x?x4xf64>
func.func @batched(%h: tensor<3x?x?x4xf64>, %t: tensor<3x?x?xi32>) -> tensor<3x?x4xf64> {
  %p = mbt.masked_mean %h, %t : (tensor<3x?x?x4xf64>, tensor<3x?x?xi32>) -> tensor<3x?x4xf64>
  return %p : tensor<3x?x4xf64>
}
