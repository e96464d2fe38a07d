// RUN: mbt-opt --mbt-outer-parallel-loops=min-iterations=1000 -split-input-file %s | FileCheck %s
// RUN: mbt-opt --mbt-outer-parallel-loops -split-input-file %s | FileCheck %s --check-prefix=DEFAULT

// A large nest keeps its outermost (model) dimension parallel; the other
// dimensions become serial loops inside it.
// CHECK-LABEL: func.func @model_loop
// CHECK:         scf.parallel (%[[M:.*]]) = (%c0) to (%c64) step (%c1) {
// CHECK-NEXT:      scf.for %[[B:.*]] = %c0 to %{{.*}} step %c1 {
// CHECK-NEXT:        scf.for %[[J:.*]] = %c0 to %c128 step %c1 {
// CHECK-NEXT:          memref.load %arg0[%[[M]], %[[B]], %[[J]]]
// CHECK-NOT:     scf.parallel
func.func @model_loop(%a: memref<64x?x128xf32>, %b: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  scf.parallel (%m, %i, %j) = (%c0, %c0, %c0) to (%c64, %b, %c128) step (%c1, %c1, %c1) {
    %v = memref.load %a[%m, %i, %j] : memref<64x?x128xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %a[%m, %i, %j] : memref<64x?x128xf32>
    scf.reduce
  }
  return
}

// -----

// A parallel loop nested under a reduction's scf.for runs serially, inside
// the outer parallel loop: no parallel region opens inside another.
// CHECK-LABEL: func.func @nested
// CHECK:         scf.parallel
// CHECK:           scf.for
// CHECK-NOT:         scf.parallel
// CHECK:             scf.for
func.func @nested(%a: memref<64x300x16xf32>, %out: memref<64x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %c300 = arith.constant 300 : index
  scf.parallel (%m) = (%c0) to (%c64) step (%c1) {
    scf.for %r = %c0 to %c300 step %c1 {
      scf.parallel (%j) = (%c0) to (%c16) step (%c1) {
        %v = memref.load %a[%m, %r, %j] : memref<64x300x16xf32>
        %acc = memref.load %out[%m, %j] : memref<64x16xf32>
        %s = arith.addf %acc, %v : f32
        memref.store %s, %out[%m, %j] : memref<64x16xf32>
        scf.reduce
      }
    }
    scf.reduce
  }
  return
}

// -----

// Too little work, or one model only: all serial.
// CHECK-LABEL: func.func @small_and_single
// CHECK-NOT:     scf.parallel
func.func @small_and_single(%a: memref<4x8xf32>, %b: memref<1x5000xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c5000 = arith.constant 5000 : index
  scf.parallel (%m, %j) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1) {
    %v = memref.load %a[%m, %j] : memref<4x8xf32>
    memref.store %v, %a[%m, %j] : memref<4x8xf32>
    scf.reduce
  }
  scf.parallel (%m, %j) = (%c0, %c0) to (%c1, %c5000) step (%c1, %c1) {
    %v = memref.load %b[%m, %j] : memref<1x5000xf32>
    memref.store %v, %b[%m, %j] : memref<1x5000xf32>
    scf.reduce
  }
  return
}

// -----

// Inside a sequential loop (a recurrence over positions) a nest opens a
// parallel region at every iteration: it needs 16 times the work (with
// the default min-iterations, 32768). The
// first nest (4 x 128 x 96 = 49,152 iterations, with the batch assumed
// 128) would be parallel on its own but runs serially in the loop; the
// second (64 x 128 x 96) stays parallel.
// CHECK-LABEL: func.func @in_a_recurrence
// DEFAULT-LABEL: func.func @in_a_recurrence
// DEFAULT:         scf.for
// DEFAULT-NOT:       scf.parallel (%{{.*}}) = (%c0) to (%c4)
// DEFAULT:           scf.parallel (%{{.*}}) = (%c0) to (%c64)
// DEFAULT-LABEL: func.func @alone
// DEFAULT:         scf.parallel (%{{.*}}) = (%c0) to (%c4)
func.func @in_a_recurrence(%a: memref<4x?x96xf32>, %big: memref<64x?x96xf32>,
                           %b: index, %t: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %c96 = arith.constant 96 : index
  scf.for %p = %c0 to %t step %c1 {
    scf.parallel (%m, %i, %j) = (%c0, %c0, %c0) to (%c4, %b, %c96) step (%c1, %c1, %c1) {
      %v = memref.load %a[%m, %i, %j] : memref<4x?x96xf32>
      memref.store %v, %a[%m, %i, %j] : memref<4x?x96xf32>
      scf.reduce
    }
    scf.parallel (%m, %i, %j) = (%c0, %c0, %c0) to (%c64, %b, %c96) step (%c1, %c1, %c1) {
      %v = memref.load %big[%m, %i, %j] : memref<64x?x96xf32>
      memref.store %v, %big[%m, %i, %j] : memref<64x?x96xf32>
      scf.reduce
    }
  }
  return
}
func.func @alone(%a: memref<4x?x96xf32>, %b: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c96 = arith.constant 96 : index
  scf.parallel (%m, %i, %j) = (%c0, %c0, %c0) to (%c4, %b, %c96) step (%c1, %c1, %c1) {
    %v = memref.load %a[%m, %i, %j] : memref<4x?x96xf32>
    memref.store %v, %a[%m, %i, %j] : memref<4x?x96xf32>
    scf.reduce
  }
  return
}

// -----

// A nest outside any sequential loop whose estimate (4 x 128 x 32 =
// 16,384, with the dynamic size counted 128) is below min-iterations, but
// whose dynamic size may be thousands (the B T rows of a product): both
// forms, under an scf.if on the real count (4 x n x 32, times 1 for its
// body) against 32768. A static nest that small stays serial, with no if
// (@small_and_single); inside a sequential loop the estimate stands
// (@in_a_recurrence).
// DEFAULT-LABEL: func.func @rows_of_a_product
// DEFAULT-SAME:    (%[[A:.*]]: memref<4x?x32xf32>, %[[N:.*]]: index)
// DEFAULT:         %[[COUNT:.*]] = arith.muli %{{.*}}, %c32 : index
// DEFAULT:         %[[NEEDED:.*]] = arith.constant 32768 : index
// DEFAULT:         %[[ENOUGH:.*]] = arith.cmpi sge, %[[COUNT]], %[[NEEDED]] : index
// DEFAULT:         scf.if %[[ENOUGH]] {
// DEFAULT-NEXT:      scf.parallel (%[[M:.*]]) = (%c0) to (%c4) step (%c1) {
// DEFAULT-NEXT:        scf.for %{{.*}} = %c0 to %[[N]] step %c1 {
// DEFAULT-NEXT:          scf.for %{{.*}} = %c0 to %c32 step %c1 {
// DEFAULT:         } else {
// DEFAULT-NEXT:      scf.for %{{.*}} = %c0 to %c4 step %c1 {
// DEFAULT-NEXT:        scf.for %{{.*}} = %c0 to %[[N]] step %c1 {
// DEFAULT-NOT:     scf.parallel
// DEFAULT:         return
func.func @rows_of_a_product(%a: memref<4x?x32xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  scf.parallel (%m, %i, %j) = (%c0, %c0, %c0) to (%c4, %n, %c32) step (%c1, %c1, %c1) {
    %v = memref.load %a[%m, %i, %j] : memref<4x?x32xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %a[%m, %i, %j] : memref<4x?x32xf32>
    scf.reduce
  }
  return
}
