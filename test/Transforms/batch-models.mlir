// RUN: mbt-opt --mbt-autodiff --mbt-batch-models %S/Inputs/mlp.mlir | FileCheck %s
// RUN: mbt-opt --mbt-batch-models=models=7 %S/Inputs/mlp.mlir | FileCheck %s --check-prefix=SEVEN

// Every value gains the leading model dimension (4 from the sweep):
// parameters, activations, per-model losses, hyperparameters and steps.

// CHECK-LABEL: func.func @mlp
// CHECK-SAME: tensor<4x4x3xf32>
// CHECK-SAME: tensor<4x?x4xf32> {mbt.input = "x"}
// CHECK-SAME: -> (tensor<4xf32>, tensor<4xf32>)
// CHECK-SAME: mbt.models = 4
// CHECK: mbt.matmul %{{.*}}, %{{.*}} : (tensor<4x?x4xf32>, tensor<4x4x3xf32>) -> tensor<4x?x3xf32>
// CHECK: mbt.reshape %{{.*}} : (tensor<4x3xf32>) -> tensor<4x1x3xf32>
// CHECK: mbt.relu %{{.*}} : tensor<4x?x3xf32>
// CHECK: mbt.cross_entropy %{{.*}}, %{{.*}} : (tensor<4x?x2xf32>, tensor<4x?xi32>) -> tensor<4xf32>

// CHECK-LABEL: func.func @train_step
// CHECK-SAME: tensor<4x5xf64> {mbt.hyper = "adam"}, %{{.*}}: tensor<4xf64> {mbt.step = "step"}
// CHECK: mbt.constant dense<1.000000e+00> : tensor<4xf32>
// CHECK: mbt.update @adam {{.*}} : (tensor<4x4x3xf32>, tensor<4x4x3xf32>, tensor<4x4x3xf32>, tensor<4x4x3xf32>, tensor<4x5xf64>, tensor<4xf64>)

// SEVEN: func.func @mlp(%{{.*}}: tensor<7x4x3xf32>
