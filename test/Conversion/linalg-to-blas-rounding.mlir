// RUN: mbt-opt --mbt-linalg-to-blas -split-input-file %s | FileCheck %s
// RUN: mbt-opt --mbt-linalg-to-blas=remarks=true -split-input-file %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: not mbt-opt --mbt-linalg-to-blas="device=cuda" %s 2>&1 | FileCheck %s --check-prefix=CUDA

// A batched matmul that rounds its operands (mbt.round_operands_to, where
// mbt-lower-to-linalg folded precision = bf16's rounding into it) becomes
// the CPU kernel that rounds them as it packs them, in every transpose;
// one that only holds rounded values (mbt.operands_format) stays on the
// f32 kernel.
// CHECK-LABEL: func.func @rounding_products
// CHECK:         call @mbt_rt_batch_matmul_f32_bf16(
// CHECK:         call @mbt_rt_batch_matmul_f32_bf16(
// CHECK:         call @mbt_rt_batch_matmul_f32(
// CHECK-NOT:     linalg.batch_matmul
// REMARK: remark: batched matmul: mbt_rt_batch_matmul_f32_bf16, overwrites C (its zero fill is dropped)
// REMARK: remark: batched matmul: mbt_rt_batch_matmul_f32_bf16, A transposed, accumulates into C
// REMARK: remark: batched matmul: mbt_rt_batch_matmul_f32, accumulates into C
// A GPU has no such kernel: the op stays, and the pass says so.
// CUDA: error: 'linalg.batch_matmul' op rounds its operands (mbt.round_operands_to), which only a BLAS kernel call does, but is not a batched matmul mbt-linalg-to-blas replaces
func.func @rounding_products(%a: memref<2x3x4xf32>, %b: memref<2x4x5xf32>,
                             %at: memref<2x4x3xf32>, %c: memref<2x3x5xf32>,
                             %d: memref<2x3x5xf32>, %e: memref<2x3x5xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<2x3x5xf32>)
  linalg.batch_matmul {mbt.round_operands_to = bf16}
      ins(%a, %b : memref<2x3x4xf32>, memref<2x4x5xf32>)
      outs(%c : memref<2x3x5xf32>)
  linalg.batch_matmul_transpose_a {mbt.round_operands_to = bf16}
      ins(%at, %b : memref<2x4x3xf32>, memref<2x4x5xf32>)
      outs(%d : memref<2x3x5xf32>)
  linalg.batch_matmul {mbt.operands_format = bf16}
      ins(%a, %b : memref<2x3x4xf32>, memref<2x4x5xf32>)
      outs(%e : memref<2x3x5xf32>)
  return
}
