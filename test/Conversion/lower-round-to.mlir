// RUN: mbt-opt --mbt-lower-to-linalg %s | FileCheck %s

// Rounding to bf16, ties to even, in integer operations on the f32 bits:
// add 0x7FFF plus the lowest bit kept, clear the low 16 bits; a NaN is
// kept as it is (the carry could make it an infinity).

// CHECK-LABEL: func.func @round
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]{{.*}} ins(%arg0 : tensor<4x?x8xf32>)
// CHECK:           %[[BITS:.*]] = arith.bitcast %[[IN:.*]] : f32 to i32
// CHECK-DAG:       %[[ONE:.*]] = arith.constant 1 : i32
// CHECK-DAG:       %[[SIXTEEN:.*]] = arith.constant 16 : i32
// CHECK:           %[[SHIFTED:.*]] = arith.shrui %[[BITS]], %[[SIXTEEN]] : i32
// CHECK:           %[[KEPT:.*]] = arith.andi %[[SHIFTED]], %[[ONE]] : i32
// CHECK:           %[[HALF:.*]] = arith.constant 32767 : i32
// CHECK:           %[[BIAS:.*]] = arith.addi %[[KEPT]], %[[HALF]] : i32
// CHECK-DAG:       %[[HIGH:.*]] = arith.constant -65536 : i32
// CHECK-DAG:       %[[SUM:.*]] = arith.addi %[[BITS]], %[[BIAS]] : i32
// CHECK:           %[[ROUNDED:.*]] = arith.andi %[[SUM]], %[[HIGH]] : i32
// CHECK:           %[[VALUE:.*]] = arith.bitcast %[[ROUNDED]] : i32 to f32
// CHECK:           %[[NAN:.*]] = arith.cmpf uno, %[[IN]], %[[IN]] : f32
// CHECK:           arith.select %[[NAN]], %[[IN]], %[[VALUE]] : f32
func.func @round(%x: tensor<4x?x8xf32>) -> tensor<4x?x8xf32> {
  %r = mbt.round_to %x {format = bf16} : tensor<4x?x8xf32>
  return %r : tensor<4x?x8xf32>
}

// Rounding to f16: the same carry on 13 dropped bits; from 65520 on (the
// rounded value beyond 65504) infinity; below 2^-14 the subnormals,
// multiples of 2^-24, by adding 0.75 to |x| (where f32's spacing is 2^-24)
// and taking it away again; the sign put back; NaN kept.

// CHECK-LABEL: func.func @round_f16
// CHECK:         linalg.generic
// CHECK:           %[[ABS:.*]] = math.absf %[[IN:.*]] : f32
// CHECK:           %[[BITS:.*]] = arith.bitcast %[[IN]] : f32 to i32
// CHECK:           %[[THIRTEEN:.*]] = arith.constant 13 : i32
// CHECK:           arith.shrui %[[BITS]], %[[THIRTEEN]] : i32
// CHECK:           %[[HALF16:.*]] = arith.constant 4095 : i32
// CHECK:           arith.addi %{{.*}}, %[[HALF16]] : i32
// CHECK:           %[[KEEP:.*]] = arith.constant -8192 : i32
// CHECK:           %[[KEPT:.*]] = arith.andi %{{.*}}, %[[KEEP]] : i32
// CHECK:           %[[NORMAL:.*]] = arith.bitcast %[[KEPT]] : i32 to f32
// CHECK-DAG:       %[[LARGEST:.*]] = arith.constant 6.550400e+04 : f32
// CHECK-DAG:       %[[NABS:.*]] = math.absf %[[NORMAL]] : f32
// CHECK:           %[[OVER:.*]] = arith.cmpf ogt, %[[NABS]], %[[LARGEST]] : f32
// CHECK:           %[[INF:.*]] = arith.constant 0x7F800000 : f32
// CHECK:           %[[SIGNED_INF:.*]] = math.copysign %[[INF]], %[[IN]] : f32
// CHECK:           %[[CLAMPED:.*]] = arith.select %[[OVER]], %[[SIGNED_INF]], %[[NORMAL]] : f32
// CHECK:           %[[OFFSET:.*]] = arith.constant 7.500000e-01 : f32
// CHECK:           %[[SUM:.*]] = arith.addf %[[ABS]], %[[OFFSET]] : f32
// CHECK:           %[[SUB:.*]] = arith.subf %[[SUM]], %[[OFFSET]] : f32
// CHECK:           %[[SIGNED:.*]] = math.copysign %[[SUB]], %[[IN]] : f32
// CHECK:           %[[SMALLEST:.*]] = arith.constant 6.10351563E-5 : f32
// CHECK:           %[[SMALL:.*]] = arith.cmpf olt, %[[ABS]], %[[SMALLEST]] : f32
// CHECK:           %[[R:.*]] = arith.select %[[SMALL]], %[[SIGNED]], %[[CLAMPED]] : f32
// CHECK:           %[[NAN:.*]] = arith.cmpf uno, %[[IN]], %[[IN]] : f32
// CHECK:           arith.select %[[NAN]], %[[IN]], %[[R]] : f32
func.func @round_f16(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %r = mbt.round_to %x {format = f16} : tensor<?x8xf32>
  return %r : tensor<?x8xf32>
}
