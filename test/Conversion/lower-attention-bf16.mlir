// RUN: mbt-opt --mbt-lower-to-linalg %s | FileCheck %s

// With format = bf16 (precision = bf16), attention rounds every product's
// operands and result: q, k and v, the scores, the weights before they
// weigh the values, the output (6 roundings); its adjoint rounds q, k, v
// and the incoming gradient, the recomputed scores, and the operands and
// results of its four products (12). Without a format, nothing is rounded.

// CHECK-LABEL: func.func @plain(
// CHECK-NOT:     arith.shrui
// CHECK-LABEL: func.func @rounded(
// CHECK-COUNT-6: arith.shrui
// CHECK-NOT:     arith.shrui
// CHECK-LABEL: func.func @rounded_grad(
// CHECK-COUNT-12: arith.shrui
// CHECK-NOT:     arith.shrui
// CHECK:         return
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
