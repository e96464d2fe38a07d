// RUN: mbt-opt --mbt-vector-matmuls="vector-bits=256 rows=4" --canonicalize -split-input-file %s | FileCheck %s
// RUN: mbt-opt --mbt-vector-matmuls="vector-bits=512" --canonicalize -split-input-file %s | FileCheck %s --check-prefix=WIDE
// RUN: mbt-opt --mbt-vector-matmuls="vector-bits=512 k-block=3" --canonicalize -split-input-file %s | FileCheck %s --check-prefix=KBLOCK
// RUN: not mbt-opt --mbt-vector-matmuls="vector-bits=100" %s 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: error: mbt-vector-matmuls: vector-bits must be a positive multiple of 64, got 100

// A matmul whose output was just zero-filled: the fill goes, the models run
// in an scf.parallel, and each 4-row x 2-vector panel (256-bit: 8 lanes)
// keeps its 8 accumulators in registers across k, starting at zero: one
// row of B loaded per k, one element of A broadcast per row, 8 FMAs. The
// columns past the last multiple of 16 are done a vector at a time, masked
// to what is left; the rows past the last multiple of 4 by a one-row
// kernel.
// CHECK-LABEL: func.func @zero_filled(
// CHECK-SAME:      %[[A:.*]]: memref<2x?x8xf32>, %[[B:.*]]: memref<2x8x?xf32, strided<[?, ?, 1], offset: ?>>, %[[C:.*]]: memref<2x?x?xf32>)
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<8xf32>
// CHECK-NOT:     linalg.fill
// CHECK:         scf.parallel (%[[M:.*]]) =
// CHECK:           scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %c16
// CHECK:             scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %c4
// CHECK:               %[[ACC:.*]]:8 = scf.for %[[K:.*]] = %c0 to %c8 step %c1 iter_args(%{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]])
// CHECK:                 %[[B0:.*]] = vector.load %[[B]][%[[M]], %[[K]], %[[J]]]
// CHECK:                 %[[B1:.*]] = vector.load %[[B]][%[[M]], %[[K]], %{{.*}}]
// CHECK:                 %[[A0:.*]] = memref.load %[[A]][%[[M]], %[[I]], %[[K]]]
// CHECK:                 %[[S0:.*]] = vector.broadcast %[[A0]] : f32 to vector<8xf32>
// CHECK:                 vector.fma %[[S0]], %[[B0]]
// CHECK:                 vector.fma %[[S0]], %[[B1]]
// CHECK-COUNT-6:         vector.fma
// CHECK:                 scf.yield
// CHECK-COUNT-8:       vector.store %[[ACC]]#{{[0-7]}}, %[[C]]
// CHECK:             scf.for
// CHECK-COUNT-2:         vector.fma
// CHECK:           scf.for %[[TJ:.*]] = %[[FULL:.*]] to %[[N:.*]] step %c8
// CHECK:             %[[LEFT:.*]] = arith.subi %[[N]], %[[TJ]]
// CHECK:             %[[MASK:.*]] = vector.create_mask %[[LEFT]] : vector<8xi1>
// CHECK:             vector.maskedload %[[B]][%[[M]], %{{.*}}, %[[TJ]]], %[[MASK]], %[[ZERO]]
// CHECK:             vector.maskedstore %[[C]][%[[M]], %{{.*}}, %[[TJ]]], %[[MASK]]
// CHECK-NOT:     linalg.batch_matmul
// By default, 6-row panels of 4 vectors at 512 bits.
// WIDE-LABEL: func.func @zero_filled(
// WIDE:          scf.for %{{.*}} step %c64
// WIDE:            scf.for %{{.*}} step %c6
// WIDE:              %{{.*}}:24 = scf.for
// WIDE-COUNT-24:       vector.fma {{.*}} : vector<16xf32>

// With k-block, the contraction is done in blocks of 3 steps: the first
// from zero, the others from what the previous blocks stored in C.
// KBLOCK-LABEL: func.func @zero_filled(
// KBLOCK-DAG:     %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<16xf32>
// KBLOCK:         scf.parallel
// KBLOCK:           %{{.*}}:24 = scf.for %{{.*}} = %c0 to %c3 step %c1 iter_args(%{{.*}} = %[[ZERO]],
// KBLOCK:           scf.for %[[KB:.*]] = %c3 to %c8 step %c3
// KBLOCK:             %[[END:.*]] = arith.minui %{{.*}}, %c8
// KBLOCK:             %[[C0:.*]] = vector.load %arg2[
// KBLOCK:             scf.for %{{.*}} = %[[KB]] to %[[END]] step %c1 iter_args(%{{.*}} = %[[C0]],
func.func @zero_filled(%a: memref<2x?x8xf32>, %b: memref<2x8x?xf32, strided<[?, ?, 1], offset: ?>>, %c: memref<2x?x?xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<2x?x?xf32>)
  linalg.batch_matmul ins(%a, %b : memref<2x?x8xf32>, memref<2x8x?xf32, strided<[?, ?, 1], offset: ?>>) outs(%c : memref<2x?x?xf32>)
  return
}

// -----

// Without a zero fill the matmul accumulates: the accumulators start from
// C. A transposed A (a weight gradient, x^T . dy) is read at [m, k, i].
// CHECK-LABEL: func.func @accumulate_transposed_a(
// CHECK-SAME:      %[[A:.*]]: memref<3x?x6xf32>, %[[B:.*]]: memref<3x?x16xf32>, %[[C:.*]]: memref<3x6x16xf32>)
// CHECK:         scf.parallel (%[[M:.*]]) =
// CHECK:           %[[C00:.*]] = vector.load %[[C]][%[[M]], %[[I:.*]], %[[J:.*]]] : memref<3x6x16xf32>, vector<8xf32>
// CHECK:           scf.for %[[K:.*]] = %c0 to %{{.*}} step %c1 iter_args(%{{.*}} = %[[C00]],
// CHECK:             memref.load %[[A]][%[[M]], %[[K]], %[[I]]] : memref<3x?x6xf32>
func.func @accumulate_transposed_a(%a: memref<3x?x6xf32>, %b: memref<3x?x16xf32>, %c: memref<3x6x16xf32>) {
  linalg.batch_matmul_transpose_a ins(%a, %b : memref<3x?x6xf32>, memref<3x?x16xf32>) outs(%c : memref<3x6x16xf32>)
  return
}

// -----

// f64 at 512 bits: 8 lanes, panels of 4 vectors (32 columns).
// WIDE-LABEL: func.func @f64(
// WIDE:          scf.for %{{.*}} step %c32
// WIDE-COUNT-24:     vector.fma {{.*}} : vector<8xf64>
func.func @f64(%a: memref<2x8x8xf64>, %b: memref<2x8x64xf64>, %c: memref<2x8x64xf64>) {
  linalg.batch_matmul ins(%a, %b : memref<2x8x8xf64>, memref<2x8x64xf64>) outs(%c : memref<2x8x64xf64>)
  return
}

// -----

// A transposed B would be a strided gather per vector: left as it is (for
// mbt-linalg-to-blas), as are matmuls on tensors.
// CHECK-LABEL: func.func @left_alone(
// CHECK:         linalg.batch_matmul_transpose_b
// CHECK:         linalg.batch_matmul
// CHECK-NOT:     vector.
func.func @left_alone(%a: memref<2x4x8xf32>, %b: memref<2x16x8xf32>, %c: memref<2x4x16xf32>,
                      %ta: tensor<2x4x8xf32>, %tb: tensor<2x8x16xf32>, %tc: tensor<2x4x16xf32>) -> tensor<2x4x16xf32> {
  linalg.batch_matmul_transpose_b ins(%a, %b : memref<2x4x8xf32>, memref<2x16x8xf32>) outs(%c : memref<2x4x16xf32>)
  %r = linalg.batch_matmul ins(%ta, %tb : tensor<2x4x8xf32>, tensor<2x8x16xf32>) outs(%tc : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  return %r : tensor<2x4x16xf32>
}
