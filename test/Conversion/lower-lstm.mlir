// RUN: mbt-opt --mbt-lower-to-linalg %s | FileCheck %s
// RUN: mbt-opt --mbt-lower-to-linalg=recurrence-per-model=true %s | FileCheck %s --check-prefix=PERMODEL

// The LSTM's loop carries h and c and writes both at t; one batched matmul
// and one generic per step, which updates h and c in place and stores them
// into the states and cells at t too (its third and fourth outputs, slices
// of them), so no row is copied there. Where the gates are read (by the
// adjoint), the loop carries them too and the generic writes i, f, g, o
// into their columns at t. The adjoint carries the adjoints of h and c
// backward, reads the gates instead of recomputing h_{t-1} W_hh (no
// matmul before its generic) and writes the gates' adjoints into the
// inputs' adjoint at t (its first four outputs, that slice's gate
// columns).

// CHECK-LABEL: func.func @lstm
// CHECK:         scf.for %[[S:.*]] = {{.*}} iter_args(%[[H:.*]] = %{{.*}}, %[[C:.*]] = %{{.*}}, %[[HS:.*]] = %{{.*}}, %[[CS:.*]] = %{{.*}}) -> (tensor<3x?x8xf32>, tensor<3x?x8xf32>, tensor<3x?x?x8xf32>, tensor<3x?x?x8xf32>)
// CHECK:           linalg.batch_matmul ins(%[[H]], %arg1 : tensor<3x?x8xf32>, tensor<3x8x32xf32>)
// CHECK:           %[[HT:.*]] = tensor.extract_slice %[[HS]][0, 0, %[[S]], 0]
// CHECK:           %[[CT:.*]] = tensor.extract_slice %[[CS]][0, 0, %[[S]], 0]
// CHECK:           %[[NEW:.*]]:4 = linalg.generic {{.*}} outs(%[[H]], %[[C]], %[[HT]], %[[CT]] : tensor<3x?x8xf32>, tensor<3x?x8xf32>, tensor<3x?x8xf32>, tensor<3x?x8xf32>)
// CHECK-COUNT-4:     math.
// CHECK:             math.tanh
// CHECK:             linalg.yield %[[YH:.*]], %[[YC:.*]], %[[YH]], %[[YC]] : f32, f32, f32, f32
// CHECK:           %[[WH:.*]] = tensor.insert_slice %[[NEW]]#2 into %[[HS]][0, 0, %[[S]], 0]
// CHECK:           %[[WC:.*]] = tensor.insert_slice %[[NEW]]#3 into %[[CS]][0, 0, %[[S]], 0]
// CHECK:           scf.yield %[[NEW]]#0, %[[NEW]]#1, %[[WH]], %[[WC]]

// With recurrence-per-model (the CPU), the scan over the positions runs
// inside an scf.forall over the models, on each model's slices (the model
// dim kept, of size 1, so that h W_hh stays a batched matmul for BLAS),
// and the forall inserts each model's states. Without model dims there is
// no forall.
// PERMODEL-LABEL: func.func @lstm
// PERMODEL:         scf.forall (%[[M:.*]]) in (3) shared_outs(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<3x?x?x8xf32>, tensor<3x?x?x8xf32>)
// PERMODEL:           tensor.extract_slice %arg0[%[[M]], 0, 0, 0] [1, %{{.*}}, %{{.*}}, 32] [1, 1, 1, 1] : tensor<3x?x?x32xf32> to tensor<1x?x?x32xf32>
// PERMODEL:           %[[W:.*]] = tensor.extract_slice %arg1[%[[M]], 0, 0] [1, 8, 32] [1, 1, 1] : tensor<3x8x32xf32> to tensor<1x8x32xf32>
// PERMODEL:           scf.for
// PERMODEL:             linalg.batch_matmul ins(%{{.*}}, %[[W]] : tensor<1x?x8xf32>, tensor<1x8x32xf32>)
// PERMODEL:           scf.forall.in_parallel
// PERMODEL-NEXT:        tensor.parallel_insert_slice %{{.*}} into %{{.*}}[%[[M]], 0, 0, 0] [1, %{{.*}}, %{{.*}}, 8] [1, 1, 1, 1] : tensor<1x?x?x8xf32> into tensor<3x?x?x8xf32>
// PERMODEL-LABEL: func.func @adjoint
// PERMODEL-NOT:     scf.forall
// PERMODEL:         return
func.func @lstm(%gx: tensor<3x?x?x32xf32>, %w: tensor<3x8x32xf32>, %b: tensor<3x32xf32>, %t: tensor<3x?x?xi32>) -> tensor<3x?x?x8xf32> {
  %h, %c, %g = mbt.lstm %gx, %w, %b, %t : (tensor<3x?x?x32xf32>, tensor<3x8x32xf32>, tensor<3x32xf32>, tensor<3x?x?xi32>) -> (tensor<3x?x?x8xf32>, tensor<3x?x?x8xf32>, tensor<3x?x?x32xf32>)
  return %h : tensor<3x?x?x8xf32>
}

// CHECK-LABEL: func.func @gates
// CHECK:         scf.for %[[S:.*]] = {{.*}} iter_args(%[[H:.*]] = %{{.*}}, %[[C:.*]] = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %[[GS:.*]] = %{{.*}}) -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x32xf32>)
// CHECK:           %[[GT:.*]] = tensor.extract_slice %[[GS]][0, %[[S]], 0]
// CHECK-DAG:       %[[GI:.*]] = tensor.extract_slice %[[GT]][0, 0] [%{{.*}}, 8]
// CHECK-DAG:       %[[GO:.*]] = tensor.extract_slice %[[GT]][0, 24] [%{{.*}}, 8]
// CHECK:           %[[NEW:.*]]:8 = linalg.generic {{.*}} outs(%[[H]], %[[C]], %{{.*}}, %{{.*}}, %[[GI]], %{{.*}}, %{{.*}}, %[[GO]] :
// CHECK:             linalg.yield %[[YH:.*]], %[[YC:.*]], %[[YH]], %[[YC]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : f32, f32, f32, f32, f32, f32, f32, f32
// CHECK:           tensor.insert_slice %[[NEW]]#4 into %[[GT]][0, 0]
// CHECK:           tensor.insert_slice %[[NEW]]#7 into %{{.*}}[0, 24]
// CHECK:           tensor.insert_slice %{{.*}} into %[[GS]][0, %[[S]], 0]
func.func @gates(%gx: tensor<?x?x32xf32>, %w: tensor<8x32xf32>, %b: tensor<32xf32>, %t: tensor<?x?xi32>) -> tensor<?x?x32xf32> {
  %h, %c, %g = mbt.lstm %gx, %w, %b, %t : (tensor<?x?x32xf32>, tensor<8x32xf32>, tensor<32xf32>, tensor<?x?xi32>) -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x32xf32>)
  return %g : tensor<?x?x32xf32>
}

// CHECK-LABEL: func.func @adjoint
// CHECK:         scf.for {{.*}} iter_args(%[[DH:.*]] = %{{.*}}, %[[DC:.*]] = %{{.*}}, %[[DX:.*]] = %{{.*}}, %[[DW:.*]] = %{{.*}}, %[[DB:.*]] = %{{.*}})
// CHECK-NOT:       linalg.matmul ins
// CHECK:           %[[DXT:.*]] = tensor.extract_slice %[[DX]][0, %{{.*}}, 0] [%{{.*}}, 1, 32]
// CHECK-DAG:       %[[DI:.*]] = tensor.extract_slice %[[DXT]][0, 0] [%{{.*}}, 8]
// CHECK-DAG:       %[[DO:.*]] = tensor.extract_slice %[[DXT]][0, 24] [%{{.*}}, 8]
// CHECK:           %[[ADJ:.*]]:6 = linalg.generic {{.*}} outs(%[[DI]], %{{.*}}, %{{.*}}, %[[DO]], %[[DH]], %[[DC]] : {{.*}})
// CHECK:           linalg.matmul_transpose_b ins(%{{.*}}, %arg1 : tensor<?x32xf32>, tensor<8x32xf32>) outs(%[[ADJ]]#4 : tensor<?x8xf32>)
// CHECK:           linalg.matmul_transpose_a {{.*}} outs(%[[DW]] : tensor<8x32xf32>)
// CHECK:           linalg.generic {{.*}} outs(%[[DB]] : tensor<32xf32>)
// CHECK:           scf.yield %{{.*}}, %[[ADJ]]#5,
func.func @adjoint(%gx: tensor<?x?x32xf32>, %w: tensor<8x32xf32>, %b: tensor<32xf32>, %t: tensor<?x?xi32>, %h: tensor<?x?x8xf32>, %c: tensor<?x?x8xf32>, %gates: tensor<?x?x32xf32>, %g: tensor<?x?x8xf32>) -> (tensor<?x?x32xf32>, tensor<8x32xf32>, tensor<32xf32>) {
  %dgx, %dw, %db = mbt.lstm_grad %gx, %w, %b, %t, %h, %c, %gates, %g : (tensor<?x?x32xf32>, tensor<8x32xf32>, tensor<32xf32>, tensor<?x?xi32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x32xf32>, tensor<?x?x8xf32>) -> (tensor<?x?x32xf32>, tensor<8x32xf32>, tensor<32xf32>)
  return %dgx, %dw, %db : tensor<?x?x32xf32>, tensor<8x32xf32>, tensor<32xf32>
}
