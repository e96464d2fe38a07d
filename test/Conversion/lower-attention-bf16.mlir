// RUN: mbt-opt --mbt-lower-to-linalg %s | FileCheck %s
// RUN: mbt-opt --mbt-lower-to-linalg --canonicalize --mbt-fuse-elementwise %s | FileCheck %s --check-prefix=FUSED

// With format = bf16 (precision = bf16), attention rounds every product's
// operands and result: q, k and v, the scores (where the masking reads
// them), the weights (where the normalization writes them), the output (6
// roundings); its adjoint rounds q, k, v and the incoming gradient, the
// recomputed scores and weights, dp where each of its two readers reads it,
// ds where it is written, and the three results (12). An operand that is
// an mbt.round_to to the format already is not rounded again. Without a
// format, nothing is rounded.

// CHECK-LABEL: func.func @plain(
// CHECK-NOT:     arith.shrui
// CHECK-LABEL: func.func @rounded(
// CHECK-COUNT-6: arith.shrui
// CHECK-NOT:     arith.shrui
// CHECK-LABEL: func.func @rounded_grad(
// CHECK-COUNT-12: arith.shrui
// CHECK-NOT:     arith.shrui
// CHECK:         return
// CHECK-LABEL: func.func @rounded_inputs(
// CHECK-COUNT-4: arith.shrui
// CHECK-NOT:     arith.shrui
// CHECK:         return

// After fusion, the [T, T] values are rounded inside the generics that
// read or write them, never by a pass of their own: the normalization
// writes the weights and their rounding (the product with the gradient
// reads the rounded ones, the row dots and ds the exact ones). The [T, D]
// operands and results are rounded over [T, D] (an inner loop of D, not
// of the head size), fusion leaving the heads' reshapes where they are.
// FUSED-LABEL: func.func @rounded_grad(
// FUSED:         %[[Q:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<?x?x8xf32>) outs(%{{.*}} : tensor<?x?x8xf32>)
// FUSED:           arith.shrui
// FUSED:         tensor.expand_shape %[[Q]] {{\[\[}}0], [1], [2, 3]]
// FUSED:         %[[P:.*]]:2 = linalg.generic {{.*}} outs(%{{.*}}, %{{.*}} : tensor<?x2x?x?xf32>, tensor<?x2x?x?xf32>)
// FUSED:           arith.divf
// FUSED:           arith.shrui
// FUSED:         linalg.generic {{.*}} ins(%[[P]]#1, %{{.*}} : tensor<?x2x?x?xf32>, tensor<?x?x2x4xf32>)
// FUSED:         %[[DV:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0], [1], [2, 3]] : tensor<?x?x2x4xf32> into tensor<?x?x8xf32>
// FUSED:         linalg.generic {{.*}} ins(%[[DV]] : tensor<?x?x8xf32>)
// FUSED:         linalg.generic {{.*}} ins(%[[P]]#0, %{{.*}} : tensor<?x2x?x?xf32>, tensor<?x2x?x?xf32>)
// FUSED:         linalg.generic {{.*}} ins(%[[P]]#0, %{{.*}}, %{{.*}} : tensor<?x2x?x?xf32>, tensor<?x2x?x?xf32>, tensor<?x2x?xf32>)
// FUSED-NOT:     linalg.generic {{.*}} outs(%{{.*}} : tensor<?x2x?x?xf32>)
// FUSED:         return
func.func @plain(%q: tensor<?x?x8xf32>, %t: tensor<?x?xi32>) -> tensor<?x?x8xf32> {
  %o = mbt.attention %q, %q, %q, %t {heads = 2 : i64, causal = true} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?xi32>) -> tensor<?x?x8xf32>
  return %o : tensor<?x?x8xf32>
}
func.func @rounded(%q: tensor<?x?x8xf32>, %t: tensor<?x?xi32>) -> tensor<?x?x8xf32> {
  %o = mbt.attention %q, %q, %q, %t {heads = 2 : i64, causal = true, format = bf16} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?xi32>) -> tensor<?x?x8xf32>
  return %o : tensor<?x?x8xf32>
}
func.func @rounded_grad(%q: tensor<?x?x8xf32>, %t: tensor<?x?xi32>, %g: tensor<?x?x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>) {
  %0:3 = mbt.attention_grad %q, %q, %q, %t, %g {heads = 2 : i64, causal = true, format = bf16} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?xi32>, tensor<?x?x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>)
  return %0#0, %0#1, %0#2 : tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>
}
func.func @rounded_inputs(%x: tensor<?x?x8xf32>, %t: tensor<?x?xi32>) -> tensor<?x?x8xf32> {
  %q = mbt.round_to %x {format = bf16} : tensor<?x?x8xf32>
  %o = mbt.attention %q, %q, %q, %t {heads = 2 : i64, causal = true, format = bf16} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?xi32>) -> tensor<?x?x8xf32>
  return %o : tensor<?x?x8xf32>
}
