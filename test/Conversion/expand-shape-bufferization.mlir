// RUN: mbt-opt --one-shot-bufferize="bufferize-function-boundaries" --split-input-file %s | FileCheck %s --check-prefix=BUF
// RUN: mbt-opt --one-shot-bufferize="bufferize-function-boundaries" --mbt-resolve-dynamic-expand-shapes --split-input-file %s | FileCheck %s --check-prefix=VIEW

// The rows of a [M, B T, D] product read as [M, B, T, D] sequences: an
// expand_shape of two dynamic sizes in one group. mbt's bufferization
// model makes it a memref.expand_shape of the same output shape (MLIR 19's
// own inferred none, and its op failed to verify);
// mbt-resolve-dynamic-expand-shapes writes the view out so that
// expand-strided-metadata, which crashes on it, never sees it.

// BUF-LABEL: func.func @split
// BUF-SAME:    (%[[M:.*]]: memref<4x?x32xf32, strided<[?, ?, ?], offset: ?>>, %[[B:.*]]: index, %[[T:.*]]: index)
// BUF:         %[[E:.*]] = memref.expand_shape %[[M]] {{\[\[}}0], [1, 2], [3]] output_shape [4, %[[B]], %[[T]], 32]
// BUF-NOT:     memref.copy
// BUF:         return %[[E]]

// VIEW-LABEL: func.func @split
// VIEW-SAME:    (%[[M:.*]]: memref<4x?x32xf32, strided<[?, ?, ?], offset: ?>>, %[[B:.*]]: index, %[[T:.*]]: index)
// VIEW:         %{{.*}}, %[[OFF:.*]], %{{.*}}:3, %[[S:.*]]:3 = memref.extract_strided_metadata %[[M]]
// VIEW:         %[[ROWS:.*]] = arith.muli %[[S]]#1, %[[T]] : index
// VIEW:         memref.reinterpret_cast %{{.*}} to offset: [%[[OFF]]], sizes: [4, %[[B]], %[[T]], 32], strides: [%[[S]]#0, %[[ROWS]], %[[S]]#1, %[[S]]#2]
// VIEW-NOT:     memref.expand_shape
func.func @split(%m: tensor<4x?x32xf32>, %b: index, %t: index)
    -> tensor<4x?x?x32xf32> {
  %e = tensor.expand_shape %m [[0], [1, 2], [3]] output_shape [4, %b, %t, 32]
      : tensor<4x?x32xf32> into tensor<4x?x?x32xf32>
  return %e : tensor<4x?x?x32xf32>
}

// -----

// A group of one dynamic size is left to upstream.

// VIEW-LABEL: func.func @heads
// VIEW-NOT:     memref.reinterpret_cast
// VIEW:         memref.expand_shape %{{.*}} {{\[\[}}0], [1, 2]] output_shape [%{{.*}}, 4, 8]
func.func @heads(%m: tensor<?x32xf32>) -> tensor<?x4x8xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %m, %c0 : tensor<?x32xf32>
  %e = tensor.expand_shape %m [[0], [1, 2]] output_shape [%n, 4, 8]
      : tensor<?x32xf32> into tensor<?x4x8xf32>
  return %e : tensor<?x4x8xf32>
}
