// RUN: mbt-opt --mbt-lower-to-linalg %s | FileCheck %s
// RUN: mbt-opt --mbt-lower-to-linalg --canonicalize --mbt-fuse-elementwise %s | FileCheck %s --check-prefix=FUSED
// RUN: mbt-opt --mbt-lower-to-linalg=attention-per-sequence=true %s | FileCheck %s --check-prefix=SEQ

// Attention over [M, B, T, D] with 2 heads: query, key and value viewed as
// [M, B, T, 2, D/2]; the scores contracted over the head's features; the
// padded keys (token 0) and, with causal, the later keys set to -inf; the
// row maximum, the exponentials (0 where masked), their sums and the
// weights (0 for a row with no allowed key); the weighted values, viewed
// as [M, B, T, D] again.

// CHECK-LABEL: func.func @causal
// CHECK:         %[[QH:.*]] = tensor.expand_shape %arg0 {{\[\[}}0], [1], [2], [3, 4]] output_shape [{{.*}}, 2, 4] : tensor<3x?x?x8xf32> into tensor<3x?x?x2x4xf32>
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]{{.*}} outs(%{{.*}} : tensor<3x?x2x?x?xf32>)
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %arg3 : tensor<3x?x2x?x?xf32>, tensor<3x?x?xi32>)
// CHECK:           arith.cmpi ne
// CHECK:           %[[I:.*]] = linalg.index 3 : index
// CHECK:           %[[J:.*]] = linalg.index 4 : index
// CHECK:           arith.cmpi ule, %[[J]], %[[I]] : index
// CHECK:           arith.mulf %{{.*}}, %cst{{.*}} : f32
// CHECK:           arith.select %{{.*}}, %{{.*}}, %cst{{.*}} : f32
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]
// CHECK:           arith.maximumf
// CHECK:         linalg.generic
// CHECK:           arith.cmpf oeq
// CHECK:           math.exp
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]
// CHECK:           arith.addf
// CHECK:         linalg.generic
// CHECK:           arith.cmpf ogt
// CHECK:           arith.divf
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]{{.*}} outs(%{{.*}} : tensor<3x?x?x2x4xf32>)
// CHECK:         tensor.collapse_shape %{{.*}} {{\[\[}}0], [1], [2], [3, 4]] : tensor<3x?x?x2x4xf32> into tensor<3x?x?x8xf32>
// Elementwise fusion keeps both products plain multiply-accumulates (the
// weights' normalization is not fused into the weighted values), so that
// mbt-linalg-to-blas hands them to BLAS.
// FUSED-LABEL: func.func @causal
// FUSED:         linalg.generic {{.*}}"reduction"]{{.*}} outs(%{{.*}} : tensor<3x?x2x?x?xf32>)
// FUSED-NEXT:    ^bb0(%{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32):
// FUSED-NEXT:      arith.mulf
// FUSED-NEXT:      arith.addf
// FUSED-NEXT:      linalg.yield
// FUSED:           arith.divf
// FUSED:         linalg.generic {{.*}}"reduction"]{{.*}} outs(%{{.*}} : tensor<3x?x?x2x4xf32>)
// FUSED-NEXT:    ^bb0(%{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32):
// FUSED-NEXT:      arith.mulf
// FUSED-NEXT:      arith.addf
// FUSED-NEXT:      linalg.yield
// With attention-per-sequence (the CPU), one scf.forall over the models
// and the samples: each iteration slices its sequence's query, key, value
// [T, D] and tokens [T]. A causal attention then takes the queries 32 at a
// time (scf.for): block [i0, i0 + rows) reads only keys [0, i0 + rows),
// builds its weights [2, rows, i0 + rows] (the same generics, without the
// leading dims, the causal mask at query position i0 + i) and inserts its
// rows of the result.
// SEQ-LABEL: func.func @causal
// SEQ:         %[[OUT:.*]] = tensor.empty(%{{.*}}, %{{.*}}) : tensor<3x?x?x8xf32>
// SEQ:         scf.forall (%[[M:.*]], %[[B:.*]]) in (3, %{{.*}}) shared_outs(%[[SHARED:.*]] = %[[OUT]]) -> (tensor<3x?x?x8xf32>)
// SEQ:           %[[Q:.*]] = tensor.extract_slice %arg0[%[[M]], %[[B]], 0, 0] [1, 1, %{{.*}}, 8] [1, 1, 1, 1] : tensor<3x?x?x8xf32> to tensor<?x8xf32>
// SEQ:           %[[K:.*]] = tensor.extract_slice %arg1[%[[M]], %[[B]], 0, 0]
// SEQ:           %[[TOK:.*]] = tensor.extract_slice %arg3[%[[M]], %[[B]], 0] [1, 1, %{{.*}}] [1, 1, 1] : tensor<3x?x?xi32> to tensor<?xi32>
// SEQ:           %[[C32:.*]] = arith.constant 32 : index
// SEQ:           %[[T:.*]] = tensor.dim %[[Q]], %{{.*}} : tensor<?x8xf32>
// SEQ:           scf.for %[[I0:.*]] = %{{.*}} to %[[T]] step %[[C32]] iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<?x8xf32>)
// SEQ:             %[[LEFT:.*]] = arith.subi %[[T]], %[[I0]] : index
// SEQ:             %[[ROWS:.*]] = arith.minsi %[[LEFT]], %[[C32]] : index
// SEQ:             %[[END:.*]] = arith.addi %[[I0]], %[[ROWS]] : index
// SEQ:             tensor.extract_slice %[[Q]][%[[I0]], 0] [%[[ROWS]], 8] [1, 1]
// SEQ:             tensor.extract_slice %[[K]][0, 0] [%[[END]], 8] [1, 1]
// SEQ:             tensor.extract_slice %[[TOK]][0] [%[[END]]] [1]
// SEQ:             linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]{{.*}} outs(%{{.*}} : tensor<2x?x?xf32>)
// SEQ:               %[[I:.*]] = linalg.index 1 : index
// SEQ:               %[[POS:.*]] = arith.addi %[[I]], %[[I0]] : index
// SEQ:               %[[J:.*]] = linalg.index 2 : index
// SEQ:               arith.cmpi ule, %[[J]], %[[POS]] : index
// SEQ:             math.exp
// SEQ:             linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]{{.*}} outs(%{{.*}} : tensor<?x2x4xf32>)
// SEQ:             %[[ROWSOUT:.*]] = tensor.collapse_shape
// SEQ:             %[[INS:.*]] = tensor.insert_slice %[[ROWSOUT]] into %[[ACC]][%[[I0]], 0]
// SEQ:             scf.yield %[[INS]] : tensor<?x8xf32>
// SEQ:           scf.forall.in_parallel
// SEQ-NEXT:        tensor.parallel_insert_slice %{{.*}} into %[[SHARED]][%[[M]], %[[B]], 0, 0] [1, 1, %{{.*}}, 8] [1, 1, 1, 1] : tensor<?x8xf32> into tensor<3x?x?x8xf32>
func.func @causal(%q: tensor<3x?x?x8xf32>, %k: tensor<3x?x?x8xf32>, %v: tensor<3x?x?x8xf32>, %t: tensor<3x?x?xi32>) -> tensor<3x?x?x8xf32> {
  %o = mbt.attention %q, %k, %v, %t {heads = 2 : i64, causal = true} : (tensor<3x?x?x8xf32>, tensor<3x?x?x8xf32>, tensor<3x?x?x8xf32>, tensor<3x?x?xi32>) -> tensor<3x?x?x8xf32>
  return %o : tensor<3x?x?x8xf32>
}

// Without causal, only the padding masks.
// CHECK-LABEL: func.func @padding_only
// CHECK-NOT:     arith.cmpi ule
// CHECK:         return
func.func @padding_only(%q: tensor<?x?x8xf32>, %t: tensor<?x?xi32>) -> tensor<?x?x8xf32> {
  %o = mbt.attention %q, %q, %q, %t {heads = 1 : i64, causal = false} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?xi32>) -> tensor<?x?x8xf32>
  return %o : tensor<?x?x8xf32>
}

// The adjoint recomputes the weights, then: dvalue (weights transposed
// times the gradient), dp, the row dots, ds, dquery and dkey.
// CHECK-LABEL: func.func @adjoint
// CHECK-COUNT-6: linalg.generic
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<?x?x2x4xf32>)
// CHECK-NEXT:    ^bb0
// CHECK:         tensor.collapse_shape {{.*}} into tensor<?x?x8xf32>
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<?x2x?x?xf32>)
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<?x2x?xf32>)
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<?x2x?x?xf32>)
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<?x?x2x4xf32>)
// CHECK:         tensor.collapse_shape {{.*}} into tensor<?x?x8xf32>
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<?x?x2x4xf32>)
// CHECK:         tensor.collapse_shape {{.*}} into tensor<?x?x8xf32>
// Per sequence: one forall with the three gradients as its shared outputs.
// SEQ-LABEL: func.func @adjoint
// SEQ:         scf.forall (%[[S:.*]]) in (%{{.*}}) shared_outs(%[[DQ:.*]] = %{{.*}}, %[[DK:.*]] = %{{.*}}, %[[DV:.*]] = %{{.*}}) -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>)
// SEQ-COUNT-12:  linalg.generic
// SEQ:           scf.forall.in_parallel
// SEQ-NEXT:        tensor.parallel_insert_slice %{{.*}} into %[[DQ]][%[[S]], 0, 0]
// SEQ-NEXT:        tensor.parallel_insert_slice %{{.*}} into %[[DK]][%[[S]], 0, 0]
// SEQ-NEXT:        tensor.parallel_insert_slice %{{.*}} into %[[DV]][%[[S]], 0, 0]
func.func @adjoint(%q: tensor<?x?x8xf32>, %t: tensor<?x?xi32>, %g: tensor<?x?x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>) {
  %dq, %dk, %dv = mbt.attention_grad %q, %q, %q, %t, %g {heads = 2 : i64, causal = false} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?xi32>, tensor<?x?x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>)
  return %dq, %dk, %dv : tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>
}

// A causal adjoint per sequence goes block by block of queries too: dquery
// takes each block's rows; dkey and dvalue stay in the heads' layout
// [T, 2, 4], zero before the loop, and each block adds its products into
// their rows [0, end) (the products' inits are those rows, not zeros); they
// are merged to [T, 8] after the loop.
// SEQ-LABEL: func.func @causal_adjoint
// SEQ:         scf.forall
// SEQ:           %[[ZK:.*]] = linalg.fill {{.*}} -> tensor<?x2x4xf32>
// SEQ:           %[[ZV:.*]] = linalg.fill {{.*}} -> tensor<?x2x4xf32>
// SEQ:           %[[SUMS:.*]]:3 = scf.for %[[I0:.*]] = {{.*}} iter_args(%[[DQ:.*]] = %{{.*}}, %[[DK:.*]] = %[[ZK]], %[[DV:.*]] = %[[ZV]]) -> (tensor<?x8xf32>, tensor<?x2x4xf32>, tensor<?x2x4xf32>)
// SEQ:             %[[END:.*]] = arith.addi %[[I0]]
// SEQ:             %[[DKROWS:.*]] = tensor.extract_slice %[[DK]][0, 0, 0] [%[[END]], 2, 4] [1, 1, 1]
// SEQ:             %[[DVROWS:.*]] = tensor.extract_slice %[[DV]][0, 0, 0] [%[[END]], 2, 4] [1, 1, 1]
// SEQ:             %[[DVPART:.*]] = linalg.generic {{.*}} outs(%[[DVROWS]] : tensor<?x2x4xf32>)
// SEQ:             %[[DQPART:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<?x2x4xf32>)
// SEQ:             %[[DKPART:.*]] = linalg.generic {{.*}} outs(%[[DKROWS]] : tensor<?x2x4xf32>)
// SEQ:             tensor.insert_slice %{{.*}} into %[[DQ]][%[[I0]], 0]
// SEQ:             tensor.insert_slice %[[DKPART]] into %[[DK]][0, 0, 0]
// SEQ:             tensor.insert_slice %[[DVPART]] into %[[DV]][0, 0, 0]
// SEQ:           tensor.collapse_shape %[[SUMS]]#1 {{\[\[}}0], [1, 2]] : tensor<?x2x4xf32> into tensor<?x8xf32>
// SEQ:           tensor.collapse_shape %[[SUMS]]#2 {{\[\[}}0], [1, 2]] : tensor<?x2x4xf32> into tensor<?x8xf32>
// SEQ:           scf.forall.in_parallel
func.func @causal_adjoint(%q: tensor<?x?x8xf32>, %t: tensor<?x?xi32>, %g: tensor<?x?x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>) {
  %dq, %dk, %dv = mbt.attention_grad %q, %q, %q, %t, %g {heads = 2 : i64, causal = true} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?xi32>, tensor<?x?x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>)
  return %dq, %dk, %dv : tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>
}
