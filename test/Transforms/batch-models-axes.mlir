// RUN: mbt-opt --mbt-autodiff --mbt-batch-models %S/Inputs/reductions.mlir | FileCheck %s

// Ops with axes or permutations keep them on the same per-model dims once
// the model dimension is in front: axes shift by one, permutations keep 0
// first. Data-only work (one_hot of the labels) gets no adjoint.

// CHECK-LABEL: func.func @red
// CHECK: mbt.transpose %{{.*}} {permutation = array<i64: 0, 2, 1>} : (tensor<4x3x4xf32>) -> tensor<4x4x3xf32>
// CHECK: mbt.reduce_max %{{.*}} {axes = array<i64: 2>} : (tensor<4x?x3xf32>) -> tensor<4x?xf32>
// CHECK: mbt.logsumexp %{{.*}} {axes = array<i64: 2>} : (tensor<4x?x3xf32>) -> tensor<4x?xf32>
// CHECK: mbt.one_hot %{{.*}} {num_classes = 3 : i64} : (tensor<4x?xi32>) -> tensor<4x?x3xf32>
// CHECK: mbt.reduce_sum %{{.*}} {axes = array<i64: 1, 2>} : (tensor<4x?x3xf32>) -> tensor<4xf32>
// CHECK: mbt.count %{{.*}} {axes = array<i64: 1, 2>} : (tensor<4x?x3xf32>) -> tensor<4xf32>
// CHECK: mbt.accuracy %{{.*}}, %{{.*}} {top_k = 2 : i64} : (tensor<4x?x3xf32>, tensor<4x?xi32>) -> tensor<4xf32>

// The reverse sweep: broadcasts back over the reduced dims, softplus'
// sigmoid, logsumexp's softmax, reduce_max's shared adjoint, and the
// inverse transpose of the weight's gradient.
// CHECK-LABEL: func.func @train_step
// CHECK: mbt.broadcast %{{.*}} like %{{.*}} {dims = array<i64: 1, 2>} : (tensor<4xf32>, tensor<4x?x3xf32>) -> tensor<4x?x3xf32>
// CHECK: mbt.sigmoid %{{.*}} : tensor<4x?x3xf32>
// CHECK: %[[LSE:.*]] = mbt.broadcast %{{.*}} like %{{.*}} {dims = array<i64: 2>} : (tensor<4x?xf32>, tensor<4x?x3xf32>)
// CHECK: %[[SHIFTED:.*]] = mbt.sub %{{.*}}, %[[LSE]]
// CHECK: mbt.exp %[[SHIFTED]] : tensor<4x?x3xf32>
// CHECK: mbt.reduce_max_grad %{{.*}}, %{{.*}}, %{{.*}} {axes = array<i64: 2>} : (tensor<4x?x3xf32>, tensor<4x?xf32>, tensor<4x?xf32>) -> tensor<4x?x3xf32>
// CHECK: %[[GW:.*]] = mbt.matmul %{{.*}}, %{{.*}} {transpose_lhs} : (tensor<4x?x4xf32>, tensor<4x?x3xf32>) -> tensor<4x4x3xf32>
// CHECK: %[[GWT:.*]] = mbt.transpose %[[GW]] {permutation = array<i64: 0, 2, 1>} : (tensor<4x4x3xf32>) -> tensor<4x3x4xf32>
// CHECK: mbt.update @sgd %{{.*}}, %[[GWT]]
// CHECK-NOT: one_hot
// CHECK: return
