// RUN: mbt-opt --mbt-lower-to-linalg %s | FileCheck %s

// merge_rows is a collapse of the batch and position dimensions (a view);
// split_rows a generic reading row b * T + t (bufferization cannot infer
// an expand_shape of two dynamic sizes); positions each element's last
// index.

// CHECK-LABEL: func.func @rows
// CHECK:         %[[R:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0], [1, 2], [3]] : tensor<3x?x?x8xf32> into tensor<3x?x8xf32>
// CHECK:         tensor.empty
// CHECK:         %[[T:.*]] = tensor.dim %arg0, %{{c2(_[0-9a-z]+)?}} : tensor<3x?x?x8xf32>
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<3x?x?x8xf32>)
// CHECK:           %[[B:.*]] = linalg.index 1 : index
// CHECK:           %[[P:.*]] = linalg.index 2 : index
// CHECK:           %[[BT:.*]] = arith.muli %[[B]], %[[T]] : index
// CHECK:           %[[ROW:.*]] = arith.addi %[[BT]], %[[P]] : index
// CHECK:           tensor.extract %[[R]][%{{.*}}, %[[ROW]], %{{.*}}] : tensor<3x?x8xf32>
func.func @rows(%h: tensor<3x?x?x8xf32>) -> tensor<3x?x?x8xf32> {
  %r = mbt.merge_rows %h : (tensor<3x?x?x8xf32>) -> tensor<3x?x8xf32>
  %s = mbt.split_rows %r like %h : (tensor<3x?x8xf32>, tensor<3x?x?x8xf32>) -> tensor<3x?x?x8xf32>
  return %s : tensor<3x?x?x8xf32>
}

// CHECK-LABEL: func.func @positions
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<?x?xi32>)
// CHECK:           %[[T:.*]] = linalg.index 1 : index
// CHECK:           arith.index_cast %[[T]] : index to i32
func.func @positions(%t: tensor<?x?xi32>) -> tensor<?x?xi32> {
  %p = mbt.positions %t : (tensor<?x?xi32>) -> tensor<?x?xi32>
  return %p : tensor<?x?xi32>
}
