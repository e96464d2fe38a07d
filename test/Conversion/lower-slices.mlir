// RUN: mbt-opt --mbt-lower-to-linalg %s | FileCheck %s

// concat, slice and slice_grad move blocks: tensor slices, with the
// dynamic batch read by tensor.dim, and zeros only under slice_grad.

func.func @f(%a: tensor<?x3xf32>, %b: tensor<?x5xf32>, %g: tensor<?x2xf32>)
    -> (tensor<?x8xf32>, tensor<?x2xf32>, tensor<?x8xf32>) {
  %c = mbt.concat %a, %b {axis = 1 : i64} : (tensor<?x3xf32>, tensor<?x5xf32>) -> tensor<?x8xf32>
  %s = mbt.slice %c {axis = 1 : i64, start = 3 : i64, end = 5 : i64} : (tensor<?x8xf32>) -> tensor<?x2xf32>
  %d = mbt.slice_grad %g like %c {axis = 1 : i64, start = 3 : i64} : (tensor<?x2xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %c, %s, %d : tensor<?x8xf32>, tensor<?x2xf32>, tensor<?x8xf32>
}

// CHECK-LABEL: func.func @f(
// CHECK-SAME:      %[[A:[^:]*]]: tensor<?x3xf32>, %[[B:[^:]*]]: tensor<?x5xf32>, %[[G:[^:]*]]: tensor<?x2xf32>
// CHECK:         %[[E:.*]] = tensor.empty(%{{.*}}) : tensor<?x8xf32>
// CHECK:         %[[C1:.*]] = tensor.insert_slice %[[A]] into %[[E]][0, 0] [%{{.*}}, 3] [1, 1]
// CHECK:         %[[C:.*]] = tensor.insert_slice %[[B]] into %[[C1]][0, 3] [%{{.*}}, 5] [1, 1]
// CHECK:         tensor.extract_slice %[[C]][0, 3] [%{{.*}}, 2] [1, 1] : tensor<?x8xf32> to tensor<?x2xf32>
// CHECK:         %[[Z:.*]] = linalg.fill
// CHECK:         tensor.insert_slice %[[G]] into %[[Z]][0, 3] [%{{.*}}, 2] [1, 1]
// CHECK-NOT:     mbt.
