// RUN: mbt-opt --mbt-linalg-to-blas --canonicalize -split-input-file -allow-unregistered-dialect %s | FileCheck %s
// RUN: mbt-opt --mbt-linalg-to-blas="device=cuda" -split-input-file -allow-unregistered-dialect %s | FileCheck %s --check-prefix=CUDA
// RUN: mbt-opt --mbt-linalg-to-blas=remarks=true -split-input-file -allow-unregistered-dialect %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: not mbt-opt --mbt-linalg-to-blas="device=tpu" -allow-unregistered-dialect %s 2>&1 | FileCheck %s --check-prefix=BAD

// For the CUDA target the same calls go to the CUDA runtime's kernel, over
// device buffers.
// CUDA-LABEL: func.func @fill_then_matmul
// CUDA:         call @mbt_rt_cuda_batch_matmul_f32(
// CUDA-NOT:     call @mbt_rt_batch_matmul_f32(
// BAD: error: mbt-linalg-to-blas: device must be cpu or cuda, got 'tpu'

// With remarks, each call's kernel and form are reported.
// REMARK: remark: batched matmul: mbt_rt_batch_matmul_f32, overwrites C (its zero fill is dropped)
// REMARK: remark: batched matmul: mbt_rt_batch_matmul_f32, overwrites C (its zero fill is dropped)
// REMARK: remark: batched matmul: mbt_rt_batch_matmul_f32, A transposed, accumulates into C
// REMARK: remark: batched matmul: mbt_rt_batch_matmul_f64, B transposed, accumulates into C
// REMARK: remark: batched matmul: mbt_rt_batch_matmul_f32, accumulates into C

// A zero fill of the output just before the matmul is dropped: the kernel
// overwrites the output (accumulate = 0).
// CHECK-LABEL: func.func @fill_then_matmul
// CHECK-NOT:     linalg.fill
// CHECK:         %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK:         call @mbt_rt_batch_matmul_f32({{.*}}, %[[ZERO]], %[[ZERO]], %[[ZERO]])
func.func @fill_then_matmul(%a: memref<2x3x4xf32>, %b: memref<2x4x5xf32>,
                            %c: memref<2x3x5xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<2x3x5xf32>)
  linalg.batch_matmul ins(%a, %b : memref<2x3x4xf32>, memref<2x4x5xf32>)
                      outs(%c : memref<2x3x5xf32>)
  return
}

// -----

// A copy into the output of a buffer a zero fill wrote (what bufferization
// makes of one zero-filled init shared by two matmuls) is dropped too; the
// filled buffer keeps its fill for its other reader.
// CHECK-LABEL: func.func @copy_of_zeros_then_matmul
// CHECK:         %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK:         linalg.fill
// CHECK-NOT:     memref.copy
// CHECK:         call @mbt_rt_batch_matmul_f32({{.*}}, %[[ZERO]], %[[ZERO]], %[[ZERO]])
// CHECK:         "test.read"
func.func @copy_of_zeros_then_matmul(%a: memref<2x3x4xf32>,
                                     %b: memref<2x4x5xf32>) {
  %zero = arith.constant 0.0 : f32
  %filled = memref.alloc() : memref<2x3x5xf32>
  linalg.fill ins(%zero : f32) outs(%filled : memref<2x3x5xf32>)
  %c = memref.alloc() : memref<2x3x5xf32>
  memref.copy %filled, %c : memref<2x3x5xf32> to memref<2x3x5xf32>
  linalg.batch_matmul ins(%a, %b : memref<2x3x4xf32>, memref<2x4x5xf32>)
                      outs(%c : memref<2x3x5xf32>)
  "test.read"(%filled, %c) : (memref<2x3x5xf32>, memref<2x3x5xf32>) -> ()
  return
}

// -----

// Without a zeroing right before, the kernel accumulates into the output,
// as linalg does; transposes are passed as flags.
// CHECK-LABEL: func.func @accumulate
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : i64
// CHECK:         call @mbt_rt_batch_matmul_f32({{.*}}, %[[ONE]], %[[ZERO]], %[[ONE]])
func.func @accumulate(%a: memref<2x4x3xf32>, %b: memref<2x4x5xf32>,
                      %c: memref<2x3x5xf32>) {
  linalg.batch_matmul_transpose_a
      ins(%a, %b : memref<2x4x3xf32>, memref<2x4x5xf32>)
      outs(%c : memref<2x3x5xf32>)
  return
}

// -----

// f64 matmuls call the dgemm kernel.
// CHECK: func.func private @mbt_rt_batch_matmul_f64(memref<?x?x?xf64, strided<[?, ?, ?], offset: ?>>
// CHECK-LABEL: func.func @f64
// CHECK:         call @mbt_rt_batch_matmul_f64
func.func @f64(%a: memref<2x3x4xf64>, %b: memref<2x5x4xf64>,
               %c: memref<2x3x5xf64>) {
  linalg.batch_matmul_transpose_b
      ins(%a, %b : memref<2x3x4xf64>, memref<2x5x4xf64>)
      outs(%c : memref<2x3x5xf64>)
  return
}

// -----

// A matmul whose operands hold bf16 (f16) values (mbt.operands_format, from
// mbt-autocast's rounding): on a GPU its own kernel multiplies them on the
// tensor cores; the CPU's f32 kernel computes the same values.
// CHECK-LABEL: func.func @rounded_operands
// CHECK:         call @mbt_rt_batch_matmul_f32(
// CHECK:         call @mbt_rt_batch_matmul_f32(
// CUDA-LABEL: func.func @rounded_operands
// CUDA:         call @mbt_rt_cuda_batch_matmul_f32_bf16(
// CUDA:         call @mbt_rt_cuda_batch_matmul_f32_f16(
func.func @rounded_operands(%a: memref<2x3x4xf32>, %b: memref<2x4x5xf32>,
                            %c: memref<2x3x5xf32>, %d: memref<2x3x5xf32>) {
  linalg.batch_matmul {mbt.operands_format = bf16}
      ins(%a, %b : memref<2x3x4xf32>, memref<2x4x5xf32>)
      outs(%c : memref<2x3x5xf32>)
  linalg.batch_matmul {mbt.operands_format = f16}
      ins(%a, %b : memref<2x3x4xf32>, memref<2x4x5xf32>)
      outs(%d : memref<2x3x5xf32>)
  return
}
