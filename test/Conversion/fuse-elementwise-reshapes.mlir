// RUN: mbt-opt --mbt-fuse-elementwise %s | FileCheck %s

// mbt-fuse-elementwise moves a reshape across an elementwise generic only
// where a generic on its far side fuses with it. The rows of heads
// [T, 4, 8] collapsed to [T, 32] from a function's argument (or a loop's
// result: the attention's adjoint accumulators) have no such generic: the
// rounding stays one loop over 32 contiguous values, which vectorizes,
// not 4 loops of 8.

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// CHECK-LABEL: func.func @collapsed_argument(
// CHECK:         %[[ROWS:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2]]
// CHECK:         linalg.generic
// CHECK-SAME:      iterator_types = ["parallel", "parallel"]
// CHECK-SAME:      ins(%[[ROWS]] : tensor<?x32xf32>)
// CHECK-NOT:     tensor.collapse_shape
func.func @collapsed_argument(%heads: tensor<?x4x8xf32>) -> tensor<?x32xf32> {
  %c0 = arith.constant 0 : index
  %rows = tensor.collapse_shape %heads [[0], [1, 2]]
      : tensor<?x4x8xf32> into tensor<?x32xf32>
  %n = tensor.dim %rows, %c0 : tensor<?x32xf32>
  %init = tensor.empty(%n) : tensor<?x32xf32>
  %half = arith.constant 0.5 : f32
  %r = linalg.generic {indexing_maps = [#id2, #id2],
                       iterator_types = ["parallel", "parallel"]}
      ins(%rows : tensor<?x32xf32>) outs(%init : tensor<?x32xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.mulf %x, %half : f32
    linalg.yield %y : f32
  } -> tensor<?x32xf32>
  return %r : tensor<?x32xf32>
}

// Where the collapse's source is an elementwise generic, the reshape moves
// and the two fuse into one generic.
// CHECK-LABEL: func.func @collapsed_generic(
// CHECK-COUNT-1: linalg.generic
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @collapsed_generic(%heads: tensor<?x4x8xf32>) -> tensor<?x32xf32> {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %heads, %c0 : tensor<?x4x8xf32>
  %init3 = tensor.empty(%m) : tensor<?x4x8xf32>
  %two = arith.constant 2.0 : f32
  %doubled = linalg.generic {indexing_maps = [#id3, #id3],
                             iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%heads : tensor<?x4x8xf32>) outs(%init3 : tensor<?x4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.mulf %x, %two : f32
    linalg.yield %y : f32
  } -> tensor<?x4x8xf32>
  %rows = tensor.collapse_shape %doubled [[0], [1, 2]]
      : tensor<?x4x8xf32> into tensor<?x32xf32>
  %init = tensor.empty(%m) : tensor<?x32xf32>
  %half = arith.constant 0.5 : f32
  %r = linalg.generic {indexing_maps = [#id2, #id2],
                       iterator_types = ["parallel", "parallel"]}
      ins(%rows : tensor<?x32xf32>) outs(%init : tensor<?x32xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.mulf %x, %half : f32
    linalg.yield %y : f32
  } -> tensor<?x32xf32>
  return %r : tensor<?x32xf32>
}
