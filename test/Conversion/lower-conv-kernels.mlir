// RUN: mbt-opt --mbt-lower-to-linalg=convolution-kernels --canonicalize %s | FileCheck %s
// RUN: mbt-opt --mbt-lower-to-linalg=convolution-kernels --canonicalize --mbt-fuse-elementwise --canonicalize --cse --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" %s | FileCheck %s --check-prefix=BUFFERS

// With convolution-kernels (the CPU), an f32 convolution and its two
// adjoints are calls to the runtime's kernels on their operands' buffers,
// each writing a new buffer that becomes its result; the kernel takes the
// stride, padding and dilation (height, width) and the groups.

// CHECK-LABEL: func.func private @mbt_rt_conv2d_f32_bf16(
// CHECK-LABEL: func.func private @mbt_rt_conv2d_grad_filter_f32(memref<?x?x?x?x?xf32, strided<[?, ?, ?, ?, ?], offset: ?>>, memref<?x?x?x?x?xf32, strided<[?, ?, ?, ?, ?], offset: ?>>, memref<?x?x?x?x?xf32, strided<[?, ?, ?, ?, ?], offset: ?>>, i64, i64, i64, i64, i64, i64, i64) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func private @mbt_rt_conv2d_grad_input_f32(
// CHECK-LABEL: func.func private @mbt_rt_conv2d_f32(

// CHECK-LABEL: func.func @conv
// CHECK-SAME:    (%[[X:.*]]: tensor<2x?x4x8x8xf32>, %[[W:.*]]: tensor<2x6x2x3x3xf32>)
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-DAG:     %[[TWO:.*]] = arith.constant 2 : i64
// CHECK:         %[[XM:.*]] = bufferization.to_memref %[[X]] read_only : memref<2x?x4x8x8xf32, strided<[?, ?, ?, ?, ?], offset: ?>>
// CHECK:         %[[XA:.*]] = memref.cast %[[XM]]
// CHECK:         %[[WM:.*]] = bufferization.to_memref %[[W]] read_only : memref<2x6x2x3x3xf32, strided<[?, ?, ?, ?, ?], offset: ?>>
// CHECK:         %[[WA:.*]] = memref.cast %[[WM]]
// CHECK:         %[[B:.*]] = tensor.dim %[[X]], %[[C1]]
// CHECK:         %[[Y:.*]] = memref.alloc(%[[B]]) : memref<2x?x6x4x4xf32>
// CHECK:         %[[YA:.*]] = memref.cast %[[Y]]
// CHECK:         call @mbt_rt_conv2d_f32(%[[XA]], %[[WA]], %[[YA]], %[[TWO]], %[[TWO]], %[[ONE]], %[[ONE]], %[[ONE]], %[[ONE]], %[[TWO]])
// CHECK:         %[[T:.*]] = bufferization.to_tensor %[[Y]] restrict writable : memref<2x?x6x4x4xf32>
// CHECK:         return %[[T]]
// CHECK-NOT:     linalg.batch_matmul
// After bufferization the call reads the arguments' buffers and writes
// the one allocation, which the function returns; nothing is copied.
// BUFFERS-LABEL: func.func @conv
// BUFFERS-NOT:     memref.copy
// BUFFERS:         %[[Y:.*]] = memref.alloc(%{{.*}}) {{.*}}: memref<2x?x6x4x4xf32>
// BUFFERS:         call @mbt_rt_conv2d_f32(%{{.*}}, %{{.*}}, %{{.*}},
// BUFFERS-NOT:     memref.copy
// BUFFERS:         return %[[Y]]
func.func @conv(%x: tensor<2x?x4x8x8xf32>, %w: tensor<2x6x2x3x3xf32>) -> tensor<2x?x6x4x4xf32> {
  %y = mbt.conv2d %x, %w {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 2 : i64} : (tensor<2x?x4x8x8xf32>, tensor<2x6x2x3x3xf32>) -> tensor<2x?x6x4x4xf32>
  return %y : tensor<2x?x6x4x4xf32>
}

// The input's adjoint reads dy and the filter; the filter's reads x and
// dy, and its result has no dynamic size.
// CHECK-LABEL: func.func @grads
// CHECK-SAME:    (%[[X:.*]]: tensor<2x?x4x8x8xf32>, %[[W:.*]]: tensor<2x6x2x3x3xf32>, %[[DY:.*]]: tensor<2x?x6x4x4xf32>)
// CHECK:         bufferization.to_memref %[[DY]] read_only
// CHECK:         bufferization.to_memref %[[W]] read_only
// CHECK:         %[[B:.*]] = tensor.dim %[[DY]], %{{.*}}
// CHECK:         %[[DX:.*]] = memref.alloc(%[[B]]) : memref<2x?x4x8x8xf32>
// CHECK:         call @mbt_rt_conv2d_grad_input_f32(
// CHECK:         bufferization.to_tensor %[[DX]] restrict writable
// CHECK:         bufferization.to_memref %[[X]] read_only
// CHECK:         bufferization.to_memref %[[DY]] read_only
// CHECK:         %[[DW:.*]] = memref.alloc() : memref<2x6x2x3x3xf32>
// CHECK:         call @mbt_rt_conv2d_grad_filter_f32(
// CHECK:         bufferization.to_tensor %[[DW]] restrict writable
func.func @grads(%x: tensor<2x?x4x8x8xf32>, %w: tensor<2x6x2x3x3xf32>, %dy: tensor<2x?x6x4x4xf32>) -> (tensor<2x?x4x8x8xf32>, tensor<2x6x2x3x3xf32>) {
  %dx = mbt.conv2d_grad_input %dy, %w like %x {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 2 : i64} : tensor<2x?x6x4x4xf32>, tensor<2x6x2x3x3xf32>, tensor<2x?x4x8x8xf32>
  %dw = mbt.conv2d_grad_filter %x, %dy like %w {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 2 : i64} : tensor<2x?x4x8x8xf32>, tensor<2x?x6x4x4xf32>, tensor<2x6x2x3x3xf32>
  return %dx, %dw : tensor<2x?x4x8x8xf32>, tensor<2x6x2x3x3xf32>
}

// A model's own function (no model dimension): a unit one on each operand
// and the result, dropped again.
// CHECK-LABEL: func.func @unbatched
// CHECK:         tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2], [3], [4]] output_shape {{.*}} : tensor<?x1x5x5xf32> into tensor<1x?x1x5x5xf32>
// CHECK:         memref.alloc(%{{.*}}) : memref<1x?x2x3x3xf32>
// CHECK:         call @mbt_rt_conv2d_f32(
// CHECK:         tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2], [3], [4]] : tensor<1x?x2x3x3xf32> into tensor<?x2x3x3xf32>
func.func @unbatched(%x: tensor<?x1x5x5xf32>, %w: tensor<2x1x3x3xf32>) -> tensor<?x2x3x3xf32> {
  %y = mbt.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<?x1x5x5xf32>, tensor<2x1x3x3xf32>) -> tensor<?x2x3x3xf32>
  return %y : tensor<?x2x3x3xf32>
}

// The kernels are f32: an f64 model's convolution stays im2col and a GEMM.
// CHECK-LABEL: func.func @f64
// CHECK-NOT:     call
// CHECK:         linalg.batch_matmul
func.func @f64(%x: tensor<2x?x4x8x8xf64>, %w: tensor<2x6x4x3x3xf64>) -> tensor<2x?x6x6x6xf64> {
  %y = mbt.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<2x?x4x8x8xf64>, tensor<2x6x4x3x3xf64>) -> tensor<2x?x6x6x6xf64>
  return %y : tensor<2x?x6x6x6xf64>
}

// A product that rounds its operands to bf16 (fold-operand-rounding)
// calls the kernel that rounds them, `_bf16`.
// CHECK-LABEL: func.func @rounded
// CHECK:         call @mbt_rt_conv2d_f32_bf16(
// CHECK-NOT:     linalg.batch_matmul
func.func @rounded(%x: tensor<2x?x4x8x8xf32>, %w: tensor<2x6x4x3x3xf32>) -> tensor<2x?x6x6x6xf32> {
  %y = mbt.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64, mbt.round_operands_to = bf16} : (tensor<2x?x4x8x8xf32>, tensor<2x6x4x3x3xf32>) -> tensor<2x?x6x6x6xf32>
  return %y : tensor<2x?x6x6x6xf32>
}

// An f16 product keeps im2col and its GEMM (no kernel rounds to f16).
// CHECK-LABEL: func.func @rounded_f16
// CHECK-NOT:     call
// CHECK:         linalg.batch_matmul {{.*}}mbt.round_operands_to = f16
func.func @rounded_f16(%x: tensor<2x?x4x8x8xf32>, %w: tensor<2x6x4x3x3xf32>) -> tensor<2x?x6x6x6xf32> {
  %y = mbt.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64, mbt.round_operands_to = f16} : (tensor<2x?x4x8x8xf32>, tensor<2x6x4x3x3xf32>) -> tensor<2x?x6x6x6xf32>
  return %y : tensor<2x?x6x6x6xf32>
}
