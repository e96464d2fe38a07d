// RUN: mbt-opt --mbt-lower-to-linalg %s | FileCheck %s

// mbt.guard_step becomes a per-model integer OR over the gradient row of
// "exponent all ones" (inf or NaN), tested on the bits so the reduction
// vectorizes, then loops over the models that keep the step where the row
// and the loss are finite and the step is not 0 (0 otherwise), and report
// the loss there (NaN otherwise).

// CHECK-LABEL: func.func @guard
// CHECK:         %[[ZEROS:.*]] = linalg.fill ins(%{{.*}} : i32) outs(%{{.*}} : tensor<4xi32>)
// CHECK:         %[[BAD:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<4x10xf32>) outs(%[[ZEROS]] : tensor<4xi32>)
// CHECK:           %[[BITS:.*]] = arith.bitcast %{{.*}} : f32 to i32
// CHECK:           %[[EXP:.*]] = arith.andi %[[BITS]], %[[MASK:.*]] : i32
// CHECK:           arith.cmpi eq, %[[EXP]], %[[MASK]] : i32
// CHECK:           arith.extui
// CHECK:           arith.ori
// The step, or 0, in a loop of its own (so that elementwise fusion can
// pull it into the fused update, its one use) ...
// CHECK:         %[[STEP:.*]] = linalg.generic {{.*}}iterator_types = ["parallel"]} ins(%{{.*}}, %[[BAD]], %{{.*}} : tensor<4xf64>, tensor<4xi32>, tensor<4xf32>) outs(%{{.*}} : tensor<4xf64>)
// CHECK:           arith.bitcast %{{.*}} : f32 to i32
// CHECK:           %[[ANY:.*]] = arith.ori %{{.*}}, %{{.*}} : i32
// CHECK:           %[[FINITE:.*]] = arith.cmpi eq, %[[ANY]], %{{.*}} : i32
// CHECK:           %[[NONZERO:.*]] = arith.cmpf one, %{{.*}}, %{{.*}} : f64
// CHECK:           %[[STEPS:.*]] = arith.andi %[[FINITE]], %[[NONZERO]] : i1
// CHECK:           %[[KEPT:.*]] = arith.select %[[STEPS]], %{{.*}}, %{{.*}} : f64
// CHECK:           linalg.yield %[[KEPT]] : f64
// ... and the reported loss, NaN where the model does not step.
// CHECK:         %[[LOSS:.*]] = linalg.generic {{.*}}outs(%{{.*}} : tensor<4xf32>)
// CHECK:           %[[NAN:.*]] = arith.constant 0x7FC00000 : f32
// CHECK:           arith.select %{{.*}}, %{{.*}}, %[[NAN]] : f32
// CHECK:         return %[[STEP]], %[[LOSS]]
// CHECK-NOT:     mbt.guard_step
func.func @guard(%t: tensor<4xf64>, %g: tensor<4x10xf32>, %l: tensor<4xf32>)
    -> (tensor<4xf64>, tensor<4xf32>) {
  %s, %r = mbt.guard_step %t, %g, %l : tensor<4xf64>, tensor<4x10xf32>, tensor<4xf32>
  return %s, %r : tensor<4xf64>, tensor<4xf32>
}

// An f64 model tests the 11 exponent bits of a double.
// CHECK-LABEL: func.func @guard_f64
// CHECK:         arith.bitcast %{{.*}} : f64 to i64
// CHECK:         arith.constant 9218868437227405312 : i64
func.func @guard_f64(%t: tensor<2xf64>, %g: tensor<2x3xf64>, %l: tensor<2xf64>)
    -> (tensor<2xf64>, tensor<2xf64>) {
  %s, %r = mbt.guard_step %t, %g, %l : tensor<2xf64>, tensor<2x3xf64>, tensor<2xf64>
  return %s, %r : tensor<2xf64>, tensor<2xf64>
}
