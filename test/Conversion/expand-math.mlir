// RUN: mbt-opt --mbt-expand-math %s | FileCheck %s

// An f32 tanh becomes one exp of a non-positive argument (itself computed
// inline, below), a division and the sign put back; an f64 tanh stays for
// libm.
// CHECK-LABEL: func.func @tanh
// CHECK-SAME:      (%[[X:.*]]: f32, %[[Y:.*]]: f64)
// CHECK-NOT:     math.tanh %[[X]]
// CHECK-NOT:     math.exp
// CHECK:         math.fma
// CHECK:         arith.divf
// CHECK:         math.tanh %[[Y]] : f64
func.func @tanh(%x: f32, %y: f64) -> (f32, f64) {
  %a = math.tanh %x : f32
  %b = math.tanh %y : f64
  return %a, %b : f32, f64
}

// An f32 exp becomes upstream's polynomial approximation: x = k ln2 + r,
// a polynomial in r through fma, 2^k from the bits of k + 127; an f64 exp
// stays for libm. (test/Conversion/expand-math-exp-accuracy.mlir runs it.)
// CHECK-LABEL: func.func @exp
// CHECK-SAME:      (%[[X:.*]]: f32, %[[Y:.*]]: f64)
// CHECK-NOT:     math.exp %[[X]]
// CHECK:         math.floor
// CHECK:         math.fma
// CHECK:         arith.shli
// CHECK:         arith.bitcast %{{.*}} : i32 to f32
// CHECK:         math.exp %[[Y]] : f64
func.func @exp(%x: f32, %y: f64) -> (f32, f64) {
  %a = math.exp %x : f32
  %b = math.exp %y : f64
  return %a, %b : f32, f64
}

// Inside a linalg body, where the lowering puts it.
// CHECK-LABEL: func.func @in_a_loop
// CHECK-NOT:     math.tanh
// CHECK-NOT:     math.exp
// CHECK:         math.fma
func.func @in_a_loop(%in: memref<8xf32>, %out: memref<8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                  iterator_types = ["parallel"]}
      ins(%in : memref<8xf32>) outs(%out : memref<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = math.tanh %v : f32
    linalg.yield %t : f32
  }
  return
}
