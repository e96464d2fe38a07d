// RUN: mbt-opt --mbt-lower-to-linalg %s | FileCheck %s

// conv2d over 2 models in 2 groups: an im2col gather into
// [M, G, B, OH, OW, C/G, KH, KW] columns (zero where a tap reads padding),
// then one batched GEMM over the 4 (model, group) pairs, then the result
// permuted into [M, B, O, OH, OW].

// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2 floordiv 3, d1, d3, d4, d2 mod 3)>
// CHECK-LABEL: func.func @conv
// CHECK:         %[[COLS:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} outs(%{{.*}} : tensor<2x2x?x4x4x2x3x3xf32>)
// CHECK:           tensor.extract %{{.*}} : tensor<2x?x4x8x8xf32>
// CHECK:           arith.select
// CHECK:         %[[A:.*]] = tensor.collapse_shape %[[COLS]] {{\[\[}}0, 1], [2, 3, 4], [5, 6, 7]] : tensor<2x2x?x4x4x2x3x3xf32> into tensor<4x?x18xf32>
// CHECK:         %[[W:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2], [3, 4, 5]] : tensor<2x2x3x2x3x3xf32> into tensor<4x3x18xf32>
// CHECK:         %[[Y:.*]] = linalg.batch_matmul_transpose_b ins(%[[A]], %[[W]] : tensor<4x?x18xf32>, tensor<4x3x18xf32>)
// CHECK:         %[[Y6:.*]] = tensor.expand_shape %[[Y]] {{\[\[}}0, 1], [2, 3, 4], [5]]
// CHECK:         linalg.generic {indexing_maps = [#[[OUT]], #{{.*}}]{{.*}} ins(%[[Y6]] : tensor<2x2x?x4x4x3xf32>) outs(%{{.*}} : tensor<2x?x6x4x4xf32>)
func.func @conv(%x: tensor<2x?x4x8x8xf32>, %w: tensor<2x6x2x3x3xf32>) -> tensor<2x?x6x4x4xf32> {
  %y = mbt.conv2d %x, %w {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 2 : i64} : (tensor<2x?x4x8x8xf32>, tensor<2x6x2x3x3xf32>) -> tensor<2x?x6x4x4xf32>
  return %y : tensor<2x?x6x4x4xf32>
}

// The adjoints: dW = (gradient rows)^T x columns, dcols = rows x W and a
// col2im gather summing the 3x3 taps (unrolled) whose window reads each
// input element; no scatter.
// CHECK-LABEL: func.func @grads
// CHECK:         linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<4x?x3xf32>, tensor<4x3x18xf32>)
// CHECK:         linalg.generic {{.*}}outs(%{{.*}} : tensor<2x?x4x8x8xf32>)
// CHECK-COUNT-9:   tensor.extract %{{.*}} : tensor<2x2x?x4x4x2x3x3xf32>
// CHECK:         linalg.batch_matmul_transpose_a ins(%{{.*}}, %{{.*}} : tensor<4x?x3xf32>, tensor<4x?x18xf32>)
// CHECK:         tensor.collapse_shape %{{.*}} {{\[\[}}0], [1, 2], [3], [4], [5]] : tensor<2x2x3x2x3x3xf32> into tensor<2x6x2x3x3xf32>
func.func @grads(%x: tensor<2x?x4x8x8xf32>, %w: tensor<2x6x2x3x3xf32>, %dy: tensor<2x?x6x4x4xf32>) -> (tensor<2x?x4x8x8xf32>, tensor<2x6x2x3x3xf32>) {
  %dx = mbt.conv2d_grad_input %dy, %w like %x {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 2 : i64} : tensor<2x?x6x4x4xf32>, tensor<2x6x2x3x3xf32>, tensor<2x?x4x8x8xf32>
  %dw = mbt.conv2d_grad_filter %x, %dy like %w {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 2 : i64} : tensor<2x?x4x8x8xf32>, tensor<2x?x6x4x4xf32>, tensor<2x6x2x3x3xf32>
  return %dx, %dw : tensor<2x?x4x8x8xf32>, tensor<2x6x2x3x3xf32>
}

// A model's own function (no model dimension) gets a unit one.
// CHECK-LABEL: func.func @unbatched
// CHECK:         tensor.expand_shape %{{.*}} : tensor<?x1x5x5xf32> into tensor<1x?x1x5x5xf32>
// CHECK:         linalg.batch_matmul_transpose_b
// CHECK:         tensor.collapse_shape %{{.*}} : tensor<1x?x2x3x3xf32> into tensor<?x2x3x3xf32>
func.func @unbatched(%x: tensor<?x1x5x5xf32>, %w: tensor<2x1x3x3xf32>) -> tensor<?x2x3x3xf32> {
  %y = mbt.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<?x1x5x5xf32>, tensor<2x1x3x3xf32>) -> tensor<?x2x3x3xf32>
  return %y : tensor<?x2x3x3xf32>
}
