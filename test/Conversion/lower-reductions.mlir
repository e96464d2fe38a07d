// RUN: mbt-opt --mbt-lower-to-linalg %s | FileCheck %s

// The reduction, layout and label ops become linalg.generic: one
// reduction per statistic, elementwise epilogues that elementwise fusion
// can merge, and no mbt op left.

func.func @f(%x: tensor<?x3xf32>, %w: tensor<3x4xf32>, %y: tensor<?xi32>, %g: tensor<?xf32>) -> (tensor<?xf32>, tensor<?x3xf32>, tensor<?xf32>, tensor<f32>, tensor<4x3xf32>, tensor<?x3xf32>, tensor<f32>, tensor<?x3xf32>) {
  %m = mbt.reduce_max %x {axes = array<i64: 1>} : (tensor<?x3xf32>) -> tensor<?xf32>
  %dm = mbt.reduce_max_grad %x, %m, %g {axes = array<i64: 1>} : (tensor<?x3xf32>, tensor<?xf32>, tensor<?xf32>) -> tensor<?x3xf32>
  %lse = mbt.logsumexp %x {axes = array<i64: 1>} : (tensor<?x3xf32>) -> tensor<?xf32>
  %n = mbt.count %x {axes = array<i64: 0, 1>} : (tensor<?x3xf32>) -> tensor<f32>
  %wt = mbt.transpose %w {permutation = array<i64: 1, 0>} : (tensor<3x4xf32>) -> tensor<4x3xf32>
  %t = mbt.one_hot %y {num_classes = 3 : i64} : (tensor<?xi32>) -> tensor<?x3xf32>
  %a = mbt.accuracy %x, %y {top_k = 2 : i64} : (tensor<?x3xf32>, tensor<?xi32>) -> tensor<f32>
  %sp = mbt.softplus %x : tensor<?x3xf32>
  return %m, %dm, %lse, %n, %wt, %t, %a, %sp : tensor<?xf32>, tensor<?x3xf32>, tensor<?xf32>, tensor<f32>, tensor<4x3xf32>, tensor<?x3xf32>, tensor<f32>, tensor<?x3xf32>
}

// CHECK: #[[PERM:map[0-9]*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-LABEL: func.func @f
// reduce_max: a maximumf reduction from -inf.
// CHECK: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: linalg.fill ins(%[[NEGINF]] : f32)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK:   arith.maximumf
// reduce_max_grad: count the ties, then share the adjoint among them.
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK:   arith.cmpf oeq
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// CHECK:   arith.divf
// CHECK:   arith.cmpf oeq
// CHECK:   arith.select
// logsumexp: max, an infinite max shifted by 0, sum of exp, log + shift.
// CHECK:   arith.maximumf
// CHECK:   math.absf
// CHECK:   math.exp
// CHECK:   math.log
// count: the product of the reduced sizes, read at run time.
// CHECK: arith.muli
// CHECK: arith.sitofp
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<f32>)
// transpose: a copy through the permuted map.
// CHECK: linalg.generic {indexing_maps = [#[[PERM]], #{{map[0-9]*}}]{{.*}} ins(%{{.*}} : tensor<3x4xf32>) outs(%{{.*}} : tensor<4x3xf32>)
// one_hot: the class index compared with the label.
// CHECK: linalg.index 1
// CHECK: arith.cmpi eq
// top-k accuracy: the label's rank (larger logits, or equal at a lower
// index) compared with k = 2.
// CHECK: arith.cmpf ogt
// CHECK: arith.cmpi slt
// CHECK: arith.ori
// CHECK: arith.cmpi slt, %{{.*}}, %c2_i32
// softplus: max(x, 0) + log1p(exp(-|x|)).
// CHECK: math.absf
// CHECK: math.exp
// CHECK: math.log1p
// CHECK: arith.maximumf
// CHECK-NOT: mbt.
