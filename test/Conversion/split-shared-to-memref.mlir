// RUN: mbt-opt --mbt-split-shared-to-memref %s | FileCheck %s
// RUN: mbt-opt --mbt-split-shared-to-memref --one-shot-bufferize="bufferize-function-boundaries" %s | FileCheck %s --check-prefix=BUF
// RUN: mbt-opt --one-shot-bufferize="bufferize-function-boundaries" %s | FileCheck %s --check-prefix=SHARED

#id = affine_map<(d0) -> (d0)>
func.func private @kernel(memref<?xf32, strided<[?], offset: ?>>)

// Two kernel calls read %q through one to_memref and cast (as CSE leaves
// the forward's and the adjoint's reads of one tensor); between them an op
// writes into the tensor.empty that %q was computed in. The second call
// gets its own to_memref and cast, just before it.
// CHECK-LABEL: func.func @read_twice(
// CHECK:         %[[Q:.*]] = linalg.generic
// CHECK:         %[[M1:.*]] = bufferization.to_memref %[[Q]] read_only
// CHECK:         %[[C1:.*]] = memref.cast %[[M1]]
// CHECK:         call @kernel(%[[C1]])
// CHECK:         %[[R:.*]] = linalg.generic
// CHECK:         %[[M2:.*]] = bufferization.to_memref %[[Q]] read_only
// CHECK:         %[[C2:.*]] = memref.cast %[[M2]]
// CHECK:         call @kernel(%[[C2]])
// CHECK:         return %[[R]]
//
// Bufferized, the second generic writes a buffer of its own, and the second
// call reads %q's. Without the split the analysis sees %q read only at the
// first call, and the second generic overwrites %q's buffer before the
// second call reads it.
// BUF-LABEL:   func.func @read_twice(
// BUF-DAG:       %[[B1:.*]] = memref.alloc(
// BUF-DAG:       %[[B2:.*]] = memref.alloc(
// BUF:           linalg.generic {{.*}} outs(%[[B2]] :
// BUF:           call @kernel(
// BUF:           linalg.generic {{.*}} outs(%[[B1]] :
// BUF:           %[[C:.*]] = memref.cast %[[B2]]
// BUF:           call @kernel(%[[C]])
// BUF:           return %[[B1]]
// SHARED-LABEL: func.func @read_twice(
// SHARED:         %[[B:.*]] = memref.alloc(
// SHARED:         linalg.generic {{.*}} outs(%[[B]] :
// SHARED:         linalg.generic {{.*}} outs(%[[B]] :
func.func @read_twice(%x: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %e = tensor.empty(%n) : tensor<?xf32>
  %q = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.negf %in : f32
    linalg.yield %v : f32
  } -> tensor<?xf32>
  %m = bufferization.to_memref %q read_only : memref<?xf32>
  %c = memref.cast %m : memref<?xf32> to memref<?xf32, strided<[?], offset: ?>>
  call @kernel(%c) : (memref<?xf32, strided<[?], offset: ?>>) -> ()
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.absf %in : f32
    linalg.yield %v : f32
  } -> tensor<?xf32>
  call @kernel(%c) : (memref<?xf32, strided<[?], offset: ?>>) -> ()
  return %r : tensor<?xf32>
}

// One reader, and two operands of one call: nothing to split. A reader in
// a loop gets its copy inside the loop, before it.
// CHECK-LABEL: func.func @one_reader_and_a_loop(
// CHECK-COUNT-1: bufferization.to_memref
// CHECK:         call @kernel2(%[[C:.*]], %[[C]])
// CHECK:         scf.for
// CHECK-NEXT:      %[[M:.*]] = bufferization.to_memref %arg0 read_only
// CHECK-NEXT:      %[[CL:.*]] = memref.cast %[[M]]
// CHECK-NEXT:      func.call @kernel(%[[CL]])
func.func private @kernel2(memref<?xf32, strided<[?], offset: ?>>,
                           memref<?xf32, strided<[?], offset: ?>>)
func.func @one_reader_and_a_loop(%x: tensor<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = bufferization.to_memref %x read_only : memref<?xf32>
  %c = memref.cast %m : memref<?xf32> to memref<?xf32, strided<[?], offset: ?>>
  call @kernel2(%c, %c) : (memref<?xf32, strided<[?], offset: ?>>,
                           memref<?xf32, strided<[?], offset: ?>>) -> ()
  scf.for %i = %c0 to %n step %c1 {
    func.call @kernel(%c) : (memref<?xf32, strided<[?], offset: ?>>) -> ()
  }
  return
}
