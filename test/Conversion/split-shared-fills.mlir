// RUN: mbt-opt --mbt-split-shared-fills %s | FileCheck %s
// RUN: mbt-opt --mbt-split-shared-fills --one-shot-bufferize="bufferize-function-boundaries" %s | FileCheck %s --check-prefix=BUF
// RUN: mbt-opt --one-shot-bufferize="bufferize-function-boundaries" %s | FileCheck %s --check-prefix=SHARED

// Two products start from one fill of zeros: the second gets its own empty
// tensor and fill, just before it.
// CHECK-LABEL: func.func @two_products(
// CHECK-SAME:      %[[A:[^:]*]]: tensor<4x8x8xf32>, %[[N:[^:]*]]: index)
// CHECK:         %[[ZERO:.*]] = arith.constant 0.0
// CHECK:         %[[E1:.*]] = tensor.empty(%[[N]])
// CHECK:         %[[F1:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E1]] :
// CHECK:         %[[P:.*]] = linalg.batch_matmul ins(%[[A]], %[[A]] : {{.*}}) outs(%[[F1]] :
// CHECK:         %[[E2:.*]] = tensor.empty(%[[N]])
// CHECK:         %[[F2:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E2]] :
// CHECK:         %[[Q:.*]] = linalg.batch_matmul ins(%[[A]], %{{.*}} : {{.*}}) outs(%[[F2]] :
// CHECK:         return %[[Q]]
//
// Bufferized, each product fills its own buffer and writes in place;
// without the split the fill's buffer is copied for the second.
// BUF-LABEL:   func.func @two_products(
// BUF-NOT:       memref.copy
// BUF:           return
// SHARED-LABEL: func.func @two_products(
// SHARED:         memref.copy
func.func @two_products(%a: tensor<4x8x8xf32>, %n: index) -> tensor<4x8x?xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%n) : tensor<4x8x?xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8x?xf32>) -> tensor<4x8x?xf32>
  %b = tensor.cast %a : tensor<4x8x8xf32> to tensor<4x8x?xf32>
  %p = linalg.batch_matmul ins(%a, %a : tensor<4x8x8xf32>, tensor<4x8x8xf32>)
      outs(%z : tensor<4x8x?xf32>) -> tensor<4x8x?xf32>
  %pc = tensor.cast %p : tensor<4x8x?xf32> to tensor<4x8x8xf32>
  %q = linalg.batch_matmul ins(%a, %pc : tensor<4x8x8xf32>, tensor<4x8x8xf32>)
      outs(%z : tensor<4x8x?xf32>) -> tensor<4x8x?xf32>
  return %q : tensor<4x8x?xf32>
}

// A fill that is also read: every writer gets its own, the readers keep
// the original.
// CHECK-LABEL: func.func @read_and_written(
// CHECK:         %[[Z:.*]] = linalg.fill
// CHECK:         %[[OWN:.*]] = linalg.fill
// CHECK:         linalg.generic {{.*}} ins(%[[Z]] : tensor<16xf32>) outs(%[[OWN]] : tensor<16xf32>)
func.func @read_and_written(%n: index) -> tensor<16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}
      ins(%z : tensor<16xf32>) outs(%z : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  return %r : tensor<16xf32>
}

// A fill of a tensor that is not a fresh tensor.empty (the caller's) and a
// fill with one use stay as they are.
// CHECK-LABEL: func.func @left_alone(
// CHECK-COUNT-2: linalg.fill
// CHECK-NOT:     linalg.fill
// CHECK:         return
func.func @left_alone(%t: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) {
  %zero = arith.constant 0.0 : f32
  %z = linalg.fill ins(%zero : f32) outs(%t : tensor<16xf32>) -> tensor<16xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      outs(%z : tensor<16xf32>) {
  ^bb0(%out: f32):
    %s = arith.addf %out, %out : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      outs(%z : tensor<16xf32>) {
  ^bb0(%out: f32):
    %s = arith.mulf %out, %out : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  %e = tensor.empty() : tensor<16xf32>
  %once = linalg.fill ins(%zero : f32) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  return %a, %b, %once : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
}
