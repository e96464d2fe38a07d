// RUN: mbt-opt --mbt-reduction-lanes %s | FileCheck %s
// RUN: mbt-opt --mbt-reduction-lanes %s | \
// RUN:   mlir-opt --convert-scf-to-cf --convert-vector-to-llvm \
// RUN:     --expand-strided-metadata --lower-affine \
// RUN:     --finalize-memref-to-llvm --convert-arith-to-llvm \
// RUN:     --convert-cf-to-llvm --convert-func-to-llvm \
// RUN:     --reconcile-unrealized-casts | \
// RUN:   mlir-cpu-runner -e main --entry-point-result=void \
// RUN:     --shared-libs=%mlir_runner_libs | FileCheck %s --check-prefix=EXEC

// A row sum over a dynamic number of columns: 4 accumulators from -0 over
// the whole groups of 4, the last count mod 4 elements each into the
// accumulator of its index mod 4, a fixed tree, then the buffer's value
// before the loop.
// CHECK-LABEL: func.func @row_sums
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           %[[MINUS_ZERO:.*]] = arith.constant -0.000000e+00 : f32
// CHECK:           %[[MAIN:.*]]:4 = scf.for %{{.*}} = %{{.*}} to %[[END:.*]] step %c4 iter_args(%{{.*}} = %[[MINUS_ZERO]], %{{.*}} = %[[MINUS_ZERO]], %{{.*}} = %[[MINUS_ZERO]], %{{.*}} = %[[MINUS_ZERO]])
// CHECK-COUNT-4:     arith.addf
// CHECK:             scf.yield
// CHECK:           %[[REST:.*]]:4 = scf.for %{{.*}} = %[[END]] to %{{.*}} step %{{.*}} iter_args({{.*}} = %[[MAIN]]#0, {{.*}} = %[[MAIN]]#1, {{.*}} = %[[MAIN]]#2, {{.*}} = %[[MAIN]]#3)
// CHECK:             arith.select
// CHECK:           %[[A:.*]] = arith.addf %[[REST]]#0, %[[REST]]#1 : f32
// CHECK:           %[[B:.*]] = arith.addf %[[REST]]#2, %[[REST]]#3 : f32
// CHECK:           %[[TREE:.*]] = arith.addf %[[A]], %[[B]] : f32
// CHECK:           %[[BEFORE:.*]] = memref.load %{{.*}}[%[[I]]]
// CHECK:           %[[TOTAL:.*]] = arith.addf %[[BEFORE]], %[[TREE]] : f32
// CHECK:           memref.store %[[TOTAL]], %{{.*}}[%[[I]]]
func.func @row_sums(%in: memref<?x?xf32>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = memref.dim %in, %c0 : memref<?x?xf32>
  %cols = memref.dim %in, %c1 : memref<?x?xf32>
  scf.for %i = %c0 to %rows step %c1 {
    scf.for %j = %c0 to %cols step %c1 {
      %a = memref.load %out[%i] : memref<?xf32>
      %x = memref.load %in[%i, %j] : memref<?x?xf32>
      %s = arith.addf %a, %x : f32
      memref.store %s, %out[%i] : memref<?xf32>
    }
  }
  return
}

// A row maximum starts its accumulators from -inf.
// CHECK-LABEL: func.func @row_max
// CHECK:         arith.constant 0xFF800000 : f32
// CHECK:         scf.for {{.*}} step %c4 iter_args
// CHECK-COUNT-4:   arith.maximumf
func.func @row_max(%in: memref<?xf32>, %out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %in, %c0 : memref<?xf32>
  scf.for %j = %c0 to %n step %c1 {
    %a = memref.load %out[] : memref<f32>
    %x = memref.load %in[%j] : memref<?xf32>
    %m = arith.maximumf %a, %x : f32
    memref.store %m, %out[] : memref<f32>
  }
  return
}

// Too short for lanes, or f64: the accumulator only moves to a register
// (iter_args), loaded before the loop and stored after it, the additions
// in their order.
// CHECK-LABEL: func.func @promoted
// CHECK:         %[[INIT:.*]] = memref.load %arg1[%c0] : memref<2xf32>
// CHECK:         %[[SUM:.*]] = scf.for %{{.*}} = %c0 to %c16 step %c1 iter_args(%[[ACC:.*]] = %[[INIT]]) -> (f32)
// CHECK:           %[[X:.*]] = memref.load %arg0
// CHECK:           %[[NEXT:.*]] = arith.addf %[[ACC]], %[[X]] : f32
// CHECK:           scf.yield %[[NEXT]] : f32
// CHECK:         memref.store %[[SUM]], %arg1[%c0] : memref<2xf32>
// CHECK:         scf.for {{.*}} iter_args({{.*}}) -> (f64)
// CHECK-NOT:       memref.store
// CHECK:         memref.store %{{.*}}, %arg3[] : memref<f64>
// An arg-max keeps two accumulators, the maximum and its index.
// CHECK:         %[[MAX:.*]] = memref.load %arg4[] : memref<f32>
// CHECK:         %[[INDEX:.*]] = memref.load %arg5[] : memref<i32>
// CHECK:         %[[BOTH:.*]]:2 = scf.for {{.*}} iter_args(%{{.*}} = %[[MAX]], %{{.*}} = %[[INDEX]]) -> (f32, i32)
// CHECK:         memref.store %[[BOTH]]#0, %arg4[]
// CHECK:         memref.store %[[BOTH]]#1, %arg5[]
func.func @promoted(%short: memref<16xf32>, %out: memref<2xf32>,
                    %in64: memref<?xf64>, %out64: memref<f64>,
                    %max: memref<f32>, %index: memref<i32>,
                    %in: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %n = memref.dim %in, %c0 : memref<?xf32>
  scf.for %j = %c0 to %c16 step %c1 {
    %a = memref.load %out[%c0] : memref<2xf32>
    %x = memref.load %short[%j] : memref<16xf32>
    %s = arith.addf %a, %x : f32
    memref.store %s, %out[%c0] : memref<2xf32>
  }
  scf.for %j = %c0 to %n step %c1 {
    %a = memref.load %out64[] : memref<f64>
    %x = memref.load %in64[%j] : memref<?xf64>
    %s = arith.addf %a, %x : f64
    memref.store %s, %out64[] : memref<f64>
  }
  scf.for %j = %c0 to %n step %c1 {
    %m = memref.load %max[] : memref<f32>
    %i = memref.load %index[] : memref<i32>
    %x = memref.load %in[%j] : memref<?xf32>
    %better = arith.cmpf ugt, %x, %m : f32
    %m2 = arith.select %better, %x, %m : f32
    %ji = arith.index_cast %j : index to i32
    %i2 = arith.select %better, %ji, %i : i32
    memref.store %m2, %max[] : memref<f32>
    memref.store %i2, %index[] : memref<i32>
  }
  return
}

// Left alone: a loop that reads its accumulator's buffer elsewhere (it
// could see the other element change), and a loop whose store moves with
// the loop (not a reduction).
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:     iter_args
// CHECK:         return
func.func @left_alone(%in: memref<?xf32>, %out: memref<2xf32>,
                      %copy: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %in, %c0 : memref<?xf32>
  scf.for %j = %c0 to %n step %c1 {
    %a = memref.load %out[%c0] : memref<2xf32>
    %b = memref.load %out[%c1] : memref<2xf32>
    %x = memref.load %in[%j] : memref<?xf32>
    %y = arith.mulf %x, %b : f32
    %s = arith.addf %a, %y : f32
    memref.store %s, %out[%c0] : memref<2xf32>
  }
  scf.for %j = %c0 to %n step %c1 {
    %x = memref.load %in[%j] : memref<?xf32>
    memref.store %x, %copy[%j] : memref<?xf32>
  }
  return
}

// Run. Rows of n = 0, 3, 4, 5 and 37 elements 1, 2, ..., n sum exactly to
// n (n + 1) / 2: no element is dropped or added twice at the groups' and
// the rest's bounds. Then the row 1/(j + 3) of 37 elements, and the same
// row followed by 27 zeros (a padded row of 64): the same bits, as the
// additions' order does not depend on the trip count.
// EXEC: 0
// EXEC-NEXT: 6
// EXEC-NEXT: 10
// EXEC-NEXT: 15
// EXEC-NEXT: 703
// EXEC-NEXT: 1
func.func @sum_of(%row: memref<?xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %row, %c0 : memref<?xf32>
  %in = memref.expand_shape %row [[0, 1]] output_shape [1, %n] : memref<?xf32> into memref<1x?xf32>
  %dyn = memref.cast %in : memref<1x?xf32> to memref<?x?xf32>
  %out = memref.alloca() : memref<1xf32>
  memref.store %zero, %out[%c0] : memref<1xf32>
  %outd = memref.cast %out : memref<1xf32> to memref<?xf32>
  func.call @row_sums(%dyn, %outd) : (memref<?x?xf32>, memref<?xf32>) -> ()
  %s = memref.load %out[%c0] : memref<1xf32>
  return %s : f32
}

func.func @integers(%n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %row = memref.alloca(%n) : memref<?xf32>
  scf.for %j = %c0 to %n step %c1 {
    %j1 = arith.addi %j, %c1 : index
    %ji = arith.index_cast %j1 : index to i32
    %v = arith.sitofp %ji : i32 to f32
    memref.store %v, %row[%j] : memref<?xf32>
  }
  %s = func.call @sum_of(%row) : (memref<?xf32>) -> f32
  return %s : f32
}

func.func @reciprocals(%real: index, %n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %row = memref.alloca(%n) : memref<?xf32>
  scf.for %j = %c0 to %n step %c1 {
    %j3 = arith.addi %j, %c3 : index
    %ji = arith.index_cast %j3 : index to i32
    %d = arith.sitofp %ji : i32 to f32
    %r = arith.divf %one, %d : f32
    %is_real = arith.cmpi slt, %j, %real : index
    %v = arith.select %is_real, %r, %zero : f32
    memref.store %v, %row[%j] : memref<?xf32>
  }
  %s = func.call @sum_of(%row) : (memref<?xf32>) -> f32
  return %s : f32
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c37 = arith.constant 37 : index
  %c64 = arith.constant 64 : index
  %s0 = func.call @integers(%c0) : (index) -> f32
  %s3 = func.call @integers(%c3) : (index) -> f32
  %s4 = func.call @integers(%c4) : (index) -> f32
  %s5 = func.call @integers(%c5) : (index) -> f32
  %s37 = func.call @integers(%c37) : (index) -> f32
  vector.print %s0 : f32
  vector.print %s3 : f32
  vector.print %s4 : f32
  vector.print %s5 : f32
  vector.print %s37 : f32
  %real = func.call @reciprocals(%c37, %c37) : (index, index) -> f32
  %padded = func.call @reciprocals(%c37, %c64) : (index, index) -> f32
  %same = arith.cmpf oeq, %real, %padded : f32
  vector.print %same : i1
  return
}
