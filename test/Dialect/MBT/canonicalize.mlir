// RUN: mbt-opt --canonicalize %s | FileCheck %s

// A transpose of the last two dims next to a matmul becomes a flag of the
// matmul: the GEMM reads the operand transposed instead of copying it.

// CHECK-LABEL: func.func @operand
// CHECK-SAME:      %[[X:[^:]*]]: tensor<?x6xf32>, %[[W:[^:]*]]: tensor<4x6xf32>
// CHECK-NEXT:    %[[R:.*]] = mbt.matmul %[[X]], %[[W]] {transpose_rhs} : (tensor<?x6xf32>, tensor<4x6xf32>) -> tensor<?x4xf32>
// CHECK-NEXT:    return %[[R]]
func.func @operand(%x: tensor<?x6xf32>, %w: tensor<4x6xf32>) -> tensor<?x4xf32> {
  %wt = mbt.transpose %w {permutation = array<i64: 1, 0>} : (tensor<4x6xf32>) -> tensor<6x4xf32>
  %r = mbt.matmul %x, %wt : (tensor<?x6xf32>, tensor<6x4xf32>) -> tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}

// (X^T G)^T = G^T X: one matmul with the operands swapped.
// CHECK-LABEL: func.func @result
// CHECK-SAME:      %[[X:[^:]*]]: tensor<2x?x6xf32>, %[[G:[^:]*]]: tensor<2x?x4xf32>
// CHECK-NEXT:    %[[R:.*]] = mbt.matmul %[[G]], %[[X]] {transpose_lhs} : (tensor<2x?x4xf32>, tensor<2x?x6xf32>) -> tensor<2x4x6xf32>
// CHECK-NEXT:    return %[[R]]
func.func @result(%x: tensor<2x?x6xf32>, %g: tensor<2x?x4xf32>) -> tensor<2x4x6xf32> {
  %m = mbt.matmul %x, %g {transpose_lhs} : (tensor<2x?x6xf32>, tensor<2x?x4xf32>) -> tensor<2x6x4xf32>
  %t = mbt.transpose %m {permutation = array<i64: 0, 2, 1>} : (tensor<2x6x4xf32>) -> tensor<2x4x6xf32>
  return %t : tensor<2x4x6xf32>
}

// Other permutations stay.
// CHECK-LABEL: func.func @other
// CHECK:         mbt.transpose
func.func @other(%x: tensor<2x3x4xf32>, %w: tensor<4x5xf32>) -> tensor<3x2x4xf32> {
  %t = mbt.transpose %x {permutation = array<i64: 1, 0, 2>} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
  return %t : tensor<3x2x4xf32>
}

// Dropout's evaluation form (no key) is the identity; the training form
// stays.
// CHECK-LABEL: func.func @dropout_eval
// CHECK-SAME:      %[[X:[^:]*]]: tensor<?x8xf32>
// CHECK-NEXT:    %[[T:.*]] = mbt.dropout %[[X]], %{{.*}}, %{{.*}}, %{{.*}} {site = 1 : i64}
// CHECK-NEXT:    return %[[X]], %[[T]]
func.func @dropout_eval(%x: tensor<?x8xf32>, %rate: tensor<f32>, %seed: tensor<i64>, %step: tensor<f64>) -> (tensor<?x8xf32>, tensor<?x8xf32>) {
  %0 = mbt.dropout %x, %rate {site = 0 : i64} : tensor<?x8xf32>, tensor<f32>
  %1 = mbt.dropout %x, %rate, %seed, %step {site = 1 : i64} : tensor<?x8xf32>, tensor<f32>, tensor<i64>, tensor<f64>
  return %0, %1 : tensor<?x8xf32>, tensor<?x8xf32>
}
