// RUN: mbt-opt --mbt-lower-to-linalg %s | FileCheck %s
// RUN: mbt-opt --mbt-lower-to-linalg=recurrence-per-model=true %s | FileCheck %s --check-prefix=PERMODEL

// The GRU's recurrence: an scf.for over the positions carrying the state
// and the states written so far; per step the slice of the input
// projections, one batched matmul h W_hh, the gates read through slices of
// the 3H columns, and one generic writing the new state over the old one
// (the old one kept at padding) and into the states' slice at t, inserted
// there. Where the gates are read (by the adjoint), the loop carries them
// too and the generic writes r, z, n and g_n into their columns at t. The
// adjoint runs the loop backward with the state's, the weight's and the
// bias's adjoints carried, reads the gates instead of recomputing
// h_{t-1} W_hh (no matmul before its generic), and writes dr, dz and dn
// into the gate columns of the inputs' adjoint at t and dr, dz and the
// adjoint of g_n into those of dgh, a buffer the loop carries.

// CHECK-LABEL: func.func @gru
// CHECK:         linalg.fill
// CHECK:         %[[T:.*]] = tensor.dim %arg0, %{{c2(_[0-9a-z]+)?}} : tensor<3x?x?x24xf32>
// CHECK:         scf.for %[[S:.*]] = %{{c0(_[0-9a-z]+)?}} to %[[T]] step %{{c1(_[0-9a-z]+)?}} iter_args(%[[H:.*]] = %{{.*}}, %[[STATES:.*]] = %{{.*}}) -> (tensor<3x?x8xf32>, tensor<3x?x?x8xf32>)
// CHECK:           tensor.extract_slice %arg0[0, 0, %[[S]], 0] [3, %{{.*}}, 1, 24] [1, 1, 1, 1] : tensor<3x?x?x24xf32> to tensor<3x?x24xf32>
// CHECK:           %[[GH:.*]] = linalg.batch_matmul ins(%[[H]], %arg1 : tensor<3x?x8xf32>, tensor<3x8x24xf32>)
// CHECK:           tensor.extract_slice %[[GH]][0, 0, 16] [3, %{{.*}}, 8] [1, 1, 1]
// CHECK:           %[[AT:.*]] = tensor.extract_slice %[[STATES]][0, 0, %[[S]], 0]
// CHECK:           %[[NEW:.*]]:2 = linalg.generic {{.*}} outs(%[[H]], %[[AT]] : tensor<3x?x8xf32>, tensor<3x?x8xf32>)
// CHECK:             math.tanh
// CHECK:             arith.cmpi ne
// CHECK:             %[[Y:.*]] = arith.select
// CHECK:             linalg.yield %[[Y]], %[[Y]] : f32, f32
// CHECK:           %[[W:.*]] = tensor.insert_slice %[[NEW]]#1 into %[[STATES]][0, 0, %[[S]], 0]
// CHECK:           scf.yield %[[NEW]]#0, %[[W]]

// With recurrence-per-model (the CPU), the scan over the positions runs
// inside an scf.forall over the models, on each model's slices (the model
// dim kept, of size 1, so that h W_hh stays a batched matmul for BLAS),
// and the forall inserts each model's states. Without model dims there is
// no forall.
// PERMODEL-LABEL: func.func @gru
// PERMODEL:         scf.forall (%[[M:.*]]) in (3) shared_outs(%{{.*}}) -> (tensor<3x?x?x8xf32>)
// PERMODEL:           tensor.extract_slice %arg0[%[[M]], 0, 0, 0] [1, %{{.*}}, %{{.*}}, 24] [1, 1, 1, 1] : tensor<3x?x?x24xf32> to tensor<1x?x?x24xf32>
// PERMODEL:           %[[W:.*]] = tensor.extract_slice %arg1[%[[M]], 0, 0] [1, 8, 24] [1, 1, 1] : tensor<3x8x24xf32> to tensor<1x8x24xf32>
// PERMODEL:           scf.for
// PERMODEL:             linalg.batch_matmul ins(%{{.*}}, %[[W]] : tensor<1x?x8xf32>, tensor<1x8x24xf32>)
// PERMODEL:           scf.forall.in_parallel
// PERMODEL-NEXT:        tensor.parallel_insert_slice %{{.*}} into %{{.*}}[%[[M]], 0, 0, 0] [1, %{{.*}}, %{{.*}}, 8] [1, 1, 1, 1] : tensor<1x?x?x8xf32> into tensor<3x?x?x8xf32>
// PERMODEL-LABEL: func.func @adjoint
// PERMODEL-NOT:     scf.forall
// PERMODEL:         return
func.func @gru(%gx: tensor<3x?x?x24xf32>, %w: tensor<3x8x24xf32>, %b: tensor<3x24xf32>, %t: tensor<3x?x?xi32>) -> tensor<3x?x?x8xf32> {
  %h, %g = mbt.gru %gx, %w, %b, %t : (tensor<3x?x?x24xf32>, tensor<3x8x24xf32>, tensor<3x24xf32>, tensor<3x?x?xi32>) -> (tensor<3x?x?x8xf32>, tensor<3x?x?x32xf32>)
  return %h : tensor<3x?x?x8xf32>
}

// CHECK-LABEL: func.func @gates
// CHECK:         scf.for %[[S:.*]] = {{.*}} iter_args(%[[H:.*]] = %{{.*}}, %{{.*}} = %{{.*}}, %[[GS:.*]] = %{{.*}}) -> (tensor<?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x32xf32>)
// CHECK:           %[[GT:.*]] = tensor.extract_slice %[[GS]][0, %[[S]], 0]
// CHECK-DAG:       %[[GR:.*]] = tensor.extract_slice %[[GT]][0, 0] [%{{.*}}, 8]
// CHECK-DAG:       %[[GN:.*]] = tensor.extract_slice %[[GT]][0, 24] [%{{.*}}, 8]
// CHECK:           %[[NEW:.*]]:6 = linalg.generic {{.*}} outs(%[[H]], %{{.*}}, %[[GR]], %{{.*}}, %{{.*}}, %[[GN]] :
// CHECK:             linalg.yield %[[Y:.*]], %[[Y]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : f32, f32, f32, f32, f32, f32
// CHECK:           tensor.insert_slice %[[NEW]]#2 into %[[GT]][0, 0]
// CHECK:           tensor.insert_slice %[[NEW]]#5 into %{{.*}}[0, 24]
// CHECK:           tensor.insert_slice %{{.*}} into %[[GS]][0, %[[S]], 0]
func.func @gates(%gx: tensor<?x?x24xf32>, %w: tensor<8x24xf32>, %b: tensor<24xf32>, %t: tensor<?x?xi32>) -> tensor<?x?x32xf32> {
  %h, %g = mbt.gru %gx, %w, %b, %t : (tensor<?x?x24xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<?x?xi32>) -> (tensor<?x?x8xf32>, tensor<?x?x32xf32>)
  return %g : tensor<?x?x32xf32>
}

// CHECK-LABEL: func.func @adjoint
// CHECK:         scf.for %[[S:.*]] = {{.*}} iter_args(%[[DH:.*]] = %{{.*}}, %[[DGX:.*]] = %{{.*}}, %[[DW:.*]] = %{{.*}}, %[[DB:.*]] = %{{.*}}, %[[DGH:.*]] = %{{.*}})
// CHECK-NEXT:      %[[T:.*]] = arith.subi %{{.*}}, %[[S]] : index
// CHECK:           arith.cmpi sgt, %[[T]], %{{c0(_[0-9a-z]+)?}} : index
// CHECK-NOT:       linalg.matmul ins
// CHECK:           %[[DXT:.*]] = tensor.extract_slice %[[DGX]][0, %[[T]], 0]
// CHECK:           %[[DR:.*]] = tensor.extract_slice %[[DXT]][0, 0] [%{{.*}}, 8]
// CHECK:           %[[DHR:.*]] = tensor.extract_slice %[[DGH]][0, 0] [%{{.*}}, 8]
// CHECK:           %[[ADJ:.*]]:7 = linalg.generic {{.*}} outs(%[[DR]], %{{.*}}, %{{.*}}, %[[DHR]], %{{.*}}, %{{.*}}, %[[DH]] : {{.*}})
// CHECK:             linalg.yield %[[YR:.*]], %[[YZ:.*]], %{{.*}}, %[[YR]], %[[YZ]], %{{.*}}, %{{.*}} : f32, f32, f32, f32, f32, f32, f32
// CHECK:           %[[DPREV:.*]] = linalg.matmul_transpose_b ins(%{{.*}}, %arg1 : tensor<?x24xf32>, tensor<8x24xf32>) outs(%[[ADJ]]#6 : tensor<?x8xf32>)
// CHECK:           %[[NEWDW:.*]] = linalg.matmul_transpose_a ins(%{{.*}}, %{{.*}} : tensor<?x8xf32>, tensor<?x24xf32>) outs(%[[DW]] : tensor<8x24xf32>)
// CHECK:           %[[NEWDB:.*]] = linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]{{.*}} outs(%[[DB]] : tensor<24xf32>)
// CHECK:           %[[NEWDGX:.*]] = tensor.insert_slice %{{.*}} into %[[DGX]][0, %[[T]], 0]
// CHECK:           scf.yield %[[DPREV]], %[[NEWDGX]], %[[NEWDW]], %[[NEWDB]], %{{.*}} :
func.func @adjoint(%gx: tensor<?x?x24xf32>, %w: tensor<8x24xf32>, %b: tensor<24xf32>, %t: tensor<?x?xi32>, %h: tensor<?x?x8xf32>, %gates: tensor<?x?x32xf32>, %g: tensor<?x?x8xf32>) -> (tensor<?x?x24xf32>, tensor<8x24xf32>, tensor<24xf32>) {
  %dgx, %dw, %db = mbt.gru_grad %gx, %w, %b, %t, %h, %gates, %g : (tensor<?x?x24xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<?x?xi32>, tensor<?x?x8xf32>, tensor<?x?x32xf32>, tensor<?x?x8xf32>) -> (tensor<?x?x24xf32>, tensor<8x24xf32>, tensor<24xf32>)
  return %dgx, %dw, %db : tensor<?x?x24xf32>, tensor<8x24xf32>, tensor<24xf32>
}
