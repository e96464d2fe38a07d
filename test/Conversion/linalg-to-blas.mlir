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
// REMARK: remark: batched matmul: mbt_rt_batch_matmul_f32, accumulates into C
// REMARK: remark: matmul in a linalg.generic: mbt_rt_batch_matmul_f32_5d, overwrites C (its zero fill is dropped)
// REMARK: remark: matmul in a linalg.generic: mbt_rt_batch_matmul_f64_5d, accumulates into C
// REMARK: remark: matmul in a linalg.generic: mbt_rt_batch_matmul_f32, accumulates into C
// REMARK: remark: batched matmul: mbt_rt_batch_matmul_f32, accumulates into C
// REMARK-NOT: remark

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

// -----

// Attention's scores over models, sequences and heads, from the heads'
// layout [M, B, T, H, D]: loops (m, b, h, i, j, d). The operands become
// views in the kernel's order (A [M, B, H, T, D], B [M, B, H, D, T], C as
// it is) and the rank-5 kernel takes them with no transpose flag: it reads
// the strides. On a GPU the generic stays, as loops.
// CHECK-LABEL: func.func @attention_scores
// CHECK-NOT:     linalg.fill
// CHECK:         %[[A:.*]] = memref.transpose %{{.*}} (d0, d1, d2, d3, d4) -> (d0, d1, d3, d2, d4)
// CHECK:         %[[CA:.*]] = memref.cast %[[A]] : {{.*}} to memref<?x?x?x?x?xf32, strided<[?, ?, ?, ?, ?], offset: ?>>
// CHECK:         %[[B:.*]] = memref.transpose %{{.*}} (d0, d1, d2, d3, d4) -> (d0, d1, d3, d4, d2)
// CHECK:         %[[CB:.*]] = memref.cast %[[B]]
// CHECK-NOT:     memref.transpose
// CHECK:         %[[CC:.*]] = memref.cast %{{.*}} : memref<2x3x4x7x7xf32> to
// CHECK:         call @mbt_rt_batch_matmul_f32_5d(%[[CA]], %[[CB]], %[[CC]], %{{.*}}, %{{.*}}, %{{.*}})
// CHECK-NOT:     linalg.generic
// CUDA-LABEL: func.func @attention_scores
// CUDA:         linalg.generic
// CUDA-NOT:     call
func.func @attention_scores(%q: memref<2x3x7x4x5xf32>, %k: memref<2x3x7x4x5xf32>,
                            %s: memref<2x3x4x7x7xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%s : memref<2x3x4x7x7xf32>)
  linalg.generic {
      indexing_maps = [affine_map<(m, b, h, i, j, d) -> (m, b, i, h, d)>,
                       affine_map<(m, b, h, i, j, d) -> (m, b, j, h, d)>,
                       affine_map<(m, b, h, i, j, d) -> (m, b, h, i, j)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel",
                        "parallel", "reduction"]}
      ins(%q, %k : memref<2x3x7x4x5xf32>, memref<2x3x7x4x5xf32>)
      outs(%s : memref<2x3x4x7x7xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %sum = arith.addf %acc, %p : f32
    linalg.yield %sum : f32
  }
  return
}

// -----

// The weighted values p v into the heads' layout, in f64, product written
// b * a and the sum p + acc: the same matmul. C is viewed as
// [M, B, H, T, D].
// CHECK-LABEL: func.func @weighted_values_f64
// CHECK:         memref.transpose %{{.*}} (d0, d1, d2, d3, d4) -> (d0, d1, d3, d2, d4)
// CHECK:         memref.transpose %{{.*}} (d0, d1, d2, d3, d4) -> (d0, d1, d3, d2, d4)
// CHECK:         call @mbt_rt_batch_matmul_f64_5d
func.func @weighted_values_f64(%p: memref<2x3x4x7x7xf64>,
                               %v: memref<2x3x7x4x5xf64>,
                               %o: memref<2x3x7x4x5xf64>) {
  linalg.generic {
      indexing_maps = [affine_map<(m, b, i, h, d, j) -> (m, b, h, i, j)>,
                       affine_map<(m, b, i, h, d, j) -> (m, b, j, h, d)>,
                       affine_map<(m, b, i, h, d, j) -> (m, b, i, h, d)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel",
                        "parallel", "reduction"]}
      ins(%p, %v : memref<2x3x4x7x7xf64>, memref<2x3x7x4x5xf64>)
      outs(%o : memref<2x3x7x4x5xf64>) {
  ^bb0(%a: f64, %b: f64, %acc: f64):
    %prod = arith.mulf %b, %a : f64
    %sum = arith.addf %prod, %acc : f64
    linalg.yield %sum : f64
  }
  return
}

// -----

// A plain batched matmul written as a generic calls the rank-3 kernel.
// CHECK-LABEL: func.func @generic_rank3
// CHECK-NOT:     memref.transpose
// CHECK:         call @mbt_rt_batch_matmul_f32(
func.func @generic_rank3(%a: memref<2x3x4xf32>, %b: memref<2x4x5xf32>,
                         %c: memref<2x3x5xf32>) {
  linalg.generic {
      indexing_maps = [affine_map<(n, i, j, k) -> (n, i, k)>,
                       affine_map<(n, i, j, k) -> (n, k, j)>,
                       affine_map<(n, i, j, k) -> (n, i, j)>],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<2x3x4xf32>, memref<2x4x5xf32>)
      outs(%c : memref<2x3x5xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %sum = arith.addf %acc, %p : f32
    linalg.yield %sum : f32
  }
  return
}

// -----

// Generics that are not matmuls stay: a body that does more than add a
// product (the softmax's normalization fused in), a loop only one operand
// reads (a second reduction), a broadcast operand, no n loop (a matrix
// times a vector).
// CHECK-LABEL: func.func @not_matmuls
// CHECK-COUNT-4: linalg.generic
// CHECK-NOT:     call
func.func @not_matmuls(%a: memref<2x3x4xf32>, %b: memref<2x4x5xf32>,
                       %c: memref<2x3x5xf32>, %a4: memref<2x3x4x6xf32>,
                       %v: memref<2x4xf32>, %cv: memref<2x3xf32>) {
  linalg.generic {
      indexing_maps = [affine_map<(n, i, j, k) -> (n, i, k)>,
                       affine_map<(n, i, j, k) -> (n, k, j)>,
                       affine_map<(n, i, j, k) -> (n, i, j)>],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<2x3x4xf32>, memref<2x4x5xf32>)
      outs(%c : memref<2x3x5xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %e = math.exp %x : f32
    %p = arith.mulf %e, %y : f32
    %sum = arith.addf %acc, %p : f32
    linalg.yield %sum : f32
  }
  linalg.generic {
      indexing_maps = [affine_map<(n, i, j, k, l) -> (n, i, k, l)>,
                       affine_map<(n, i, j, k, l) -> (n, k, j)>,
                       affine_map<(n, i, j, k, l) -> (n, i, j)>],
      iterator_types = ["parallel", "parallel", "parallel", "reduction",
                        "reduction"]}
      ins(%a4, %b : memref<2x3x4x6xf32>, memref<2x4x5xf32>)
      outs(%c : memref<2x3x5xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %sum = arith.addf %acc, %p : f32
    linalg.yield %sum : f32
  }
  linalg.generic {
      indexing_maps = [affine_map<(n, i, j, k) -> (0, i, k)>,
                       affine_map<(n, i, j, k) -> (n, k, j)>,
                       affine_map<(n, i, j, k) -> (n, i, j)>],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<2x3x4xf32>, memref<2x4x5xf32>)
      outs(%c : memref<2x3x5xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %sum = arith.addf %acc, %p : f32
    linalg.yield %sum : f32
  }
  linalg.generic {
      indexing_maps = [affine_map<(n, i, k) -> (n, i, k)>,
                       affine_map<(n, i, k) -> (n, k)>,
                       affine_map<(n, i, k) -> (n, i)>],
      iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %v : memref<2x3x4xf32>, memref<2x4xf32>)
      outs(%cv : memref<2x3xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %sum = arith.addf %acc, %p : f32
    linalg.yield %sum : f32
  }
  return
}

// -----

// A matmul whose operand's inner stride is not known to be 1 (a GRU's
// state at one position, a subview): the CPU's kernel reads any strides;
// cuBLAS's call stays for unit strides, so on a GPU it stays a loop.
// CHECK-LABEL: func.func @dynamic_inner_stride
// CHECK:         call @mbt_rt_batch_matmul_f32(
// CUDA-LABEL: func.func @dynamic_inner_stride
// CUDA:         linalg.batch_matmul
func.func @dynamic_inner_stride(%a: memref<4x?x32xf32, strided<[?, ?, ?], offset: ?>>,
                                %b: memref<4x32x96xf32>, %c: memref<4x?x96xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<4x?x32xf32, strided<[?, ?, ?], offset: ?>>, memref<4x32x96xf32>)
                      outs(%c : memref<4x?x96xf32>)
  return
}
