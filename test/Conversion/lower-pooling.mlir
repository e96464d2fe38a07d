// RUN: mbt-opt --mbt-lower-to-linalg %s | FileCheck %s

// Pooling: one gather over the result whose body reads the window's taps
// (unrolled); max pooling also writes where each maximum was (a later tap
// wins only when larger or NaN, as PyTorch's CPU kernel). The adjoints
// gather, for each input element, the windows that read it.

// CHECK-LABEL: func.func @max_pool
// CHECK:         %{{.*}}:2 = linalg.generic {{.*}}outs(%{{.*}}, %{{.*}} : tensor<?x3x4x4xf32>, tensor<?x3x4x4xi32>)
// CHECK:           arith.constant 0xFF800000 : f32
// CHECK-COUNT-4:   arith.cmpf ogt
// CHECK:           linalg.yield %{{.*}}, %{{.*}} : f32, i32
// Windows that do not overlap (kernel 2, stride 2): the adjoint reads the
// one window of each element, (ih / 2, iw / 2), and compares its index.
// CHECK:         linalg.generic {{.*}}outs(%{{.*}} : tensor<?x3x8x8xf32>)
// CHECK:           arith.divui
// CHECK:           arith.cmpi eq
// CHECK-NOT:       arith.cmpi eq
// CHECK:           linalg.yield
func.func @max_pool(%x: tensor<?x3x8x8xf32>, %dy: tensor<?x3x4x4xf32>) -> (tensor<?x3x4x4xf32>, tensor<?x3x8x8xf32>) {
  %y, %i = mbt.max_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>} : (tensor<?x3x8x8xf32>) -> (tensor<?x3x4x4xf32>, tensor<?x3x4x4xi32>)
  %dx = mbt.max_pool2d_grad %dy, %i like %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>} : tensor<?x3x4x4xf32>, tensor<?x3x4x4xi32>, tensor<?x3x8x8xf32>
  return %y, %dx : tensor<?x3x4x4xf32>, tensor<?x3x8x8xf32>
}

// Overlapping windows (kernel 3, stride 2, padding 1): the adjoint visits
// every tap's window and compares each window's index with the element's.
// CHECK-LABEL: func.func @max_pool_overlapping
// CHECK:         linalg.generic {{.*}}outs(%{{.*}} : tensor<?x3x8x8xf32>)
// CHECK-COUNT-9:   arith.cmpi eq
func.func @max_pool_overlapping(%x: tensor<?x3x8x8xf32>, %dy: tensor<?x3x4x4xf32>, %i: tensor<?x3x4x4xi32>) -> tensor<?x3x8x8xf32> {
  %dx = mbt.max_pool2d_grad %dy, %i like %x {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>} : tensor<?x3x4x4xf32>, tensor<?x3x4x4xi32>, tensor<?x3x8x8xf32>
  return %dx : tensor<?x3x8x8xf32>
}

// Average pooling divides by the window's size, padding included.
// CHECK-LABEL: func.func @avg_pool
// CHECK:         linalg.generic {{.*}}outs(%{{.*}} : tensor<?x3x4x4xf32>)
// CHECK-COUNT-9:   tensor.extract
// CHECK:           arith.divf %{{.*}}, %{{.*}} : f32
// CHECK:         linalg.generic {{.*}}outs(%{{.*}} : tensor<?x3x8x8xf32>)
func.func @avg_pool(%x: tensor<?x3x8x8xf32>, %dy: tensor<?x3x4x4xf32>) -> (tensor<?x3x4x4xf32>, tensor<?x3x8x8xf32>) {
  %y = mbt.avg_pool2d %x {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>} : (tensor<?x3x8x8xf32>) -> tensor<?x3x4x4xf32>
  %dx = mbt.avg_pool2d_grad %dy like %x {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>} : tensor<?x3x4x4xf32>, tensor<?x3x8x8xf32>
  return %y, %dx : tensor<?x3x4x4xf32>, tensor<?x3x8x8xf32>
}
