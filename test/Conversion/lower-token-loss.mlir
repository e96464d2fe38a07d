// RUN: mbt-opt --mbt-lower-to-linalg %s | FileCheck %s

// Per-token cross-entropy: the row statistics of cross_entropy over the
// vocabulary (max, sum of exp, the target's logit) for every position,
// then a sum over B and T that skips padded targets (target 0), divided by
// the step's real targets (at least 1). The adjoint is softmax - onehot
// scaled by the loss's adjoint over that count, 0 at padded targets; the
// accuracy counts arg-max hits at real targets over the same count.

// CHECK-LABEL: func.func @loss
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]{{.*}} ins(%arg0 : tensor<3x?x?x7xf32>) outs(%{{.*}} : tensor<3x?x?xf32>)
// CHECK:           arith.maximumf
// CHECK:         math.exp
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]{{.*}} ins(%arg0, %arg1 : tensor<3x?x?x7xf32>, tensor<3x?x?xi32>)
// CHECK:           arith.cmpi eq
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "reduction", "reduction"]{{.*}} ins(%{{.*}}, %{{.*}}, %{{.*}}, %arg1 : tensor<3x?x?xf32>, tensor<3x?x?xf32>, tensor<3x?x?xf32>, tensor<3x?x?xi32>) outs(%{{.*}} : tensor<3xf32>)
// CHECK:           math.log
// CHECK:           %[[REAL:.*]] = arith.cmpi ne, %{{.*}}, %c0_i32 : i32
// CHECK:           arith.select %[[REAL]]
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "reduction", "reduction"]{{.*}} ins(%arg1 : tensor<3x?x?xi32>) outs(%{{.*}} : tensor<3xf32>)
// CHECK:           arith.cmpi ne
// CHECK:         linalg.generic {{.*}} ins(%{{.*}} : tensor<3xf32>)
// CHECK:           arith.maximumf
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<3xf32>, tensor<3xf32>)
// CHECK:           arith.divf
func.func @loss(%l: tensor<3x?x?x7xf32>, %y: tensor<3x?x?xi32>) -> tensor<3xf32> {
  %r = mbt.token_cross_entropy %l, %y : (tensor<3x?x?x7xf32>, tensor<3x?x?xi32>) -> tensor<3xf32>
  return %r : tensor<3xf32>
}

// CHECK-LABEL: func.func @adjoint
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "reduction", "reduction"]{{.*}} ins(%arg1 : tensor<3x?x?xi32>)
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel"]{{.*}} ins(%arg0, %{{.*}}, %{{.*}}, %arg1, %arg2, %{{.*}} : tensor<3x?x?x7xf32>, tensor<3x?x?xf32>, tensor<3x?x?xf32>, tensor<3x?x?xi32>, tensor<3xf32>, tensor<3xf32>)
// CHECK:           %[[SCALE:.*]] = arith.divf %in_{{.*}}, %in_{{.*}} : f32
// CHECK:           math.exp
// CHECK:           arith.cmpi eq
// CHECK:           %[[D:.*]] = arith.mulf %{{.*}}, %[[SCALE]] : f32
// CHECK:           %[[REAL:.*]] = arith.cmpi ne
// CHECK:           arith.select %[[REAL]], %[[D]], %{{.*}} : f32
func.func @adjoint(%l: tensor<3x?x?x7xf32>, %y: tensor<3x?x?xi32>, %g: tensor<3xf32>) -> tensor<3x?x?x7xf32> {
  %r = mbt.token_cross_entropy_grad %l, %y, %g : (tensor<3x?x?x7xf32>, tensor<3x?x?xi32>, tensor<3xf32>) -> tensor<3x?x?x7xf32>
  return %r : tensor<3x?x?x7xf32>
}

// The arg-max in two passes that vectorize: the row's maximum, then the
// least index whose logit is that maximum or a NaN (7, past every class,
// for the others).
// CHECK-LABEL: func.func @accuracy
// CHECK:         %[[MAX:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// CHECK:           arith.maximumf
// CHECK:         %[[NONE:.*]] = linalg.fill ins(%c7_i32 : i32)
// CHECK:         %[[ARGMAX:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]{{.*}} ins(%arg0, %[[MAX]] : {{.*}}) outs(%[[NONE]] : tensor<3x?x?xi32>)
// CHECK:           %[[EQ:.*]] = arith.cmpf oeq
// CHECK:           %[[NAN:.*]] = arith.cmpf uno
// CHECK:           %[[HIT:.*]] = arith.ori %[[EQ]], %[[NAN]] : i1
// CHECK:           %[[I:.*]] = arith.select %[[HIT]], %{{.*}}, %c7_i32{{.*}} : i32
// CHECK:           arith.minsi %{{.*}}, %[[I]] : i32
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "reduction", "reduction"]{{.*}} ins(%[[ARGMAX]], %arg1, %arg1
// CHECK:           arith.cmpi eq
// CHECK:           arith.cmpi ne
// CHECK:         arith.divf
func.func @accuracy(%l: tensor<3x?x?x7xf32>, %y: tensor<3x?x?xi32>) -> tensor<3xf32> {
  %r = mbt.token_accuracy %l, %y : (tensor<3x?x?x7xf32>, tensor<3x?x?xi32>) -> tensor<3xf32>
  return %r : tensor<3xf32>
}
