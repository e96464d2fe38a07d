// RUN: mbt-opt --mbt-lower-to-linalg %s | FileCheck %s

// A product whose two factors are rounded to one format (mbt-autocast's
// mbt.round_to) keeps the format on its linalg op (mbt.operands_format),
// for mbt-linalg-to-blas to pick a GPU kernel that multiplies in it; with
// one factor unrounded, or two formats, it does not.

// CHECK-LABEL: func.func @products
// CHECK:         linalg.batch_matmul {mbt.operands_format = bf16}
// CHECK:         linalg.batch_matmul ins
// CHECK:         linalg.batch_matmul ins
func.func @products(%a: tensor<4x?x8xf32>, %b: tensor<4x8x3xf32>)
    -> (tensor<4x?x3xf32>, tensor<4x?x3xf32>, tensor<4x?x3xf32>) {
  %ra = mbt.round_to %a {format = bf16} : tensor<4x?x8xf32>
  %rb = mbt.round_to %b {format = bf16} : tensor<4x8x3xf32>
  %hb = mbt.round_to %b {format = f16} : tensor<4x8x3xf32>
  %both = mbt.matmul %ra, %rb : (tensor<4x?x8xf32>, tensor<4x8x3xf32>) -> tensor<4x?x3xf32>
  %one = mbt.matmul %ra, %b : (tensor<4x?x8xf32>, tensor<4x8x3xf32>) -> tensor<4x?x3xf32>
  %mixed = mbt.matmul %ra, %hb : (tensor<4x?x8xf32>, tensor<4x8x3xf32>) -> tensor<4x?x3xf32>
  return %both, %one, %mixed : tensor<4x?x3xf32>, tensor<4x?x3xf32>, tensor<4x?x3xf32>
}

// A convolution of rounded factors passes the format on to its GEMM.
// CHECK-LABEL: func.func @convolution
// CHECK:         linalg.batch_matmul {mbt.operands_format = f16}
func.func @convolution(%x: tensor<2x?x1x8x8xf32>, %w: tensor<2x4x1x3x3xf32>) -> tensor<2x?x4x6x6xf32> {
  %rx = mbt.round_to %x {format = f16} : tensor<2x?x1x8x8xf32>
  %rw = mbt.round_to %w {format = f16} : tensor<2x4x1x3x3xf32>
  %y = mbt.conv2d %rx, %rw {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<2x?x1x8x8xf32>, tensor<2x4x1x3x3xf32>) -> tensor<2x?x4x6x6xf32>
  return %y : tensor<2x?x4x6x6xf32>
}
