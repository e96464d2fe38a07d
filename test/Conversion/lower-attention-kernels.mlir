// RUN: mbt-opt --mbt-lower-to-linalg=attention-kernels --canonicalize %s | FileCheck %s
// RUN: mbt-opt --mbt-lower-to-linalg=attention-kernels --canonicalize --mbt-fuse-elementwise --canonicalize --cse --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" %s | FileCheck %s --check-prefix=BUFFERS

// With attention-kernels (the CPU), an f32 attention and its adjoint with
// f32 or bf16 products are calls to the runtime's kernels: the operands'
// leading dims collapsed into one of sequences (or a unit one added), a
// new [S, T, D] buffer per result, expanded back; then the heads and the
// causal flag.

// CHECK-LABEL: func.func private @mbt_rt_attention_grad_f32_bf16(memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?xi32, strided<[?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, i64, i64) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func private @mbt_rt_attention_f32(memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?xi32, strided<[?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, i64, i64) attributes {llvm.emit_c_interface}

// CHECK-LABEL: func.func @causal
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-DAG:     %[[TWO:.*]] = arith.constant 2 : i64
// CHECK:         %[[Q:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1], [2], [3]] : tensor<3x?x?x8xf32> into tensor<?x?x8xf32>
// CHECK:         %[[TOKENS:.*]] = tensor.collapse_shape %arg3 {{\[\[}}0, 1], [2]] : tensor<3x?x?xi32> into tensor<?x?xi32>
// CHECK:         bufferization.to_memref %[[Q]] read_only
// CHECK:         %[[TM:.*]] = bufferization.to_memref %[[TOKENS]] read_only : memref<?x?xi32, strided<[?, ?], offset: ?>>
// CHECK:         %[[OUT:.*]] = memref.alloc(%{{.*}}, %{{.*}}) : memref<?x?x8xf32>
// CHECK:         %[[OA:.*]] = memref.cast %[[OUT]]
// CHECK:         call @mbt_rt_attention_f32(%{{.*}}, %{{.*}}, %{{.*}}, %[[TM]], %[[OA]], %[[TWO]], %[[ONE]])
// CHECK:         %[[T:.*]] = bufferization.to_tensor %[[OUT]] restrict writable : memref<?x?x8xf32>
// CHECK:         %[[R:.*]] = tensor.expand_shape %[[T]] {{\[\[}}0, 1], [2], [3]] output_shape [3, %{{.*}}, %{{.*}}, 8]
// CHECK:         return %[[R]]
// CHECK-NOT:     linalg.generic
// After bufferization the call reads views of the arguments and writes the
// one allocation, which the function returns expanded; nothing is copied.
// BUFFERS-LABEL: func.func @causal
// BUFFERS-NOT:     memref.copy
// BUFFERS:         memref.collapse_shape %arg0
// BUFFERS:         %[[OUT:.*]] = memref.alloc(%{{.*}}, %{{.*}}) : memref<?x?x8xf32>
// BUFFERS:         call @mbt_rt_attention_f32(
// BUFFERS-NOT:     memref.copy
// BUFFERS:         %[[R:.*]] = memref.expand_shape %[[OUT]]
// BUFFERS:         return %[[R]]
func.func @causal(%q: tensor<3x?x?x8xf32>, %k: tensor<3x?x?x8xf32>, %v: tensor<3x?x?x8xf32>, %t: tensor<3x?x?xi32>) -> tensor<3x?x?x8xf32> {
  %o = mbt.attention %q, %k, %v, %t {heads = 2 : i64, causal = true} : (tensor<3x?x?x8xf32>, tensor<3x?x?x8xf32>, tensor<3x?x?x8xf32>, tensor<3x?x?xi32>) -> tensor<3x?x?x8xf32>
  return %o : tensor<3x?x?x8xf32>
}

// One sequence [T, D] gains a unit dim of sequences; bf16 products call
// the `_f32_bf16` kernel, three results.
// CHECK-LABEL: func.func @adjoint_bf16
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-DAG:     %[[TWO:.*]] = arith.constant 2 : i64
// CHECK:         tensor.expand_shape %arg0 {{\[\[}}0, 1], [2]] output_shape [1, %{{.*}}, 8] : tensor<?x8xf32> into tensor<1x?x8xf32>
// CHECK:         tensor.expand_shape %arg3 {{\[\[}}0, 1]] output_shape [1, %{{.*}}] : tensor<?xi32> into tensor<1x?xi32>
// CHECK-COUNT-3: memref.alloc(%{{.*}}) : memref<1x?x8xf32>
// CHECK:         call @mbt_rt_attention_grad_f32_bf16({{.*}}, %[[TWO]], %[[ZERO]])
// CHECK-COUNT-3: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<1x?x8xf32> into tensor<?x8xf32>
func.func @adjoint_bf16(%q: tensor<?x8xf32>, %k: tensor<?x8xf32>, %v: tensor<?x8xf32>, %t: tensor<?xi32>, %g: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) {
  %dq, %dk, %dv = mbt.attention_grad %q, %k, %v, %t, %g {heads = 2 : i64, causal = false, format = bf16} : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?xi32>, tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>)
  return %dq, %dk, %dv : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>
}

// f16 products and f64 values have no kernel: the generics.
// CHECK-LABEL: func.func @f16_keeps_the_generics
// CHECK-NOT:     call
// CHECK:         linalg.generic
// CHECK-LABEL: func.func @f64_keeps_the_generics
// CHECK-NOT:     call
// CHECK:         linalg.generic
func.func @f16_keeps_the_generics(%q: tensor<?x?x8xf32>, %k: tensor<?x?x8xf32>, %v: tensor<?x?x8xf32>, %t: tensor<?x?xi32>) -> tensor<?x?x8xf32> {
  %o = mbt.attention %q, %k, %v, %t {heads = 2 : i64, causal = true, format = f16} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?xi32>) -> tensor<?x?x8xf32>
  return %o : tensor<?x?x8xf32>
}
func.func @f64_keeps_the_generics(%q: tensor<?x?x8xf64>, %k: tensor<?x?x8xf64>, %v: tensor<?x?x8xf64>, %t: tensor<?x?xi32>) -> tensor<?x?x8xf64> {
  %o = mbt.attention %q, %k, %v, %t {heads = 2 : i64, causal = true} : (tensor<?x?x8xf64>, tensor<?x?x8xf64>, tensor<?x?x8xf64>, tensor<?x?xi32>) -> tensor<?x?x8xf64>
  return %o : tensor<?x?x8xf64>
}

// The bf16 kernels round their operands themselves, as mbt.round_to does:
// a rounding whose values only they read (through ops that move values)
// goes, and with it a pass over the tensor. One that another op reads too
// stays.
// CHECK-LABEL: func.func @rounding_only_kernels_read
// CHECK-NOT:     linalg.generic
// CHECK:         call @mbt_rt_attention_f32_bf16(
// CHECK:         call @mbt_rt_attention_grad_f32_bf16(
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @rounding_only_kernels_read(%rows: tensor<?x8xf32>, %like: tensor<2x?x8xf32>, %t: tensor<2x?xi32>, %g: tensor<2x?x8xf32>) -> (tensor<2x?x8xf32>, tensor<2x?x8xf32>) {
  %r = mbt.round_to %rows {format = bf16} : tensor<?x8xf32>
  %q = mbt.split_rows %r like %like : (tensor<?x8xf32>, tensor<2x?x8xf32>) -> tensor<2x?x8xf32>
  %o = mbt.attention %q, %q, %q, %t {heads = 2 : i64, causal = true, format = bf16} : (tensor<2x?x8xf32>, tensor<2x?x8xf32>, tensor<2x?x8xf32>, tensor<2x?xi32>) -> tensor<2x?x8xf32>
  %dq, %dk, %dv = mbt.attention_grad %q, %q, %q, %t, %g {heads = 2 : i64, causal = true, format = bf16} : (tensor<2x?x8xf32>, tensor<2x?x8xf32>, tensor<2x?x8xf32>, tensor<2x?xi32>, tensor<2x?x8xf32>) -> (tensor<2x?x8xf32>, tensor<2x?x8xf32>, tensor<2x?x8xf32>)
  return %o, %dq : tensor<2x?x8xf32>, tensor<2x?x8xf32>
}
// CHECK-LABEL: func.func @rounding_read_elsewhere_too
// CHECK:         linalg.generic
// CHECK:         call @mbt_rt_attention_f32_bf16(
// CHECK-LABEL: func.func @rounding_for_f32_products
// CHECK:         linalg.generic
// CHECK:         call @mbt_rt_attention_f32(
func.func @rounding_read_elsewhere_too(%q: tensor<2x?x8xf32>, %t: tensor<2x?xi32>) -> (tensor<2x?x8xf32>, tensor<2x?x8xf32>) {
  %r = mbt.round_to %q {format = bf16} : tensor<2x?x8xf32>
  %o = mbt.attention %r, %r, %r, %t {heads = 2 : i64, causal = true, format = bf16} : (tensor<2x?x8xf32>, tensor<2x?x8xf32>, tensor<2x?x8xf32>, tensor<2x?xi32>) -> tensor<2x?x8xf32>
  return %o, %r : tensor<2x?x8xf32>, tensor<2x?x8xf32>
}
func.func @rounding_for_f32_products(%q: tensor<2x?x8xf32>, %t: tensor<2x?xi32>) -> tensor<2x?x8xf32> {
  %r = mbt.round_to %q {format = bf16} : tensor<2x?x8xf32>
  %o = mbt.attention %r, %r, %r, %t {heads = 2 : i64, causal = true} : (tensor<2x?x8xf32>, tensor<2x?x8xf32>, tensor<2x?x8xf32>, tensor<2x?xi32>) -> tensor<2x?x8xf32>
  return %o : tensor<2x?x8xf32>
}
