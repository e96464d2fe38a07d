// RUN: mbt-opt --mbt-elide-copies -split-input-file -allow-unregistered-dialect %s | FileCheck %s

// A gradient computed in its own buffer and copied, flattened, into its
// columns of the flat [M, P] buffer is computed in those columns instead:
// the destination moves above the allocation, the producers write into an
// expand_shape of it, and the copy, the collapse and the allocation go.
// CHECK-LABEL: func.func @gradient_into_flat_buffer
// CHECK:         %[[FLAT:.*]] = memref.alloc() : memref<2x20xf32>
// CHECK:         %[[COLS:.*]] = memref.subview %[[FLAT]][0, 4] [2, 12] [1, 1]
// CHECK:         %[[VIEW:.*]] = memref.expand_shape %[[COLS]] {{\[}}[0], [1, 2]] output_shape [2, 3, 4]
// CHECK:         linalg.fill {{.*}} outs(%[[VIEW]] : memref<2x3x4xf32, strided<[20, 4, 1], offset: 4>>)
// CHECK:         memref.cast %[[VIEW]]
// CHECK:         "test.write"
// CHECK-NOT:     memref.copy
// CHECK:         "test.read"(%[[FLAT]])
func.func @gradient_into_flat_buffer(%x: f32) {
  %g = memref.alloc() : memref<2x3x4xf32>
  linalg.fill ins(%x : f32) outs(%g : memref<2x3x4xf32>)
  %cast = memref.cast %g : memref<2x3x4xf32> to memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>
  "test.write"(%cast) : (memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>) -> ()
  %flat = memref.alloc() : memref<2x20xf32>
  %rows = memref.collapse_shape %g [[0], [1, 2]] : memref<2x3x4xf32> into memref<2x12xf32>
  %cols = memref.subview %flat[0, 4] [2, 12] [1, 1] : memref<2x20xf32> to memref<2x12xf32, strided<[20, 1], offset: 4>>
  memref.copy %rows, %cols : memref<2x12xf32> to memref<2x12xf32, strided<[20, 1], offset: 4>>
  "test.read"(%flat) : (memref<2x20xf32>) -> ()
  return
}

// -----

// A write to other columns of the same buffer in between does not stop it;
// one to overlapping columns does.
// CHECK-LABEL: func.func @disjoint_and_overlapping_writes
// CHECK-NOT:     memref.copy
// CHECK:         memref.copy %{{.*}}, %{{.*}} : memref<2x4xf32> to memref<2x4xf32, strided<[20, 1], offset: 2>>
// CHECK-NOT:     memref.copy
func.func @disjoint_and_overlapping_writes(%x: f32, %flat: memref<2x20xf32>) {
  %a = memref.alloc() : memref<2x4xf32>
  linalg.fill ins(%x : f32) outs(%a : memref<2x4xf32>)
  %other = memref.subview %flat[0, 10] [2, 4] [1, 1] : memref<2x20xf32> to memref<2x4xf32, strided<[20, 1], offset: 10>>
  linalg.fill ins(%x : f32) outs(%other : memref<2x4xf32, strided<[20, 1], offset: 10>>)
  %dst = memref.subview %flat[0, 0] [2, 4] [1, 1] : memref<2x20xf32> to memref<2x4xf32, strided<[20, 1]>>
  memref.copy %a, %dst : memref<2x4xf32> to memref<2x4xf32, strided<[20, 1]>>

  %b = memref.alloc() : memref<2x4xf32>
  linalg.fill ins(%x : f32) outs(%b : memref<2x4xf32>)
  %overlap = memref.subview %flat[0, 4] [2, 4] [1, 1] : memref<2x20xf32> to memref<2x4xf32, strided<[20, 1], offset: 4>>
  linalg.fill ins(%x : f32) outs(%overlap : memref<2x4xf32, strided<[20, 1], offset: 4>>)
  %dst2 = memref.subview %flat[0, 2] [2, 4] [1, 1] : memref<2x20xf32> to memref<2x4xf32, strided<[20, 1], offset: 2>>
  memref.copy %b, %dst2 : memref<2x4xf32> to memref<2x4xf32, strided<[20, 1], offset: 2>>
  return
}

// -----

// A buffer read after the copy, or passed where only its own type fits,
// keeps its copy.
// CHECK-LABEL: func.func @used_after_the_copy
// CHECK: memref.copy
// CHECK-LABEL: func.func @user_needs_identity_layout
// CHECK: memref.copy
func.func @used_after_the_copy(%x: f32, %flat: memref<2x20xf32>) {
  %a = memref.alloc() : memref<2x4xf32>
  linalg.fill ins(%x : f32) outs(%a : memref<2x4xf32>)
  %dst = memref.subview %flat[0, 0] [2, 4] [1, 1] : memref<2x20xf32> to memref<2x4xf32, strided<[20, 1]>>
  memref.copy %a, %dst : memref<2x4xf32> to memref<2x4xf32, strided<[20, 1]>>
  "test.read"(%a) : (memref<2x4xf32>) -> ()
  return
}
func.func private @takes_dense(memref<2x4xf32>)
func.func @user_needs_identity_layout(%x: f32, %flat: memref<2x20xf32>) {
  %a = memref.alloc() : memref<2x4xf32>
  call @takes_dense(%a) : (memref<2x4xf32>) -> ()
  %dst = memref.subview %flat[0, 0] [2, 4] [1, 1] : memref<2x20xf32> to memref<2x4xf32, strided<[20, 1]>>
  memref.copy %a, %dst : memref<2x4xf32> to memref<2x4xf32, strided<[20, 1]>>
  return
}

// -----

// A result copied into the function's output argument is computed there.
// CHECK-LABEL: func.func @into_an_argument
// CHECK-NOT:     memref.alloc
// CHECK:         linalg.fill {{.*}} outs(%arg1 : memref<4x1xf32>)
// CHECK-NOT:     memref.copy
func.func @into_an_argument(%x: f32, %out: memref<4x1xf32>) {
  %a = memref.alloc() : memref<4x1xf32>
  linalg.fill ins(%x : f32) outs(%a : memref<4x1xf32>)
  memref.copy %a, %out : memref<4x1xf32> to memref<4x1xf32>
  return
}
