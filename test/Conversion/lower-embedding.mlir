// RUN: mbt-opt --mbt-lower-to-linalg %s | FileCheck %s

// The lookup: one generic over the result [M, B, T, D] reading the table at
// each position's index, a row of zeros where the index is out of range.
// The adjoint: a zero-filled table, then an scf.forall over (model,
// feature), each iteration owning one column of its model's table and
// adding, position by position, the gradient into the row its index picks.

// CHECK-LABEL: func.func @lookup
// CHECK:         %[[ROWS:.*]] = tensor.dim %arg0, %{{c1(_[0-9a-z]+)?}} : tensor<3x10x4xf32>
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel"]{{.*}} ins(%arg1 : tensor<3x?x5xi32>) outs(%{{.*}} : tensor<3x?x5x4xf32>)
// CHECK:           %[[I:.*]] = arith.index_cast %{{.*}} : i32 to index
// CHECK-DAG:       arith.cmpi slt, %[[I]], %[[ROWS]] : index
// CHECK-DAG:       arith.cmpi sge, %[[I]], %{{c0(_[0-9a-z]+)?}} : index
// CHECK:           %[[ROW:.*]] = arith.select %{{.*}}, %[[I]], %{{c0(_[0-9a-z]+)?}} : index
// CHECK:           %[[M:.*]] = linalg.index 0 : index
// CHECK:           %[[D:.*]] = linalg.index 3 : index
// CHECK:           tensor.extract %arg0[%[[M]], %[[ROW]], %[[D]]] : tensor<3x10x4xf32>
// CHECK:           arith.select
// CHECK:           linalg.yield
func.func @lookup(%w: tensor<3x10x4xf32>, %i: tensor<3x?x5xi32>) -> tensor<3x?x5x4xf32> {
  %e = mbt.embedding %w, %i : (tensor<3x10x4xf32>, tensor<3x?x5xi32>) -> tensor<3x?x5x4xf32>
  return %e : tensor<3x?x5x4xf32>
}

// CHECK-LABEL: func.func @adjoint
// CHECK:         %[[ZERO:.*]] = linalg.fill ins(%cst : f32) outs(%{{.*}} : tensor<3x10x4xf32>)
// CHECK:         scf.forall (%[[M:.*]], %[[D:.*]]) in (3, 4) shared_outs(%[[T:.*]] = %[[ZERO]])
// CHECK:           %[[COL:.*]] = tensor.extract_slice %[[T]][%[[M]], 0, %[[D]]] [1, 10, 1] [1, 1, 1] : tensor<3x10x4xf32> to tensor<10xf32>
// CHECK:           %[[SUM:.*]] = scf.for %[[P:.*]] = %{{c0(_[0-9a-z]+)?}} to %{{.*}} step %{{c1(_[0-9a-z]+)?}} iter_args(%[[ACC:.*]] = %[[COL]])
// CHECK:             tensor.extract %arg0[%[[M]], %[[P]]] : tensor<3x?xi32>
// CHECK:             scf.if
// CHECK:               %[[G:.*]] = tensor.extract %arg1[%[[M]], %[[P]], %[[D]]] : tensor<3x?x4xf32>
// CHECK:               %[[OLD:.*]] = tensor.extract %[[ACC]][%{{.*}}] : tensor<10xf32>
// CHECK:               %[[NEW:.*]] = arith.addf %[[OLD]], %[[G]] : f32
// CHECK:               tensor.insert %[[NEW]] into %[[ACC]]
// CHECK:             } else {
// CHECK:           scf.forall.in_parallel
// CHECK:             tensor.parallel_insert_slice %[[SUM]] into %[[T]][%[[M]], 0, %[[D]]] [1, 10, 1] [1, 1, 1]
func.func @adjoint(%i: tensor<3x?xi32>, %g: tensor<3x?x4xf32>, %w: tensor<3x10x4xf32>) -> tensor<3x10x4xf32> {
  %d = mbt.embedding_grad %i, %g like %w : (tensor<3x?xi32>, tensor<3x?x4xf32>, tensor<3x10x4xf32>) -> tensor<3x10x4xf32>
  return %d : tensor<3x10x4xf32>
}
