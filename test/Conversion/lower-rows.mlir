// RUN: mbt-opt --mbt-lower-to-linalg %s | FileCheck %s
// RUN: mbt-opt --mbt-lower-to-linalg --canonicalize %s | FileCheck %s --check-prefix=FOLD

// merge_rows is a collapse of the batch and position dimensions, split_rows
// an expand_shape back whose sizes are those of `like` (two dynamic sizes
// in one group): views, no copy; positions each element's last index.

// CHECK-LABEL: func.func @rows
// CHECK:         %[[R:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0], [1, 2], [3]] : tensor<3x?x?x8xf32> into tensor<3x?x8xf32>
// CHECK-DAG:     %[[B:.*]] = tensor.dim %arg0, %{{c1(_[0-9a-z]+)?}} : tensor<3x?x?x8xf32>
// CHECK-DAG:     %[[T:.*]] = tensor.dim %arg0, %{{c2(_[0-9a-z]+)?}} : tensor<3x?x?x8xf32>
// CHECK:         %[[S:.*]] = tensor.expand_shape %[[R]] {{\[\[}}0], [1, 2], [3]] output_shape [3, %[[B]], %[[T]], 8] : tensor<3x?x8xf32> into tensor<3x?x?x8xf32>
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[S]]

// A size of the split is the size it was given (mbt's fold of tensor.dim
// of an expand_shape; MLIR 19's divides by the dynamic-size marker).
// FOLD-LABEL: func.func @rows
// FOLD-DAG:     %[[C2:.*]] = arith.constant 2 : index
// FOLD-DAG:     %[[T:.*]] = tensor.dim %arg0, %[[C2]] : tensor<3x?x?x8xf32>
// FOLD-NOT:     affine.apply
// FOLD:         return %{{.*}}, %[[T]]
func.func @rows(%h: tensor<3x?x?x8xf32>) -> (tensor<3x?x?x8xf32>, index) {
  %c2 = arith.constant 2 : index
  %r = mbt.merge_rows %h : (tensor<3x?x?x8xf32>) -> tensor<3x?x8xf32>
  %s = mbt.split_rows %r like %h : (tensor<3x?x8xf32>, tensor<3x?x?x8xf32>) -> tensor<3x?x?x8xf32>
  %t = tensor.dim %s, %c2 : tensor<3x?x?x8xf32>
  return %s, %t : tensor<3x?x?x8xf32>, index
}

// CHECK-LABEL: func.func @positions
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<?x?xi32>)
// CHECK:           %[[T:.*]] = linalg.index 1 : index
// CHECK:           arith.index_cast %[[T]] : index to i32
func.func @positions(%t: tensor<?x?xi32>) -> tensor<?x?xi32> {
  %p = mbt.positions %t : (tensor<?x?xi32>) -> tensor<?x?xi32>
  return %p : tensor<?x?xi32>
}
