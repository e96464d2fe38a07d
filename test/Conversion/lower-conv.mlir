// RUN: mbt-opt --mbt-lower-to-linalg --canonicalize %s | FileCheck %s
// RUN: mbt-opt --mbt-lower-to-linalg --canonicalize --mbt-fuse-elementwise %s | FileCheck %s --check-prefix=FUSED

// conv2d over 2 models in 2 groups (stride 2, padding 1): the input is
// padded by a gather, im2col is a copy through an affine map into the
// channels-first column buffer [M, G, C/G, KH, KW, B, OH, OW] (its
// innermost loop walks an image row), then one batched GEMM
// filter x columns over the 4 (model, group) pairs, whose result
// [M*G, O/G, B*OH*OW] is permuted into [M, B, O, OH, OW].

// CHECK-DAG: #[[COLS:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d5, d1 * 2 + d2, d6 * 2 + d3, d7 * 2 + d4)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2 floordiv 3, d2 mod 3, d1, d3, d4)>
// CHECK-DAG: #[[ROWS:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d3, d1 * 3 + d2, d4, d5)>
// CHECK-DAG: #[[FLIP:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1 * 2 + d3, d2, -d4 + 2, -d5 + 2)>
// CHECK-LABEL: func.func @conv
// CHECK:         %[[W:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2], [3, 4, 5]] : tensor<2x2x3x2x3x3xf32> into tensor<4x3x18xf32>
// CHECK:         %[[PADDED:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x?x4x10x10xf32>)
// CHECK:           tensor.extract %{{.*}} : tensor<2x?x4x8x8xf32>
// CHECK:         %[[C:.*]] = linalg.generic {indexing_maps = [#[[COLS]], #{{.*}}]{{.*}} ins(%[[PADDED]] : tensor<2x?x4x10x10xf32>) outs(%{{.*}} : tensor<2x2x2x3x3x?x4x4xf32>)
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      linalg.yield %[[IN]] : f32
// CHECK:         %[[A:.*]] = tensor.collapse_shape %[[C]] {{\[\[}}0, 1], [2, 3, 4], [5, 6, 7]] : tensor<2x2x2x3x3x?x4x4xf32> into tensor<4x18x?xf32>
// The GEMM's result is allocated with the batch as its own dim, then
// collapsed (so the workspace planner can place it).
// CHECK:         %[[R:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0], [1], [2, 3]] : tensor<4x3x?x16xf32> into tensor<4x3x?xf32>
// CHECK:         %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[R]] : tensor<4x3x?xf32>)
// CHECK:         %[[Y:.*]] = linalg.batch_matmul ins(%[[W]], %[[A]] : tensor<4x3x18xf32>, tensor<4x18x?xf32>) outs(%[[Z]] : tensor<4x3x?xf32>)
// CHECK:         %[[Y6:.*]] = tensor.expand_shape %[[Y]] {{\[\[}}0, 1], [2], [3, 4, 5]]
// CHECK:         linalg.generic {indexing_maps = [#[[OUT]], #{{.*}}]{{.*}} ins(%[[Y6]] : tensor<2x2x3x?x4x4xf32>) outs(%{{.*}} : tensor<2x?x6x4x4xf32>)
// Elementwise fusion leaves the GEMM a named op (BLAS and cuBLAS run it)
// instead of folding the reshapes into it as a linalg.generic.
// FUSED-LABEL: func.func @conv
// FUSED:         linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<4x3x18xf32>, tensor<4x18x?xf32>)
func.func @conv(%x: tensor<2x?x4x8x8xf32>, %w: tensor<2x6x2x3x3xf32>) -> tensor<2x?x6x4x4xf32> {
  %y = mbt.conv2d %x, %w {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 2 : i64} : (tensor<2x?x4x8x8xf32>, tensor<2x6x2x3x3xf32>) -> tensor<2x?x6x4x4xf32>
  return %y : tensor<2x?x6x4x4xf32>
}

// The gradient's rows [M*G, O/G, B*OH*OW]. The filter's adjoint: rows x
// columnsᵀ, the forward's columns (the same two ops on the same padded
// input: CSE merges them with the forward's). The input's adjoint here is
// col2im: dcols = Wᵀ x rows, then a gather summing the 3x3 taps (unrolled)
// whose window reads each input element (4 x 4 positions x 2 channels per
// group are fewer column entries than 8 x 8 x 3 for the transposed pass).
// CHECK-LABEL: func.func @grads
// CHECK:         linalg.generic {indexing_maps = [#[[ROWS]], #{{.*}}]{{.*}} ins(%{{.*}} : tensor<2x?x6x4x4xf32>) outs(%{{.*}} : tensor<2x2x3x?x4x4xf32>)
// CHECK:         linalg.batch_matmul_transpose_a ins(%{{.*}}, %{{.*}} : tensor<4x3x18xf32>, tensor<4x3x?xf32>)
// CHECK:         linalg.generic {{.*}}outs(%{{.*}} : tensor<2x?x4x8x8xf32>)
// CHECK-COUNT-9:   tensor.extract %{{.*}} : tensor<2x2x2x3x3x?x4x4xf32>
// CHECK:         linalg.batch_matmul_transpose_b ins(%{{.*}}, %{{.*}} : tensor<4x3x?xf32>, tensor<4x18x?xf32>)
// CHECK:         tensor.collapse_shape %{{.*}} {{\[\[}}0], [1, 2], [3], [4], [5]] : tensor<2x2x3x2x3x3xf32> into tensor<2x6x2x3x3xf32>
func.func @grads(%x: tensor<2x?x4x8x8xf32>, %w: tensor<2x6x2x3x3xf32>, %dy: tensor<2x?x6x4x4xf32>) -> (tensor<2x?x4x8x8xf32>, tensor<2x6x2x3x3xf32>) {
  %dx = mbt.conv2d_grad_input %dy, %w like %x {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 2 : i64} : tensor<2x?x6x4x4xf32>, tensor<2x6x2x3x3xf32>, tensor<2x?x4x8x8xf32>
  %dw = mbt.conv2d_grad_filter %x, %dy like %w {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 2 : i64} : tensor<2x?x4x8x8xf32>, tensor<2x?x6x4x4xf32>, tensor<2x6x2x3x3xf32>
  return %dx, %dw : tensor<2x?x4x8x8xf32>, tensor<2x6x2x3x3xf32>
}

// With 8 input channels and 2 output channels the transposed pass moves
// fewer column entries: the stride-1 pass over the gradient padded by
// dilation (K - 1) - padding = 1, with the filter flipped (2 - kh, 2 - kw)
// and its channels swapped ([M * G, 8, 2 * 3 * 3]).
// CHECK-LABEL: func.func @grads_transposed
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<2x?x2x8x8xf32>)
// CHECK:         linalg.generic {indexing_maps = [#[[FLIP]], #{{.*}}]{{.*}} ins(%{{.*}} : tensor<2x2x8x3x3xf32>) outs(%{{.*}} : tensor<2x1x8x2x3x3xf32>)
// CHECK:         linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<2x8x18xf32>, tensor<2x18x?xf32>)
// CHECK-NOT:     linalg.batch_matmul_transpose_a
func.func @grads_transposed(%w: tensor<2x2x8x3x3xf32>, %dy: tensor<2x?x2x6x6xf32>, %x: tensor<2x?x8x6x6xf32>) -> tensor<2x?x8x6x6xf32> {
  %dx = mbt.conv2d_grad_input %dy, %w like %x {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : tensor<2x?x2x6x6xf32>, tensor<2x2x8x3x3xf32>, tensor<2x?x8x6x6xf32>
  return %dx : tensor<2x?x8x6x6xf32>
}

// A model's own function (no model dimension) gets a unit one; without
// padding the input is read as it is.
// CHECK-LABEL: func.func @unbatched
// CHECK:         tensor.expand_shape %{{.*}} : tensor<?x1x5x5xf32> into tensor<1x?x1x5x5xf32>
// CHECK-NOT:     tensor.extract
// CHECK:         linalg.batch_matmul
// CHECK:         tensor.collapse_shape %{{.*}} : tensor<1x?x2x3x3xf32> into tensor<?x2x3x3xf32>
func.func @unbatched(%x: tensor<?x1x5x5xf32>, %w: tensor<2x1x3x3xf32>) -> tensor<?x2x3x3xf32> {
  %y = mbt.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<?x1x5x5xf32>, tensor<2x1x3x3xf32>) -> tensor<?x2x3x3xf32>
  return %y : tensor<?x2x3x3xf32>
}
