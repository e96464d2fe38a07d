// RUN: mbt-opt --mbt-plan-workspace --canonicalize -split-input-file -allow-unregistered-dialect %s | FileCheck %s
// RUN: mbt-opt --mbt-plan-workspace=remarks=true -split-input-file -allow-unregistered-dialect %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK

// With remarks, each function's plan is reported.
// REMARK: remark: workspace of 'slots': 4 temporaries in 3 slots, 0 left to malloc
// REMARK: remark: workspace of 'live_through_view': 2 temporaries in 2 slots, 0 left to malloc
// REMARK: remark: workspace of 'batch_sized': 1 temporary in 1 slot, 0 left to malloc
// REMARK: remark: workspace of 'token_rows': 3 temporaries in 2 slots, 0 left to malloc
// REMARK: remark: workspace of 'unplanned': 0 temporaries in 0 slots, 4 left to malloc

// Every allocation becomes a view of the new last argument. Buffers of the
// same byte size share a slot once the earlier one is dead (%a's last use
// comes before %b's allocation, whatever their shapes); a buffer still in
// use (%b, when %d is allocated) keeps its slot. Slots are 64-byte aligned
// (the 24-byte f64 buffer takes 64), and the size function returns their
// sum: 128 + 64 + 128.
// CHECK-LABEL: func.func @slots(
// CHECK-SAME:      %[[X:.*]]: f32, %[[WS:.*]]: memref<?xi8>)
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C128:.*]] = arith.constant 128 : index
// CHECK-DAG:     %[[C192:.*]] = arith.constant 192 : index
// CHECK-NOT:     memref.alloc
// CHECK:         %[[A:.*]] = memref.view %[[WS]][%[[C0]]][] : memref<?xi8> to memref<4x8xf32>
// CHECK:         linalg.fill ins(%[[X]] : f32) outs(%[[A]] : memref<4x8xf32>)
// CHECK:         %[[B:.*]] = memref.view %[[WS]][%[[C0]]][] : memref<?xi8> to memref<32xf32>
// CHECK:         %[[C:.*]] = memref.view %[[WS]][%[[C128]]][] : memref<?xi8> to memref<3xf64>
// CHECK:         %[[D:.*]] = memref.view %[[WS]][%[[C192]]][] : memref<?xi8> to memref<32xf32>
// CHECK:         "test.read"(%[[B]], %[[D]])
// CHECK-LABEL: func.func @slots_workspace_bytes(
// CHECK-SAME:      %{{.*}}: f32) -> i64 attributes {llvm.emit_c_interface}
// CHECK:         %[[TOTAL:.*]] = arith.constant 320 : i64
// CHECK:         return %[[TOTAL]]
func.func @slots(%x: f32) {
  %a = memref.alloc() : memref<4x8xf32>
  linalg.fill ins(%x : f32) outs(%a : memref<4x8xf32>)
  "test.read"(%a) : (memref<4x8xf32>) -> ()
  %b = memref.alloc() : memref<32xf32>
  %c = memref.alloc() : memref<3xf64>
  "test.read"(%b, %c) : (memref<32xf32>, memref<3xf64>) -> ()
  %d = memref.alloc() : memref<32xf32>
  "test.read"(%b, %d) : (memref<32xf32>, memref<32xf32>) -> ()
  return
}

// -----

// A use through a view keeps the buffer alive: %a is read through its
// subview after %b is allocated, so they take different slots.
// CHECK-LABEL: func.func @live_through_view(
// CHECK-SAME:      %[[WS:.*]]: memref<?xi8>)
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C64:.*]] = arith.constant 64 : index
// CHECK:         memref.view %[[WS]][%[[C0]]][] : memref<?xi8> to memref<16xf32>
// CHECK:         memref.view %[[WS]][%[[C64]]][] : memref<?xi8> to memref<16xf32>
// CHECK:         arith.constant 128 : i64
func.func @live_through_view() {
  %a = memref.alloc() : memref<16xf32>
  %s = memref.subview %a[0] [8] [1] : memref<16xf32> to memref<8xf32, strided<[1]>>
  "test.write"(%a) : (memref<16xf32>) -> ()
  %b = memref.alloc() : memref<16xf32>
  "test.read"(%s, %b) : (memref<8xf32, strided<[1]>>, memref<16xf32>) -> ()
  return
}

// -----

// A dynamic size that is a dimension of an argument: the view keeps it,
// and the size function reads it from its own argument.
// CHECK-LABEL: func.func @batch_sized(
// CHECK-SAME:      %[[ARG:.*]]: memref<2x?x5xf32>, %[[WS:.*]]: memref<?xi8>)
// CHECK:         %[[N:.*]] = memref.dim %[[ARG]]
// CHECK:         memref.view %[[WS]][%{{.*}}][%[[N]]] : memref<?xi8> to memref<2x?xf32>
// CHECK-LABEL: func.func @batch_sized_workspace_bytes(
// CHECK-SAME:      %[[SARG:.*]]: memref<2x?x5xf32>) -> i64
// CHECK:         %[[SN:.*]] = memref.dim %[[SARG]], %{{.*}} : memref<2x?x5xf32>
// CHECK:         %[[BYTES:.*]] = arith.muli %[[SN]], %c8 : index
// CHECK:         %[[PADDED:.*]] = arith.addi %[[BYTES]], %c63 : index
// CHECK:         %[[ALIGNED:.*]] = arith.andi %[[PADDED]], %c-64 : index
// CHECK:         %[[I64:.*]] = arith.index_cast %[[ALIGNED]] : index to i64
// CHECK:         return %[[I64]] : i64
func.func @batch_sized(%arg: memref<2x?x5xf32>) {
  %c1 = arith.constant 1 : index
  %n = memref.dim %arg, %c1 : memref<2x?x5xf32>
  %a = memref.alloc(%n) : memref<2x?xf32>
  "test.read"(%a) : (memref<2x?xf32>) -> ()
  return
}

// -----

// A size that is a product of argument dimensions (the B * T rows of a
// token batch's activations, as affine.apply or arith.muli computes it) is
// planned too; [B, T] and [T, B] products of the same bytes share a slot. A
// buffer read through memref.transpose (what mbt-linalg-to-blas makes of
// a matmul's operands) stays alive through that view.
// CHECK-LABEL: func.func @token_rows(
// CHECK-SAME:      %[[X:.*]]: memref<4x?x?xi32>, %[[WS:.*]]: memref<?xi8>)
// CHECK-NOT:     memref.alloc
// CHECK:         %[[ROWS:.*]] = memref.view %[[WS]][%{{.*}}][%{{.*}}] : memref<?xi8> to memref<4x?x32xf32>
// CHECK:         %[[HEADS:.*]] = memref.view %[[WS]][%{{.*}}][%{{.*}}, %{{.*}}] : memref<?xi8> to memref<4x?x?x32xf32>
// CHECK:         memref.transpose %[[HEADS]]
// CHECK:         %[[AGAIN:.*]] = memref.view %[[WS]][%{{.*}}][%{{.*}}] : memref<?xi8> to memref<4x?x32xf32>
// CHECK-LABEL: func.func @token_rows_workspace_bytes(
func.func @token_rows(%x: memref<4x?x?xi32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %b = memref.dim %x, %c1 : memref<4x?x?xi32>
  %t = memref.dim %x, %c2 : memref<4x?x?xi32>
  %bt = affine.apply affine_map<()[s0, s1] -> (s0 * s1)>()[%b, %t]
  %rows = memref.alloc(%bt) : memref<4x?x32xf32>
  "test.read"(%rows) : (memref<4x?x32xf32>) -> ()
  %heads = memref.alloc(%t, %b) : memref<4x?x?x32xf32>
  %view = memref.transpose %heads (d0, d1, d2, d3) -> (d0, d2, d1, d3) : memref<4x?x?x32xf32> to memref<4x?x?x32xf32, strided<[?, 32, ?, 1]>>
  %tb = arith.muli %t, %b : index
  %again = memref.alloc(%tb) : memref<4x?x32xf32>
  "test.read"(%view, %again) : (memref<4x?x?x32xf32, strided<[?, 32, ?, 1]>>, memref<4x?x32xf32>) -> ()
  return
}

// -----

// A constant factor of such a product (the M * B sequences of M models
// whose leading dims are collapsed) is part of the static bytes: the
// [4 * B, T, 8] buffer is 4 * 8 * 4 bytes times B * T, as the prologue
// computes it. A size with a factor of 0 stays with malloc.
// CHECK-LABEL: func.func @model_sequences(
// CHECK-SAME:      %[[X:.*]]: memref<4x?x?xi32>, %[[WS:.*]]: memref<?xi8>)
// CHECK:         memref.view %[[WS]][%{{.*}}][%{{.*}}, %{{.*}}] : memref<?xi8> to memref<?x?x8xf32>
// CHECK:         memref.alloc
// CHECK-LABEL: func.func @model_sequences_workspace_bytes(
// CHECK:         arith.muli %{{.*}}, %c128
func.func @model_sequences(%x: memref<4x?x?xi32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %b = memref.dim %x, %c1 : memref<4x?x?xi32>
  %t = memref.dim %x, %c2 : memref<4x?x?xi32>
  %s = affine.apply affine_map<()[s0] -> (s0 * 4)>()[%b]
  %sequences = memref.alloc(%s, %t) : memref<?x?x8xf32>
  %none = affine.apply affine_map<()[s0] -> (s0 * 0)>()[%b]
  %empty = memref.alloc(%none, %t) : memref<?x?x8xf32>
  "test.read"(%sequences, %empty) : (memref<?x?x8xf32>, memref<?x?x8xf32>) -> ()
  return
}

// -----

// Left to malloc: a returned buffer, one turned into a memref by an op that
// is not a view, one whose size is not an argument's dimension, and one in
// a nested region. The function still takes a workspace (of 0 bytes).
// CHECK-LABEL: func.func @unplanned(
// CHECK-SAME:      %{{.*}}: index, %{{.*}}: memref<?xi8>) -> memref<4xf32>
// CHECK-COUNT-4: memref.alloc
// CHECK-NOT:     memref.view
// CHECK-LABEL: func.func @unplanned_workspace_bytes(
// CHECK:         arith.constant 0 : i64
func.func @unplanned(%n: index) -> memref<4xf32> {
  %returned = memref.alloc() : memref<4xf32>
  %laundered = memref.alloc() : memref<4xf32>
  %other = "test.wrap"(%laundered) : (memref<4xf32>) -> memref<4xf32>
  %sized = memref.alloc(%n) : memref<?xf32>
  "test.read"(%other, %sized) : (memref<4xf32>, memref<?xf32>) -> ()
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %nested = memref.alloc() : memref<4xf32>
    "test.read"(%nested) : (memref<4xf32>) -> ()
  }
  return %returned : memref<4xf32>
}

// -----

// Private functions, declarations, and entry points that already have
// their workspace function are left alone: running the pass twice changes
// nothing.
// CHECK-LABEL: func.func private @helper()
// CHECK:         memref.alloc
// CHECK-LABEL: func.func @planned(
// CHECK-SAME:      %{{.*}}: memref<?xi8>) {
// CHECK-NOT:     memref.alloc
// CHECK-LABEL: func.func @planned_workspace_bytes()
func.func private @helper() {
  %a = memref.alloc() : memref<4xf32>
  "test.read"(%a) : (memref<4xf32>) -> ()
  return
}
func.func private @external(memref<4xf32>)
func.func @planned(%ws: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %a = memref.view %ws[%c0][] : memref<?xi8> to memref<4xf32>
  "test.read"(%a) : (memref<4xf32>) -> ()
  return
}
func.func @planned_workspace_bytes() -> i64 {
  %c64 = arith.constant 64 : i64
  return %c64 : i64
}
