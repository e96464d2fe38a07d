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

// -----

// A recurrence's step writes its gates at position t into their columns of
// the rows at t: subviews of dynamic size that take disjoint static ranges
// of the last dimension. Each gate is computed in its columns, whatever the
// other gates' writes in between; the rows at t stay defined above.
// CHECK-LABEL: func.func @gates_into_their_columns_at_t
// CHECK:         scf.for %[[T:.*]] =
// CHECK-NOT:       memref.alloc
// CHECK:           %[[ROWS:.*]] = memref.subview %{{.*}}[0, %[[T]], 0] [%{{.*}}, 1, 64]
// CHECK-DAG:       %[[G0:.*]] = memref.subview %[[ROWS]][0, 0] [%{{.*}}, 32]
// CHECK-DAG:       %[[G1:.*]] = memref.subview %[[ROWS]][0, 32] [%{{.*}}, 32]
// CHECK:           linalg.generic {{.*}} outs(%[[G0]], %[[G1]] :
// CHECK-NOT:       memref.copy
func.func @gates_into_their_columns_at_t(%x: memref<?x32xf32>, %n: index, %steps: index) -> memref<?x?x64xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %gates = memref.alloc(%n, %steps) : memref<?x?x64xf32>
  scf.for %t = %c0 to %steps step %c1 {
    %rows = memref.subview %gates[0, %t, 0] [%n, 1, 64] [1, 1, 1] : memref<?x?x64xf32> to memref<?x64xf32, strided<[?, 1], offset: ?>>
    %a = memref.alloc(%n) : memref<?x32xf32>
    %b = memref.alloc(%n) : memref<?x32xf32>
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<?x32xf32>) outs(%a, %b : memref<?x32xf32>, memref<?x32xf32>) {
    ^bb0(%in: f32, %o0: f32, %o1: f32):
      %neg = arith.negf %in : f32
      linalg.yield %in, %neg : f32, f32
    }
    %g0 = memref.subview %rows[0, 0] [%n, 32] [1, 1] : memref<?x64xf32, strided<[?, 1], offset: ?>> to memref<?x32xf32, strided<[?, 1], offset: ?>>
    memref.copy %a, %g0 : memref<?x32xf32> to memref<?x32xf32, strided<[?, 1], offset: ?>>
    %g1 = memref.subview %rows[0, 32] [%n, 32] [1, 1] : memref<?x64xf32, strided<[?, 1], offset: ?>> to memref<?x32xf32, strided<[?, 1], offset: ?>>
    memref.copy %b, %g1 : memref<?x32xf32> to memref<?x32xf32, strided<[?, 1], offset: ?>>
  }
  return %gates : memref<?x?x64xf32>
}

// -----

// Columns that may overlap (a dynamic offset), a destination viewed through
// a loop's carried buffer (which may alias another), and a destination
// whose offset is computed after the allocation keep their copies.
// CHECK-LABEL: func.func @dynamic_offset_may_overlap
// CHECK:         memref.copy
// CHECK-LABEL: func.func @carried_buffer
// CHECK:         memref.copy
// CHECK-LABEL: func.func @offset_computed_after_the_allocation
// CHECK:         memref.copy
func.func @dynamic_offset_may_overlap(%x: f32, %n: index, %k: index, %rows: memref<?x64xf32>) {
  %a = memref.alloc(%n) : memref<?x32xf32>
  linalg.fill ins(%x : f32) outs(%a : memref<?x32xf32>)
  %other = memref.subview %rows[0, %k] [%n, 32] [1, 1] : memref<?x64xf32> to memref<?x32xf32, strided<[64, 1], offset: ?>>
  linalg.fill ins(%x : f32) outs(%other : memref<?x32xf32, strided<[64, 1], offset: ?>>)
  %dst = memref.subview %rows[0, 0] [%n, 32] [1, 1] : memref<?x64xf32> to memref<?x32xf32, strided<[64, 1]>>
  memref.copy %a, %dst : memref<?x32xf32> to memref<?x32xf32, strided<[64, 1]>>
  return
}
func.func @carried_buffer(%x: f32, %init: memref<4x8xf32>, %steps: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %t = %c0 to %steps step %c1 iter_args(%carried = %init) -> (memref<4x8xf32>) {
    %a = memref.alloc() : memref<4x8xf32>
    linalg.fill ins(%x : f32) outs(%a : memref<4x8xf32>)
    "test.read"(%init) : (memref<4x8xf32>) -> ()
    memref.copy %a, %carried : memref<4x8xf32> to memref<4x8xf32>
    scf.yield %carried : memref<4x8xf32>
  }
  return
}
func.func @offset_computed_after_the_allocation(%x: f32, %n: index, %rows: memref<?x64xf32>) {
  %a = memref.alloc(%n) : memref<?x32xf32>
  linalg.fill ins(%x : f32) outs(%a : memref<?x32xf32>)
  %k = "test.offset"() : () -> index
  %dst = memref.subview %rows[0, %k] [%n, 32] [1, 1] : memref<?x64xf32> to memref<?x32xf32, strided<[64, 1], offset: ?>>
  memref.copy %a, %dst : memref<?x32xf32> to memref<?x32xf32, strided<[64, 1], offset: ?>>
  return
}
