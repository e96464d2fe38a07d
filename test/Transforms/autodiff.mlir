// RUN: mbt-opt --mbt-autodiff %S/Inputs/mlp.mlir | FileCheck %s

// The train step holds the forward pass, the reverse sweep seeded with 1 at
// the loss, and one update per parameter, in parameter order.

// CHECK-LABEL: func.func @train_step
// CHECK-SAME: mbt.param = "w1"}
// CHECK-SAME: {mbt.state = "w1.exp_avg"}
// CHECK-SAME: {mbt.state = "w2.exp_avg_sq"}
// CHECK-SAME: %{{.*}}: tensor<5xf64> {mbt.hyper = "adam"}, %{{.*}}: tensor<f64> {mbt.step = "step"}
// CHECK: mbt.matmul
// CHECK: %[[LOGITS:[0-9]+]] = mbt.matmul
// CHECK: %[[LOSS:[0-9]+]] = mbt.cross_entropy %[[LOGITS]]
// CHECK: %[[SEED:[0-9]+]] = mbt.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[DL:[0-9]+]] = mbt.cross_entropy_grad %[[LOGITS]], %{{.*}}, %[[SEED]]
// The weight gradient of a matmul is x^T g:
// CHECK: mbt.matmul %{{.*}}, %[[DL]] {transpose_lhs}
// CHECK: mbt.relu_grad
// The bias gradient sums over the broadcast batch dimension:
// CHECK: mbt.unbroadcast %{{.*}} : (tensor<?x3xf32>) -> tensor<1x3xf32>
// CHECK-COUNT-3: mbt.update @adam
// CHECK-NOT: mbt.update
// CHECK: return
