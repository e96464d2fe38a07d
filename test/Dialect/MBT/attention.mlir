// RUN: mbt-opt %s | mbt-opt | FileCheck %s

// mbt.attention, its adjoint, the row merging and splitting of
// position-wise matmuls and mbt.positions print and parse back, over one
// model's [B, T, D] and with a leading model dimension.

// CHECK-LABEL: func.func @attention
// CHECK: %[[O:.*]] = mbt.attention %arg0, %arg0, %arg0, %arg1 {causal = true, heads = 2 : i64} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?xi32>) -> tensor<?x?x8xf32>
// CHECK: mbt.attention_grad %arg0, %arg0, %arg0, %arg1, %[[O]] {causal = true, heads = 2 : i64} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?xi32>, tensor<?x?x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>)
func.func @attention(%h: tensor<?x?x8xf32>, %t: tensor<?x?xi32>) -> tensor<?x?x8xf32> {
  %o = mbt.attention %h, %h, %h, %t {heads = 2 : i64, causal = true} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?xi32>) -> tensor<?x?x8xf32>
  %dq, %dk, %dv = mbt.attention_grad %h, %h, %h, %t, %o {heads = 2 : i64, causal = true} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?xi32>, tensor<?x?x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>)
  return %dq : tensor<?x?x8xf32>
}

// CHECK-LABEL: func.func @rows
// CHECK: %[[R:.*]] = mbt.merge_rows %arg0 : (tensor<3x?x?x8xf64>) -> tensor<3x?x8xf64>
// CHECK: mbt.split_rows %[[R]] like %arg0 : (tensor<3x?x8xf64>, tensor<3x?x?x8xf64>) -> tensor<3x?x?x8xf64>
func.func @rows(%h: tensor<3x?x?x8xf64>) -> tensor<3x?x?x8xf64> {
  %r = mbt.merge_rows %h : (tensor<3x?x?x8xf64>) -> tensor<3x?x8xf64>
  %s = mbt.split_rows %r like %h : (tensor<3x?x8xf64>, tensor<3x?x?x8xf64>) -> tensor<3x?x?x8xf64>
  return %s : tensor<3x?x?x8xf64>
}

// CHECK-LABEL: func.func @positions
// CHECK: mbt.positions %arg0 : (tensor<3x?x?xi32>) -> tensor<3x?x?xi32>
func.func @positions(%t: tensor<3x?x?xi32>) -> tensor<3x?x?xi32> {
  %p = mbt.positions %t : (tensor<3x?x?xi32>) -> tensor<3x?x?xi32>
  return %p : tensor<3x?x?xi32>
}
