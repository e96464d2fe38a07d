// RUN: mbt-opt --mbt-lower-to-linalg=fold-operand-rounding %s | FileCheck %s
// RUN: mbt-opt --mbt-lower-to-linalg %s | FileCheck %s --check-prefix=KEEP

// With fold-operand-rounding (the CPU with BLAS), a batched product of two
// operands rounded to bf16 reads the unrounded values and rounds them
// itself (mbt.round_operands_to): no rounded copy of either is written. A
// rounding another op still reads stays for that op; f16, one rounded
// factor, or a product with both factors transposed (a linalg.generic)
// keep their roundings.

// CHECK-LABEL: func.func @folded(
// CHECK-SAME:    %[[A:[a-z0-9]+]]: tensor<4x?x8xf32>, %[[B:[a-z0-9]+]]: tensor<4x8x3xf32>
// CHECK-NOT:     arith.shrui
// CHECK:         linalg.batch_matmul {mbt.operands_format = bf16, mbt.round_operands_to = bf16} ins(%[[A]], %[[B]] :
// CHECK-NOT:     arith.shrui
// CHECK:         return
// KEEP-LABEL: func.func @folded(
// KEEP-COUNT-2:  arith.shrui
// KEEP:          linalg.batch_matmul {mbt.operands_format = bf16} ins(
// KEEP-NOT:      mbt.round_operands_to
func.func @folded(%a: tensor<4x?x8xf32>, %b: tensor<4x8x3xf32>) -> tensor<4x?x3xf32> {
  %ra = mbt.round_to %a {format = bf16} : tensor<4x?x8xf32>
  %rb = mbt.round_to %b {format = bf16} : tensor<4x8x3xf32>
  %p = mbt.matmul %ra, %rb : (tensor<4x?x8xf32>, tensor<4x8x3xf32>) -> tensor<4x?x3xf32>
  return %p : tensor<4x?x3xf32>
}

// CHECK-LABEL: func.func @shared(
// CHECK-SAME:    %[[A:[a-z0-9]+]]: tensor<4x?x8xf32>, %[[B:[a-z0-9]+]]: tensor<4x8x3xf32>
// CHECK-COUNT-1: arith.shrui
// CHECK-NOT:     arith.shrui
// CHECK:         linalg.batch_matmul {mbt.operands_format = bf16, mbt.round_operands_to = bf16} ins(%[[A]], %[[B]] :
func.func @shared(%a: tensor<4x?x8xf32>, %b: tensor<4x8x3xf32>) -> (tensor<4x?x3xf32>, tensor<4x?x8xf32>) {
  %ra = mbt.round_to %a {format = bf16} : tensor<4x?x8xf32>
  %rb = mbt.round_to %b {format = bf16} : tensor<4x8x3xf32>
  %p = mbt.matmul %ra, %rb : (tensor<4x?x8xf32>, tensor<4x8x3xf32>) -> tensor<4x?x3xf32>
  %r = mbt.relu %ra : tensor<4x?x8xf32>
  return %p, %r : tensor<4x?x3xf32>, tensor<4x?x8xf32>
}

// CHECK-LABEL: func.func @kept(
// CHECK-NOT:     mbt.round_operands_to
// CHECK:         return
func.func @kept(%a: tensor<4x?x8xf32>, %b: tensor<4x8x3xf32>, %c: tensor<4x3x?xf32>)
    -> (tensor<4x?x3xf32>, tensor<4x?x3xf32>, tensor<4x?x8xf32>) {
  %ha = mbt.round_to %a {format = f16} : tensor<4x?x8xf32>
  %hb = mbt.round_to %b {format = f16} : tensor<4x8x3xf32>
  %rb = mbt.round_to %b {format = bf16} : tensor<4x8x3xf32>
  %rc = mbt.round_to %c {format = bf16} : tensor<4x3x?xf32>
  %half = mbt.matmul %ha, %hb : (tensor<4x?x8xf32>, tensor<4x8x3xf32>) -> tensor<4x?x3xf32>
  %one = mbt.matmul %a, %rb : (tensor<4x?x8xf32>, tensor<4x8x3xf32>) -> tensor<4x?x3xf32>
  %both = mbt.matmul %rc, %rb {transpose_lhs, transpose_rhs} : (tensor<4x3x?xf32>, tensor<4x8x3xf32>) -> tensor<4x?x8xf32>
  return %half, %one, %both : tensor<4x?x3xf32>, tensor<4x?x3xf32>, tensor<4x?x8xf32>
}

// A convolution of two rounded factors: its GEMM (over im2col's columns)
// rounds them.
// CHECK-LABEL: func.func @convolution(
// CHECK-NOT:     arith.shrui
// CHECK:         linalg.batch_matmul {mbt.operands_format = bf16, mbt.round_operands_to = bf16}
// KEEP-LABEL: func.func @convolution(
// KEEP-COUNT-2:  arith.shrui
// KEEP-NOT:      mbt.round_operands_to
func.func @convolution(%x: tensor<2x?x1x8x8xf32>, %w: tensor<2x4x1x3x3xf32>) -> tensor<2x?x4x6x6xf32> {
  %rx = mbt.round_to %x {format = bf16} : tensor<2x?x1x8x8xf32>
  %rw = mbt.round_to %w {format = bf16} : tensor<2x4x1x3x3xf32>
  %y = mbt.conv2d %rx, %rw {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<2x?x1x8x8xf32>, tensor<2x4x1x3x3xf32>) -> tensor<2x?x4x6x6xf32>
  return %y : tensor<2x?x4x6x6xf32>
}
