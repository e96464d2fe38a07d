// RUN: mbt-opt --mbt-outline-repeated %s | FileCheck %s
// RUN: mbt-opt --mbt-outline-repeated %s | \
// RUN:   mlir-opt --convert-linalg-to-loops --convert-scf-to-cf \
// RUN:     --expand-strided-metadata --lower-affine \
// RUN:     --finalize-memref-to-llvm --convert-arith-to-llvm \
// RUN:     --convert-cf-to-llvm --convert-func-to-llvm \
// RUN:     --reconcile-unrealized-casts | \
// RUN:   mlir-cpu-runner -e main --entry-point-result=void \
// RUN:     --shared-libs=%mlir_runner_libs | FileCheck %s --check-prefix=EXEC

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0, 0)>

// Two blocks scale their activations by their own parameters, views of one
// buffer at other offsets: one function, the offset dynamic, each call site
// casting its view. The add of a constant that differs (1 and 2) stays
// inline; the one that occurs twice takes its constant inside.
// CHECK-LABEL: func.func @blocks(
// CHECK-SAME:      %[[PARAMS:[^:]*]]: memref<2x8xf32>, %[[X:[^:]*]]: memref<2x4xf32>, %[[H:[^:]*]]: memref<2x4xf32>, %[[Y:[^:]*]]: memref<2x4xf32>)
// CHECK:         %[[W1:.*]] = memref.subview %[[PARAMS]][0, 0] [2, 4] [1, 1]
// CHECK:         %[[W2:.*]] = memref.subview %[[PARAMS]][0, 4] [2, 4] [1, 1]
// CHECK:         %[[C1:.*]] = memref.cast %[[W1]] : memref<2x4xf32, strided<[8, 1]>> to memref<2x4xf32, strided<[8, 1], offset: ?>>
// CHECK:         call @[[SCALE:mbt_repeated[_0-9]*]](%[[X]], %[[C1]], %[[H]])
// CHECK:         call @[[PLUS_ONE:mbt_repeated[_0-9]*]](%[[H]])
// CHECK:         %[[C2:.*]] = memref.cast %[[W2]] : memref<2x4xf32, strided<[8, 1], offset: 4>> to memref<2x4xf32, strided<[8, 1], offset: ?>>
// CHECK:         call @[[SCALE]](%[[H]], %[[C2]], %[[Y]])
// CHECK:         call @[[PLUS_ONE]](%[[Y]])
// CHECK:         arith.constant 2.000000e+00
// CHECK-NEXT:    linalg.generic
// CHECK-NOT:     call
// CHECK:         return
func.func @blocks(%params: memref<2x8xf32>, %x: memref<2x4xf32>,
                  %h: memref<2x4xf32>, %y: memref<2x4xf32>) {
  %one = arith.constant 1.0 : f32
  %w1 = memref.subview %params[0, 0] [2, 4] [1, 1]
      : memref<2x8xf32> to memref<2x4xf32, strided<[8, 1]>>
  %w2 = memref.subview %params[0, 4] [2, 4] [1, 1]
      : memref<2x8xf32> to memref<2x4xf32, strided<[8, 1], offset: 4>>
  linalg.generic {indexing_maps = [#id, #id, #id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %w1 : memref<2x4xf32>, memref<2x4xf32, strided<[8, 1]>>)
      outs(%h : memref<2x4xf32>) {
  ^bb0(%a: f32, %w: f32, %out: f32):
    %p = arith.mulf %a, %w : f32
    linalg.yield %p : f32
  }
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]}
      outs(%h : memref<2x4xf32>) {
  ^bb0(%out: f32):
    %s = arith.addf %out, %one : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%h, %w2 : memref<2x4xf32>, memref<2x4xf32, strided<[8, 1], offset: 4>>)
      outs(%y : memref<2x4xf32>) {
  ^bb0(%a: f32, %w: f32, %out: f32):
    %p = arith.mulf %a, %w : f32
    linalg.yield %p : f32
  }
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]}
      outs(%y : memref<2x4xf32>) {
  ^bb0(%out: f32):
    %s = arith.addf %out, %one : f32
    linalg.yield %s : f32
  }
  %two = arith.constant 2.0 : f32
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]}
      outs(%y : memref<2x4xf32>) {
  ^bb0(%out: f32):
    %s = arith.addf %out, %two : f32
    linalg.yield %s : f32
  }
  return
}

// The same op reading one buffer twice is not the op reading two: the
// first and third ops share a function, the second stays inline. A
// second function (an eval step) calls the function of the first.
// CHECK-LABEL: func.func @aliases(
// CHECK-SAME:      %[[A:[^:]*]]: memref<2x4xf32>, %[[B:[^:]*]]: memref<2x4xf32>, %[[OUT:[^:]*]]: memref<2x4xf32>)
// CHECK:         call @[[SQUARE:mbt_repeated[_0-9]*]](%[[A]], %[[OUT]])
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%[[A]], %[[B]] :
// CHECK:         call @[[SQUARE]](%[[B]], %[[OUT]])
// CHECK-LABEL: func.func @eval(
// CHECK:         call @[[SQUARE]](
func.func @aliases(%a: memref<2x4xf32>, %b: memref<2x4xf32>,
                   %out: memref<2x4xf32>) {
  linalg.generic {indexing_maps = [#id, #id, #id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a, %a : memref<2x4xf32>, memref<2x4xf32>)
      outs(%out : memref<2x4xf32>) {
  ^bb0(%l: f32, %r: f32, %o: f32):
    %p = arith.mulf %l, %r : f32
    linalg.yield %p : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : memref<2x4xf32>, memref<2x4xf32>)
      outs(%out : memref<2x4xf32>) {
  ^bb0(%l: f32, %r: f32, %o: f32):
    %p = arith.mulf %l, %r : f32
    linalg.yield %p : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%b, %b : memref<2x4xf32>, memref<2x4xf32>)
      outs(%out : memref<2x4xf32>) {
  ^bb0(%l: f32, %r: f32, %o: f32):
    %p = arith.mulf %l, %r : f32
    linalg.yield %p : f32
  }
  return
}

func.func @eval(%a: memref<2x4xf32>, %out: memref<2x4xf32>) {
  linalg.generic {indexing_maps = [#id, #id, #id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a, %a : memref<2x4xf32>, memref<2x4xf32>)
      outs(%out : memref<2x4xf32>) {
  ^bb0(%l: f32, %r: f32, %o: f32):
    %p = arith.mulf %l, %r : f32
    linalg.yield %p : f32
  }
  return
}

// A loop that takes a subview of a captured view infers the subview's type
// from the view's offset: that view keeps its type, so the loops over the
// two parameters' views stay apart, and the loop that repeats on the same
// view shares a function.
// CHECK-LABEL: func.func @subviews(
// CHECK-SAME:      %[[P:[^:]*]]: memref<2x8xf32>,
// CHECK:         %[[V1:.*]] = memref.subview %[[P]][0, 0]
// CHECK:         %[[V2:.*]] = memref.subview %[[P]][0, 4]
// CHECK:         call @[[ROW:mbt_repeated[_0-9]*]](%[[V1]], %{{.*}})
// CHECK-NEXT:    call @[[ROW]](%[[V1]], %{{.*}})
// CHECK-NEXT:    scf.for
// CHECK-NOT:     call
// CHECK:         return
func.func @subviews(%params: memref<2x8xf32>, %out: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %v1 = memref.subview %params[0, 0] [2, 4] [1, 1]
      : memref<2x8xf32> to memref<2x4xf32, strided<[8, 1]>>
  %v2 = memref.subview %params[0, 4] [2, 4] [1, 1]
      : memref<2x8xf32> to memref<2x4xf32, strided<[8, 1], offset: 4>>
  scf.for %i = %c0 to %c2 step %c1 {
    %row = memref.subview %v1[%i, 0] [1, 4] [1, 1]
        : memref<2x4xf32, strided<[8, 1]>> to memref<4xf32, strided<[1], offset: ?>>
    memref.copy %row, %out : memref<4xf32, strided<[1], offset: ?>> to memref<4xf32>
  }
  scf.for %i = %c0 to %c2 step %c1 {
    %row = memref.subview %v1[%i, 0] [1, 4] [1, 1]
        : memref<2x4xf32, strided<[8, 1]>> to memref<4xf32, strided<[1], offset: ?>>
    memref.copy %row, %out : memref<4xf32, strided<[1], offset: ?>> to memref<4xf32>
  }
  scf.for %i = %c0 to %c2 step %c1 {
    %row = memref.subview %v2[%i, 0] [1, 4] [1, 1]
        : memref<2x4xf32, strided<[8, 1], offset: 4>> to memref<4xf32, strided<[1], offset: ?>>
    memref.copy %row, %out : memref<4xf32, strided<[1], offset: ?>> to memref<4xf32>
  }
  return
}

// The functions: private, never inlined, internal to the artifact.
// CHECK:       func.func private @[[SCALE]](%{{.*}}: memref<2x4xf32>, %{{.*}}: memref<2x4xf32, strided<[8, 1], offset: ?>>, %{{.*}}: memref<2x4xf32>) attributes {llvm.linkage = #llvm.linkage<internal>, no_inline}
// CHECK-NEXT:    linalg.generic
// CHECK:       func.func private @[[PLUS_ONE]](
// CHECK-NEXT:    arith.constant 1.000000e+00
// CHECK-NEXT:    linalg.generic

// The calls compute what the ops did: params = [[1..4], [5..8] | [2, 2, 2,
// 2], [3, 3, 3, 3]] and x = 1: h = w1 + 1, y = h * w2 + 1 + 2.
// EXEC: [2, 3, 4, 5]
// EXEC: [6, 7, 8, 9]
// EXEC: [7, 9, 11, 13]
// EXEC: [21, 24, 27, 30]
func.func private @printMemrefF32(memref<*xf32>)
func.func @main() {
  %params = memref.alloc() : memref<2x8xf32>
  %x = memref.alloc() : memref<2x4xf32>
  %h = memref.alloc() : memref<2x4xf32>
  %y = memref.alloc() : memref<2x4xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %one = arith.constant 1.0 : f32
  scf.for %i = %c0 to %c2 step %c1 {
    scf.for %j = %c0 to %c4 step %c1 {
      %row = arith.muli %i, %c4 : index
      %k = arith.addi %row, %j : index
      %k1 = arith.addi %k, %c1 : index
      %ki = arith.index_cast %k1 : index to i32
      %kf = arith.sitofp %ki : i32 to f32
      memref.store %kf, %params[%i, %j] : memref<2x8xf32>
      %j4 = arith.addi %j, %c4 : index
      %i2 = arith.addi %i, %c2 : index
      %ii = arith.index_cast %i2 : index to i32
      %if = arith.sitofp %ii : i32 to f32
      memref.store %if, %params[%i, %j4] : memref<2x8xf32>
      memref.store %one, %x[%i, %j] : memref<2x4xf32>
    }
  }
  call @blocks(%params, %x, %h, %y)
      : (memref<2x8xf32>, memref<2x4xf32>, memref<2x4xf32>, memref<2x4xf32>) -> ()
  %hu = memref.cast %h : memref<2x4xf32> to memref<*xf32>
  call @printMemrefF32(%hu) : (memref<*xf32>) -> ()
  %yu = memref.cast %y : memref<2x4xf32> to memref<*xf32>
  call @printMemrefF32(%yu) : (memref<*xf32>) -> ()
  memref.dealloc %params : memref<2x8xf32>
  memref.dealloc %x : memref<2x4xf32>
  memref.dealloc %h : memref<2x4xf32>
  memref.dealloc %y : memref<2x4xf32>
  return
}
