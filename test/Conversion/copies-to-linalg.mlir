// RUN: mbt-opt --mbt-copies-to-linalg %s | FileCheck %s

// For the CUDA target every memref.copy becomes a linalg.copy (strided
// views included), which becomes a kernel like any other loop nest.
// CHECK-LABEL: func.func @copies(
// CHECK-SAME:      %[[A:.*]]: memref<4x?xf32>, %[[B:.*]]: memref<4x?xf32>, %[[C:.*]]: memref<8xf64, strided<[2]>>, %[[D:.*]]: memref<8xf64>)
// CHECK-NOT:     memref.copy
// CHECK:         linalg.copy ins(%[[A]] : memref<4x?xf32>) outs(%[[B]] : memref<4x?xf32>)
// CHECK:         linalg.copy ins(%[[C]] : memref<8xf64, strided<[2]>>) outs(%[[D]] : memref<8xf64>)
func.func @copies(%a: memref<4x?xf32>, %b: memref<4x?xf32>, %c: memref<8xf64, strided<[2]>>, %d: memref<8xf64>) {
  memref.copy %a, %b : memref<4x?xf32> to memref<4x?xf32>
  memref.copy %c, %d : memref<8xf64, strided<[2]>> to memref<8xf64>
  return
}
