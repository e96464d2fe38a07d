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

// -----

// An attention block's product is written through a transpose of its
// [rows, heads, 8] buffer, which is copied, collapsed, into its rows of the
// sample's [T, 32] result; that result is copied into the step's buffer
// after the loop over the blocks. Both copies go: the block's buffer
// becomes an expand_shape of the rows (of dynamic count), the transpose and
// the subview that read it are rebuilt on their new layouts, and the
// sample's result becomes its slice of the step's buffer.
// CHECK-LABEL: func.func @attention_rows
// CHECK:         %[[STEP:.*]] = memref.alloc(%{{.*}}) : memref<4x?x32xf32>
// CHECK:         scf.parallel (%[[S:.*]]) =
// CHECK-NOT:       memref.alloc
// CHECK:           %[[SAMPLE:.*]] = memref.subview %[[STEP]][%[[S]], 0, 0] [1, %{{.*}}, 32] [1, 1, 1] : memref<4x?x32xf32> to memref<?x32xf32, strided<[32, 1], offset: ?>>
// CHECK:           scf.for %[[R:.*]] =
// CHECK:             %[[ROWS:.*]] = memref.subview %[[SAMPLE]][%[[R]], 0] [%{{.*}}, 32] [1, 1] : memref<?x32xf32, strided<[32, 1], offset: ?>> to memref<?x32xf32, strided<[32, 1], offset: ?>>
// CHECK:             %[[HEADS:.*]] = memref.expand_shape %[[ROWS]] {{\[}}[0], [1, 2]] output_shape [%{{.*}}, 4, 8] : memref<?x32xf32, strided<[32, 1], offset: ?>> into memref<?x4x8xf32, strided<[32, 8, 1], offset: ?>>
// CHECK:             %[[T:.*]] = memref.transpose %[[HEADS]] (d0, d1, d2) -> (d1, d0, d2) : memref<?x4x8xf32, strided<[32, 8, 1], offset: ?>> to memref<4x?x8xf32, strided<[8, 32, 1], offset: ?>>
// CHECK:             %[[C:.*]] = memref.cast %[[T]]
// CHECK:             "test.product"(%[[C]])
// CHECK-NOT:     memref.copy
func.func @attention_rows(%t: index, %samples: index) -> memref<4x?x32xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %step = memref.alloc(%t) : memref<4x?x32xf32>
  scf.parallel (%s) = (%c0) to (%samples) step (%c1) {
    %sample = memref.alloc(%t) : memref<?x32xf32>
    scf.for %r = %c0 to %t step %c32 {
      %left = arith.subi %t, %r : index
      %n = arith.minsi %left, %c32 : index
      %block = memref.alloc(%n) : memref<?x4x8xf32>
      %bt = memref.transpose %block (d0, d1, d2) -> (d1, d0, d2) : memref<?x4x8xf32> to memref<4x?x8xf32, strided<[8, 32, 1]>>
      %cast = memref.cast %bt : memref<4x?x8xf32, strided<[8, 32, 1]>> to memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>
      "test.product"(%cast) : (memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>) -> ()
      %flat = memref.collapse_shape %block [[0], [1, 2]] : memref<?x4x8xf32> into memref<?x32xf32>
      %rows = memref.subview %sample[%r, 0] [%n, 32] [1, 1] : memref<?x32xf32> to memref<?x32xf32, strided<[32, 1], offset: ?>>
      memref.copy %flat, %rows : memref<?x32xf32> to memref<?x32xf32, strided<[32, 1], offset: ?>>
    }
    %dst = memref.subview %step[%s, 0, 0] [1, %t, 32] [1, 1, 1] : memref<4x?x32xf32> to memref<?x32xf32, strided<[32, 1], offset: ?>>
    memref.copy %sample, %dst : memref<?x32xf32> to memref<?x32xf32, strided<[32, 1], offset: ?>>
    scf.reduce
  }
  return %step : memref<4x?x32xf32>
}

// -----

// A user the pass cannot rebuild on another layout (a call, which takes
// the dense type), or one after the copy, keeps the copy.
// CHECK-LABEL: func.func @call_through_a_transpose
// CHECK:         memref.copy
// CHECK-LABEL: func.func @nested_user_after_the_copy
// CHECK:         memref.copy
func.func private @takes_transposed(memref<4x?x8xf32, strided<[8, 32, 1]>>)
func.func @call_through_a_transpose(%n: index, %rows: memref<?x32xf32>) {
  %block = memref.alloc(%n) : memref<?x4x8xf32>
  %bt = memref.transpose %block (d0, d1, d2) -> (d1, d0, d2) : memref<?x4x8xf32> to memref<4x?x8xf32, strided<[8, 32, 1]>>
  call @takes_transposed(%bt) : (memref<4x?x8xf32, strided<[8, 32, 1]>>) -> ()
  %flat = memref.collapse_shape %block [[0], [1, 2]] : memref<?x4x8xf32> into memref<?x32xf32>
  memref.copy %flat, %rows : memref<?x32xf32> to memref<?x32xf32>
  return
}
func.func @nested_user_after_the_copy(%x: f32, %n: index, %rows: memref<?x32xf32>, %out: memref<?x32xf32>, %steps: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = memref.alloc(%n) : memref<?x32xf32>
  linalg.fill ins(%x : f32) outs(%a : memref<?x32xf32>)
  memref.copy %a, %rows : memref<?x32xf32> to memref<?x32xf32>
  scf.for %i = %c0 to %steps step %c1 {
    linalg.copy ins(%a : memref<?x32xf32>) outs(%out : memref<?x32xf32>)
  }
  return
}

// -----

// An embedding's gradient, zeroed and then scattered into by loads and
// stores inside a loop, is accumulated in its columns of the flat buffer.
// CHECK-LABEL: func.func @scattered_gradient
// CHECK-NOT:     memref.alloc
// CHECK:         %[[COLS:.*]] = memref.subview %arg2[0, 3] [2, 8] [1, 1]
// CHECK:         %[[TABLE:.*]] = memref.expand_shape %[[COLS]]
// CHECK:         linalg.fill {{.*}} outs(%[[TABLE]] :
// CHECK:         scf.for
// CHECK:           memref.load %[[TABLE]]
// CHECK:           memref.store %{{.*}}, %[[TABLE]]
// CHECK-NOT:     memref.copy
func.func @scattered_gradient(%x: f32, %rows: memref<?xindex>, %flat: memref<2x20xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %rows, %c0 : memref<?xindex>
  %g = memref.alloc() : memref<2x4x2xf32>
  linalg.fill ins(%zero : f32) outs(%g : memref<2x4x2xf32>)
  scf.for %i = %c0 to %n step %c1 {
    %r = memref.load %rows[%i] : memref<?xindex>
    %old = memref.load %g[%c1, %r, %c0] : memref<2x4x2xf32>
    %new = arith.addf %old, %x : f32
    memref.store %new, %g[%c1, %r, %c0] : memref<2x4x2xf32>
  }
  %flatg = memref.collapse_shape %g [[0], [1, 2]] : memref<2x4x2xf32> into memref<2x8xf32>
  %cols = memref.subview %flat[0, 3] [2, 8] [1, 1] : memref<2x20xf32> to memref<2x8xf32, strided<[20, 1], offset: 3>>
  memref.copy %flatg, %cols : memref<2x8xf32> to memref<2x8xf32, strided<[20, 1], offset: 3>>
  return
}
