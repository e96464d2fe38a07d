// RUN: mbt-opt %s | mbt-opt | FileCheck %s

// mbt.lstm (states, cells and gates) and its adjoint print and parse back.

// CHECK-LABEL: func.func @one_model
// CHECK: %[[H:.*]], %[[C:.*]], %[[G:.*]] = mbt.lstm %arg0, %arg1, %arg2, %arg3 : (tensor<?x?x32xf32>, tensor<8x32xf32>, tensor<32xf32>, tensor<?x?xi32>) -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x32xf32>)
// CHECK: mbt.lstm_grad %arg0, %arg1, %arg2, %arg3, %[[H]], %[[C]], %[[G]], %[[H]] : (tensor<?x?x32xf32>, tensor<8x32xf32>, tensor<32xf32>, tensor<?x?xi32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x32xf32>, tensor<?x?x8xf32>) -> (tensor<?x?x32xf32>, tensor<8x32xf32>, tensor<32xf32>)
func.func @one_model(%gx: tensor<?x?x32xf32>, %w: tensor<8x32xf32>, %b: tensor<32xf32>, %t: tensor<?x?xi32>) -> tensor<8x32xf32> {
  %h, %c, %g = mbt.lstm %gx, %w, %b, %t : (tensor<?x?x32xf32>, tensor<8x32xf32>, tensor<32xf32>, tensor<?x?xi32>) -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x32xf32>)
  %dgx, %dw, %db = mbt.lstm_grad %gx, %w, %b, %t, %h, %c, %g, %h : (tensor<?x?x32xf32>, tensor<8x32xf32>, tensor<32xf32>, tensor<?x?xi32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x32xf32>, tensor<?x?x8xf32>) -> (tensor<?x?x32xf32>, tensor<8x32xf32>, tensor<32xf32>)
  return %dw : tensor<8x32xf32>
}
