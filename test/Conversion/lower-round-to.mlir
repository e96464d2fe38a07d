// RUN: mbt-opt --mbt-lower-to-linalg %s | FileCheck %s

// Rounding to bf16, ties to even, in integer operations on the f32 bits:
// add 0x7FFF plus the lowest bit kept, clear the low 16 bits; a NaN is
// kept as it is (the carry could make it an infinity).

// CHECK-LABEL: func.func @round
// CHECK-DAG:     %[[HIGH:.*]] = arith.constant -65536 : i32
// CHECK-DAG:     %[[HALF:.*]] = arith.constant 32767 : i32
// CHECK-DAG:     %[[SIXTEEN:.*]] = arith.constant 16 : i32
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : i32
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]{{.*}} ins(%arg0 : tensor<4x?x8xf32>)
// CHECK:           %[[BITS:.*]] = arith.bitcast %[[IN:.*]] : f32 to i32
// CHECK:           %[[SHIFTED:.*]] = arith.shrui %[[BITS]], %[[SIXTEEN]] : i32
// CHECK:           %[[KEPT:.*]] = arith.andi %[[SHIFTED]], %[[ONE]] : i32
// CHECK:           %[[BIAS:.*]] = arith.addi %[[KEPT]], %[[HALF]] : i32
// CHECK:           %[[SUM:.*]] = arith.addi %[[BITS]], %[[BIAS]] : i32
// CHECK:           %[[ROUNDED:.*]] = arith.andi %[[SUM]], %[[HIGH]] : i32
// CHECK:           %[[VALUE:.*]] = arith.bitcast %[[ROUNDED]] : i32 to f32
// CHECK:           %[[NAN:.*]] = arith.cmpf uno, %[[IN]], %[[IN]] : f32
// CHECK:           arith.select %[[NAN]], %[[IN]], %[[VALUE]] : f32
func.func @round(%x: tensor<4x?x8xf32>) -> tensor<4x?x8xf32> {
  %r = mbt.round_to %x {format = bf16} : tensor<4x?x8xf32>
  return %r : tensor<4x?x8xf32>
}
