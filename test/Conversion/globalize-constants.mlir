// RUN: mbt-opt --mbt-globalize-constants %s | FileCheck %s
// RUN: mbt-opt --mbt-globalize-constants --one-shot-bufferize="bufferize-function-boundaries" %s | FileCheck %s --check-prefix=BUF

// Each tensor constant gets its global in program order (each new one goes
// to the front of the module), so equal-typed constants are numbered by
// their place in the module, not by One-Shot Bufferize's function order.
// CHECK:       memref.global "private" constant @__constant_3xf32_0 : memref<3xf32> = dense<[4.000000e+00, 5.000000e+00, 6.000000e+00]> {alignment = 64 : i64}
// CHECK-NEXT:  memref.global "private" constant @__constant_3xf32 : memref<3xf32> = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> {alignment = 64 : i64}
// CHECK-LABEL: func.func @first
// CHECK:         arith.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]>
// CHECK-LABEL: func.func @second
// CHECK:         arith.constant dense<[4.000000e+00, 5.000000e+00, 6.000000e+00]>
// CHECK-NOT:   memref.global

// One-Shot Bufferize reuses those globals and creates none of its own.
// BUF-COUNT-2: memref.global
// BUF-NOT:     memref.global
// BUF-LABEL:   func.func @first
// BUF:           memref.get_global @__constant_3xf32 :
// BUF-LABEL:   func.func @second
// BUF:           memref.get_global @__constant_3xf32_0 :
// BUF-LABEL:   func.func @scalar
// BUF-NOT:       memref.get_global
func.func @first() -> tensor<3xf32> {
  %c = arith.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  return %c : tensor<3xf32>
}
func.func @second() -> tensor<3xf32> {
  %c = arith.constant dense<[4.0, 5.0, 6.0]> : tensor<3xf32>
  return %c : tensor<3xf32>
}
// A scalar constant is no buffer.
func.func @scalar() -> f32 {
  %c = arith.constant 1.0 : f32
  return %c : f32
}
