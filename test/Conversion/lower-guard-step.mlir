// RUN: mbt-opt --mbt-lower-to-linalg %s | FileCheck %s

// mbt.guard_step becomes a per-model integer OR over the gradient row of
// "exponent all ones" (inf or NaN), tested on the bits so the reduction
// vectorizes, then one loop over the models that keeps the step where the
// row and the loss are finite and the step is not 0 (0 otherwise), and
// reports the loss there (NaN otherwise).

// CHECK-LABEL: func.func @guard
// CHECK:         %[[ZEROS:.*]] = linalg.fill ins(%{{.*}} : i32) outs(%{{.*}} : tensor<4xi32>)
// CHECK:         %[[BAD:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<4x10xf32>) outs(%[[ZEROS]] : tensor<4xi32>)
// CHECK:           %[[BITS:.*]] = arith.bitcast %{{.*}} : f32 to i32
// CHECK:           %[[EXP:.*]] = arith.andi %[[BITS]], %[[MASK:.*]] : i32
// CHECK:           arith.cmpi eq, %[[EXP]], %[[MASK]] : i32
// CHECK:           arith.extui
// CHECK:           arith.ori
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel"]} ins(%{{.*}}, %[[BAD]], %{{.*}} : tensor<4xf64>, tensor<4xi32>, tensor<4xf32>) outs(%{{.*}}, %{{.*}} : tensor<4xf64>, tensor<4xf32>)
// CHECK:           arith.bitcast %{{.*}} : f32 to i32
// CHECK:           %[[ANY:.*]] = arith.ori %{{.*}}, %{{.*}} : i32
// CHECK:           %[[FINITE:.*]] = arith.cmpi eq, %[[ANY]], %{{.*}} : i32
// CHECK:           %[[NONZERO:.*]] = arith.cmpf one, %{{.*}}, %{{.*}} : f64
// CHECK:           %[[STEPS:.*]] = arith.andi %[[FINITE]], %[[NONZERO]] : i1
// CHECK:           %[[STEP:.*]] = arith.select %[[STEPS]], %{{.*}}, %{{.*}} : f64
// CHECK:           %[[LOSS:.*]] = arith.select %[[STEPS]], %{{.*}}, %{{.*}} : f32
// CHECK:           linalg.yield %[[STEP]], %[[LOSS]] : f64, f32
// CHECK-NOT:     mbt.guard_step
func.func @guard(%t: tensor<4xf64>, %g: tensor<4x10xf32>, %l: tensor<4xf32>)
    -> (tensor<4xf64>, tensor<4xf32>) {
  %s, %r = mbt.guard_step %t, %g, %l : tensor<4xf64>, tensor<4x10xf32>, tensor<4xf32>
  return %s, %r : tensor<4xf64>, tensor<4xf32>
}

// An f64 model tests the 11 exponent bits of a double.
// CHECK-LABEL: func.func @guard_f64
// CHECK:         arith.constant 9218868437227405312 : i64
// CHECK:         arith.bitcast %{{.*}} : f64 to i64
func.func @guard_f64(%t: tensor<2xf64>, %g: tensor<2x3xf64>, %l: tensor<2xf64>)
    -> (tensor<2xf64>, tensor<2xf64>) {
  %s, %r = mbt.guard_step %t, %g, %l : tensor<2xf64>, tensor<2x3xf64>, tensor<2xf64>
  return %s, %r : tensor<2xf64>, tensor<2xf64>
}
