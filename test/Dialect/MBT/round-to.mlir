// RUN: mbt-opt %s | mbt-opt | FileCheck %s

// mbt.round_to prints and parses back, over one model's values and with a
// leading model dimension.

// CHECK-LABEL: func.func @round
// CHECK: mbt.round_to %arg0 {format = bf16} : tensor<?x128xf32>
// CHECK: mbt.round_to %{{.*}} {format = bf16} : tensor<4x?x128xf32>
func.func @round(%x: tensor<?x128xf32>, %y: tensor<4x?x128xf32>) -> (tensor<?x128xf32>, tensor<4x?x128xf32>) {
  %r = mbt.round_to %x {format = bf16} : tensor<?x128xf32>
  %s = mbt.round_to %y {format = bf16} : tensor<4x?x128xf32>
  return %r, %s : tensor<?x128xf32>, tensor<4x?x128xf32>
}
