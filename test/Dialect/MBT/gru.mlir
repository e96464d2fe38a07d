// RUN: mbt-opt %s | mbt-opt | FileCheck %s

// mbt.gru and its adjoint print and parse back, over one model and with
// the model dimension.

// CHECK-LABEL: func.func @one_model
// CHECK: %[[H:.*]], %[[G:.*]] = mbt.gru %arg0, %arg1, %arg2, %arg3 : (tensor<?x?x24xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<?x?xi32>) -> (tensor<?x?x8xf32>, tensor<?x?x32xf32>)
// CHECK: mbt.gru_grad %arg0, %arg1, %arg2, %arg3, %[[H]], %[[G]], %[[H]] : (tensor<?x?x24xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<?x?xi32>, tensor<?x?x8xf32>, tensor<?x?x32xf32>, tensor<?x?x8xf32>) -> (tensor<?x?x24xf32>, tensor<8x24xf32>, tensor<24xf32>)
func.func @one_model(%gx: tensor<?x?x24xf32>, %w: tensor<8x24xf32>, %b: tensor<24xf32>, %t: tensor<?x?xi32>) -> tensor<8x24xf32> {
  %h, %gates = mbt.gru %gx, %w, %b, %t : (tensor<?x?x24xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<?x?xi32>) -> (tensor<?x?x8xf32>, tensor<?x?x32xf32>)
  %dgx, %dw, %db = mbt.gru_grad %gx, %w, %b, %t, %h, %gates, %h : (tensor<?x?x24xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<?x?xi32>, tensor<?x?x8xf32>, tensor<?x?x32xf32>, tensor<?x?x8xf32>) -> (tensor<?x?x24xf32>, tensor<8x24xf32>, tensor<24xf32>)
  return %dw : tensor<8x24xf32>
}

// CHECK-LABEL: func.func @batched
// CHECK: mbt.gru %arg0, %arg1, %arg2, %arg3 : (tensor<3x?x?x24xf64>, tensor<3x8x24xf64>, tensor<3x24xf64>, tensor<3x?x?xi32>) -> (tensor<3x?x?x8xf64>, tensor<3x?x?x32xf64>)
func.func @batched(%gx: tensor<3x?x?x24xf64>, %w: tensor<3x8x24xf64>, %b: tensor<3x24xf64>, %t: tensor<3x?x?xi32>) -> tensor<3x?x?x8xf64> {
  %h, %gates = mbt.gru %gx, %w, %b, %t : (tensor<3x?x?x24xf64>, tensor<3x8x24xf64>, tensor<3x24xf64>, tensor<3x?x?xi32>) -> (tensor<3x?x?x8xf64>, tensor<3x?x?x32xf64>)
  return %h : tensor<3x?x?x8xf64>
}
