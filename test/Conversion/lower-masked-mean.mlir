// RUN: mbt-opt --mbt-lower-to-linalg %s | FileCheck %s

// The count of real tokens per row (a reduction over T of token != 0, at
// least 1), then the masked sum over T divided by it; the adjoint spreads
// each row's gradient over its real positions, 0 at padding.

// CHECK-LABEL: func.func @pool
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}} ins(%arg1 : tensor<3x?x?xi32>) outs(%{{.*}} : tensor<3x?xf32>)
// CHECK:           %[[REAL:.*]] = arith.cmpi ne, %{{.*}}, %c0_i32 : i32
// CHECK:           arith.select %[[REAL]]
// CHECK:           arith.addf
// CHECK:         linalg.generic {{.*}} ins(%{{.*}} : tensor<3x?xf32>)
// CHECK:           arith.maximumf
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction", "parallel"]{{.*}} ins(%arg0, %arg1 : tensor<3x?x?x4xf32>, tensor<3x?x?xi32>) outs(%{{.*}} : tensor<3x?x4xf32>)
// CHECK:           arith.cmpi ne
// CHECK:           arith.select
// CHECK:           arith.addf
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<3x?x4xf32>, tensor<3x?xf32>) outs(%{{.*}} : tensor<3x?x4xf32>)
// CHECK:           arith.divf
func.func @pool(%h: tensor<3x?x?x4xf32>, %t: tensor<3x?x?xi32>) -> tensor<3x?x4xf32> {
  %p = mbt.masked_mean %h, %t : (tensor<3x?x?x4xf32>, tensor<3x?x?xi32>) -> tensor<3x?x4xf32>
  return %p : tensor<3x?x4xf32>
}

// CHECK-LABEL: func.func @adjoint
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel"]{{.*}} ins(%arg1, %arg2, %{{.*}} : tensor<3x?x?xi32>, tensor<3x?x4xf32>, tensor<3x?xf32>) outs(%{{.*}} : tensor<3x?x?x4xf32>)
// CHECK:           %[[SHARE:.*]] = arith.divf
// CHECK:           %[[REAL:.*]] = arith.cmpi ne
// CHECK:           arith.select %[[REAL]], %[[SHARE]], %{{.*}} : f32
func.func @adjoint(%h: tensor<3x?x?x4xf32>, %t: tensor<3x?x?xi32>, %g: tensor<3x?x4xf32>) -> tensor<3x?x?x4xf32> {
  %d = mbt.masked_mean_grad %t, %g like %h : (tensor<3x?x?xi32>, tensor<3x?x4xf32>, tensor<3x?x?x4xf32>) -> tensor<3x?x?x4xf32>
  return %d : tensor<3x?x?x4xf32>
}
