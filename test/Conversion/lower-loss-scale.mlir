// RUN: mbt-opt --mbt-lower-to-linalg %s | FileCheck %s

// f16's loss scale in linalg: the unscaling multiplies each row by the
// reciprocal of its scale, taken in f64 and rounded to f32 (GradScaler's
// `_scale.double().reciprocal().float()`); the scale's update is one loop
// over the models; a guard that skips overflows reports NaN only for a
// loss that is not finite.

// CHECK-LABEL: func.func @unscale
// CHECK:         %[[INV:.*]] = linalg.generic {{.*}}iterator_types = ["parallel"]} ins(%arg1 : tensor<4xf32>)
// CHECK:           %[[WIDE:.*]] = arith.extf %{{.*}} : f32 to f64
// CHECK:           %[[R:.*]] = arith.divf %{{.*}}, %[[WIDE]] : f64
// CHECK:           arith.truncf %[[R]] : f64 to f32
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]} ins(%arg0, %[[INV]] : tensor<4x10xf32>, tensor<4xf32>)
// CHECK:           arith.mulf
func.func @unscale(%grads: tensor<4x10xf32>, %scale: tensor<4xf32>) -> tensor<4x10xf32> {
  %g = mbt.unscale_grads %grads, %scale : tensor<4x10xf32>, tensor<4xf32>
  return %g : tensor<4x10xf32>
}

// CHECK-LABEL: func.func @update
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel"]} ins(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5 : {{.*}}) outs({{.*}} : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf64>)
// A model trains if it is asked to and its reported loss is not NaN.
// CHECK:           %[[REPORTED:.*]] = arith.cmpf ord, %[[LOSS:.*]], %[[LOSS]] : f32
// CHECK:           %[[ASKED:.*]] = arith.cmpf one, %[[STEP:.*]], %{{.*}} : f64
// CHECK:           %[[TRAINS:.*]] = arith.andi %[[ASKED]], %[[REPORTED]] : i1
// CHECK:           %[[STEPPED:.*]] = arith.cmpf one, %[[GUARDED:.*]], %{{.*}} : f64
// CHECK:           %[[COUNTED:.*]] = arith.addf %[[GOOD:.*]], %{{.*}} : f32
// CHECK:           %[[INTERVAL:.*]] = arith.constant 2.000000e+03 : f32
// CHECK:           %[[AT:.*]] = arith.cmpf oeq, %[[COUNTED]], %[[INTERVAL]] : f32
// CHECK:           %[[GROWTH:.*]] = arith.constant 2.000000e+00 : f32
// CHECK:           %[[GROWN:.*]] = arith.mulf %[[SCALE:.*]], %[[GROWTH]] : f32
// CHECK:           %[[BACKOFF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK:           %[[BACKED:.*]] = arith.mulf %[[SCALE]], %[[BACKOFF]] : f32
// The optimizer's step: the runtime's, less the steps skipped before.
// CHECK:           %[[SKIPPED:.*]] = arith.extf %{{.*}} : f32 to f64
// CHECK:           %[[OPT:.*]] = arith.subf %[[GUARDED]], %[[SKIPPED]] : f64
// CHECK:           arith.select %[[STEPPED]], %[[OPT]], %{{.*}} : f64
func.func @update(%step: tensor<4xf64>, %stepped: tensor<4xf64>, %loss: tensor<4xf32>, %scale: tensor<4xf32>, %good: tensor<4xf32>, %skipped: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf64>) {
  %0:4 = mbt.update_loss_scale %step, %stepped, %loss, %scale, %good, %skipped {growth_factor = 2.0 : f64, backoff_factor = 0.5 : f64, growth_interval = 2000 : i64} : tensor<4xf64>, tensor<4xf32>
  return %0#0, %0#1, %0#2, %0#3 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf64>
}

// The step loop still needs finite gradients; the loss loop does not read
// them.
// CHECK-LABEL: func.func @guard
// CHECK:         %[[BAD:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]}
// CHECK:         linalg.generic {{.*}} ins(%arg0, %[[BAD]], %arg2 : tensor<4xf64>, tensor<4xi32>, tensor<4xf32>)
// CHECK:           arith.ori %{{.*}}, %{{.*}} : i32
// CHECK:           linalg.yield %{{.*}} : f64
// CHECK:         linalg.generic {{.*}} ins(%arg0, %arg2 : tensor<4xf64>, tensor<4xf32>)
// CHECK-NOT:       arith.ori
// CHECK:           %[[LOSSBAD:.*]] = arith.extui
// CHECK:           arith.cmpi eq, %[[LOSSBAD]], %{{.*}} : i32
// CHECK:           linalg.yield %{{.*}} : f32
func.func @guard(%step: tensor<4xf64>, %grads: tensor<4x10xf32>, %loss: tensor<4xf32>) -> (tensor<4xf64>, tensor<4xf32>) {
  %s, %l = mbt.guard_step %step, %grads, %loss {skip_overflow} : tensor<4xf64>, tensor<4x10xf32>, tensor<4xf32>
  return %s, %l : tensor<4xf64>, tensor<4xf32>
}
