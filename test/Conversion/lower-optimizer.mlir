// RUN: mbt-opt --mbt-lower-to-linalg %s | FileCheck %s
// RUN: mbt-opt --mbt-lower-to-linalg --mbt-drop-metadata %s | FileCheck %s --check-prefix=DROPPED
// RUN: mbt-opt --mbt-lower-to-linalg=scalars-per-element %s | FileCheck %s --check-prefix=ONE

// A fused update becomes one linalg.generic over the models that runs the
// rule's scalars region, and one over [M, P] that runs its elements
// region in place on the parameters and the state slots. With a decay
// mask, the scalars run a second time with weight_decay = 0, and each
// element picks the set of its column, for the scalars that depend on the
// weight decay only. A model whose step is 0 keeps its parameters and
// slots: every result is selected against the old value.

mbt.optimizer @sgd attributes {hyper = ["lr", "momentum", "weight_decay"], slots = ["momentum_buffer"]} scalars {
^bb0(%lr: f64, %momentum: f64, %wd: f64, %step: f64):
  %lr32 = arith.truncf %lr : f64 to f32
  %momentum32 = arith.truncf %momentum : f64 to f32
  %wd32 = arith.truncf %wd : f64 to f32
  mbt.yield %lr32, %momentum32, %wd32 : f32, f32, f32
} elements {
^bb0(%g: f32, %p: f32, %buf: f32, %lr: f32, %momentum: f32, %wd: f32):
  %decay = arith.mulf %wd, %p : f32
  %d = arith.addf %g, %decay : f32
  %kept = arith.mulf %momentum, %buf : f32
  %buf1 = arith.addf %kept, %d : f32
  %delta = arith.mulf %lr, %buf1 : f32
  %p1 = arith.subf %p, %delta : f32
  mbt.yield %p1, %buf1 : f32, f32
}

// The rule stays until the metadata is dropped.
// CHECK:       mbt.optimizer @sgd
// CHECK-LABEL: func.func @update
// The scalars, twice (the second with weight_decay = 0).
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel"]
// CHECK:           arith.truncf
// CHECK:           linalg.yield {{.*}} : f32, f32, f32
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel"]
// CHECK:           %[[NOWD:.*]] = arith.constant 0.000000e+00 : f64
// CHECK:           arith.truncf %[[NOWD]]
// CHECK:           linalg.yield {{.*}} : f32, f32, f32
// The one loop nest: only the weight decay scalar is chosen per column.
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// CHECK-NEXT:    ^bb0(%[[G:.*]]: f32, %[[LR:.*]]: f32, %[[MOM:.*]]: f32, %[[WD:.*]]: f32, %[[WD0:.*]]: f32, %[[STEP:.*]]: f64, %[[MASK:.*]]: f32, %[[P:.*]]: f32, %[[BUF:.*]]: f32):
// CHECK:           %[[DECAYS:.*]] = arith.cmpf one, %[[MASK]]
// CHECK:           %[[W:.*]] = arith.select %[[DECAYS]], %[[WD]], %[[WD0]] : f32
// CHECK:           arith.mulf %[[W]], %[[P]] : f32
// CHECK:           %[[NEWP:.*]] = arith.subf %[[P]], %{{.*}} : f32
// CHECK:           %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// CHECK:           %[[STEPS:.*]] = arith.cmpf one, %[[STEP]], %[[ZERO]] : f64
// CHECK:           %[[P1:.*]] = arith.select %[[STEPS]], %[[NEWP]], %[[P]] : f32
// CHECK:           %[[BUF1:.*]] = arith.select %[[STEPS]], %{{.*}}, %[[BUF]] : f32
// CHECK:           linalg.yield %[[P1]], %[[BUF1]] : f32, f32
// CHECK-NOT:     mbt.fused_update
// DROPPED-NOT:   mbt.optimizer

// With scalars-per-element (the CUDA target), the update is the one loop
// nest: each element reads its model's hyperparameters (one input per
// column of the hyper table, and the step) and runs the scalars region,
// twice with a decay mask, before the elements region.
// ONE-LABEL: func.func @update
// ONE-NOT:     iterator_types = ["parallel"]
// ONE:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]} ins(%{{.*}}, %[[H:[a-z0-9]+]], %[[H]], %[[H]], %{{.*}}, %{{.*}} : tensor<2x6xf32>, tensor<2x3xf64>, tensor<2x3xf64>, tensor<2x3xf64>, tensor<2xf64>, tensor<6xf32>)
// ONE-NEXT:    ^bb0(%[[G:.*]]: f32, %[[LR:.*]]: f64, %[[MOM:.*]]: f64, %[[WD:.*]]: f64, %[[T:.*]]: f64, %[[MASK:.*]]: f32, %[[P:.*]]: f32, %[[BUF:.*]]: f32):
// ONE:           arith.truncf %[[LR]]
// ONE:           %[[WD32:.*]] = arith.truncf %[[WD]]
// ONE:           %[[WD0:.*]] = arith.truncf %cst{{.*}} : f64 to f32
// ONE:           %[[DECAYS:.*]] = arith.cmpf one, %[[MASK]]
// ONE:           %[[W:.*]] = arith.select %[[DECAYS]], %[[WD32]], %[[WD0]] : f32
// ONE:           arith.mulf %[[W]], %[[P]] : f32
// ONE:           arith.cmpf one, %[[T]]
// ONE:           linalg.yield %{{.*}}, %{{.*}} : f32, f32
// ONE-NOT:     linalg.generic
func.func @update(%p: tensor<2x6xf32>, %g: tensor<2x6xf32>, %s: tensor<2x6xf32>,
                  %h: tensor<2x3xf64>, %t: tensor<2xf64>, %mask: tensor<6xf32>)
    -> (tensor<2x6xf32>, tensor<2x6xf32>) {
  %np, %ns = mbt.fused_update @sgd %p, %g state(%s : tensor<2x6xf32>) hyper(%h) step(%t) decay_mask(%mask : tensor<6xf32>)
      : tensor<2x6xf32>, tensor<2x3xf64>, tensor<2xf64>
  return %np, %ns : tensor<2x6xf32>, tensor<2x6xf32>
}
