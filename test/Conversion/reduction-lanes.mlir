// RUN: mbt-opt --mbt-reduction-lanes %s | FileCheck %s
// RUN: mbt-opt --mbt-reduction-lanes %s | \
// RUN:   mlir-opt --convert-scf-to-cf --convert-vector-to-llvm \
// RUN:     --expand-strided-metadata --lower-affine \
// RUN:     --finalize-memref-to-llvm --convert-arith-to-llvm \
// RUN:     --convert-cf-to-llvm --convert-func-to-llvm \
// RUN:     --reconcile-unrealized-casts | \
// RUN:   mlir-cpu-runner -e main --entry-point-result=void \
// RUN:     --shared-libs=%mlir_runner_libs | FileCheck %s --check-prefix=EXEC

// A row sum over a dynamic number of columns: 16 lanes of a vector from
// -0 over the whole groups of 16, the last count mod 16 elements as one
// masked step (each into the lane of its index mod 16), the lanes
// combined by a fixed tree of halves, then the buffer's value before the
// loop.
// CHECK-LABEL: func.func @row_sums
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           %[[MINUS_ZERO:.*]] = arith.constant -0.000000e+00 : f32
// CHECK:           %[[START:.*]] = vector.broadcast %[[MINUS_ZERO]] : f32 to vector<16xf32>
// CHECK:           %[[MAIN:.*]] = scf.for %[[J:.*]] = %{{.*}} to %[[END:.*]] step %c16 iter_args(%[[LANES:.*]] = %[[START]]) -> (vector<16xf32>)
// CHECK:             %[[X:.*]] = vector.load %{{.*}}[%[[I]], %[[J]]] : memref<?x?xf32>, vector<16xf32>
// CHECK:             %[[NEXT:.*]] = arith.addf %[[LANES]], %[[X]] : vector<16xf32>
// CHECK:             scf.yield %[[NEXT]]
// CHECK:           %[[COUNT:.*]] = arith.subi %{{.*}}, %[[END]] : index
// CHECK:           %[[ANY:.*]] = arith.cmpi sgt, %[[COUNT]]
// CHECK:           %[[REST:.*]] = scf.if %[[ANY]] -> (vector<16xf32>) {
// CHECK:             %[[MASK:.*]] = vector.create_mask %[[COUNT]] : vector<16xi1>
// CHECK:             %[[TAIL:.*]] = vector.maskedload %{{.*}}[%[[I]], %[[END]]], %[[MASK]]
// CHECK:             %[[SUM:.*]] = arith.addf %[[MAIN]], %[[TAIL]] : vector<16xf32>
// CHECK:             %[[KEPT:.*]] = arith.select %[[MASK]], %[[SUM]], %[[MAIN]]
// CHECK:             scf.yield %[[KEPT]]
// CHECK:           } else {
// CHECK:             scf.yield %[[MAIN]]
// CHECK:           %[[LOW:.*]] = vector.extract_strided_slice %[[REST]] {offsets = [0], sizes = [8], strides = [1]}
// CHECK:           %[[HIGH:.*]] = vector.extract_strided_slice %[[REST]] {offsets = [8], sizes = [8], strides = [1]}
// CHECK:           arith.addf %[[LOW]], %[[HIGH]] : vector<8xf32>
// CHECK:           arith.addf {{.*}} : vector<4xf32>
// CHECK:           arith.addf {{.*}} : vector<2xf32>
// CHECK:           %[[ONE:.*]] = arith.addf {{.*}} : vector<1xf32>
// CHECK:           %[[TREE:.*]] = vector.extract %[[ONE]][0] : f32 from vector<1xf32>
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

// A row maximum starts its lanes from -inf.
// CHECK-LABEL: func.func @row_max
// CHECK:         arith.constant 0xFF800000 : f32
// CHECK:         scf.for {{.*}} step %c16 iter_args
// CHECK:           arith.maximumf {{.*}} : vector<16xf32>
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

// A body that reads the element's index (a cross-entropy's picked class)
// computes it for the 16 elements at once, and its uniform loads stay
// scalars, broadcast where a vector needs them.
// CHECK-LABEL: func.func @picked_class
// CHECK:         scf.for %[[J:.*]] = {{.*}} step %c16 iter_args
// CHECK-DAG:       %[[LABEL:.*]] = memref.load %arg1[] : memref<i32>
// CHECK-DAG:       %[[X:.*]] = vector.load %arg0[%[[J]]]
// CHECK-DAG:       %[[BASE:.*]] = vector.broadcast %[[J]] : index to vector<16xindex>
// CHECK-DAG:       %[[STEPS:.*]] = arith.constant dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]> : vector<16xindex>
// CHECK:           %[[INDICES:.*]] = arith.addi %[[BASE]], %[[STEPS]] : vector<16xindex>
// CHECK:           %[[CLASSES:.*]] = arith.index_cast %[[INDICES]] : vector<16xindex> to vector<16xi32>
// CHECK:           %[[LABELS:.*]] = vector.broadcast %[[LABEL]] : i32 to vector<16xi32>
// CHECK:           %[[IS:.*]] = arith.cmpi eq, %[[CLASSES]], %[[LABELS]] : vector<16xi32>
// CHECK:           arith.select %[[IS]], %[[X]], %{{.*}} : vector<16xi1>, vector<16xf32>
// CHECK:         scf.if
// CHECK:           vector.maskedload
func.func @picked_class(%logits: memref<?xf32>, %label: memref<i32>,
                        %out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %logits, %c0 : memref<?xf32>
  scf.for %j = %c0 to %n step %c1 {
    %a = memref.load %out[] : memref<f32>
    %x = memref.load %logits[%j] : memref<?xf32>
    %y = memref.load %label[] : memref<i32>
    %ji = arith.index_cast %j : index to i32
    %is = arith.cmpi eq, %ji, %y : i32
    %picked = arith.select %is, %x, %zero : f32
    %s = arith.addf %a, %picked : f32
    memref.store %s, %out[] : memref<f32>
  }
  return
}

// A strided row is read one element at a time into the lanes, and its
// last elements, which a masked load cannot read, each by a scalar copy
// of the body selected into its lane. So is the rest of a body that
// divides integers (a masked lane could divide by 0).
// CHECK-LABEL: func.func @strided_row
// CHECK:         scf.for %[[J:.*]] = {{.*}} step %c16 iter_args
// CHECK-COUNT-16:  vector.insert
// CHECK:         scf.for %[[K:.*]] = {{.*}} iter_args(%[[CARRIED:.*]] = %{{.*}}) -> (vector<16xf32>)
// CHECK:           %[[X:.*]] = memref.load %arg0[%[[K]]]
// CHECK:           %[[LANE:.*]] = arith.cmpi eq, %{{.*}}, %{{.*}} : vector<16xindex>
// CHECK:           %[[SPLAT:.*]] = vector.broadcast %{{.*}} : f32 to vector<16xf32>
// CHECK:           %[[ADDED:.*]] = arith.addf %[[CARRIED]], %[[SPLAT]] : vector<16xf32>
// CHECK:           arith.select %[[LANE]], %[[ADDED]], %[[CARRIED]]
// CHECK-LABEL: func.func @divided
// CHECK:         scf.for {{.*}} step %c16 iter_args
// CHECK:           arith.divsi {{.*}} : vector<16xi32>
// CHECK-NOT:     vector.maskedload
// CHECK:         scf.for {{.*}} iter_args
// CHECK:           arith.divsi {{.*}} : i32
func.func @strided_row(%in: memref<?xf32, strided<[?]>>, %out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %in, %c0 : memref<?xf32, strided<[?]>>
  scf.for %j = %c0 to %n step %c1 {
    %a = memref.load %out[] : memref<f32>
    %x = memref.load %in[%j] : memref<?xf32, strided<[?]>>
    %s = arith.addf %a, %x : f32
    memref.store %s, %out[] : memref<f32>
  }
  return
}
func.func @divided(%in: memref<?xi32>, %out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c100 = arith.constant 100 : i32
  %n = memref.dim %in, %c0 : memref<?xi32>
  scf.for %j = %c0 to %n step %c1 {
    %a = memref.load %out[] : memref<f32>
    %d = memref.load %in[%j] : memref<?xi32>
    %q = arith.divsi %c100, %d : i32
    %x = arith.sitofp %q : i32 to f32
    %s = arith.addf %a, %x : f32
    memref.store %s, %out[] : memref<f32>
  }
  return
}

// A body that reads the element's row of a column-major buffer (the
// element in a leading index) does not vectorize: 4 scalar accumulators,
// element j into accumulator (j - lb) mod 4, the rest each into its own.
// CHECK-LABEL: func.func @column_sums
// CHECK:         %[[MAIN:.*]]:4 = scf.for %{{.*}} = %{{.*}} to %[[END:.*]] step %c4 iter_args
// CHECK-COUNT-4:   arith.addf {{.*}} : f32
// CHECK:           scf.yield
// CHECK:         %[[REST:.*]]:4 = scf.for %{{.*}} = %[[END]] to %{{.*}} step %{{.*}} iter_args({{.*}} = %[[MAIN]]#0, {{.*}} = %[[MAIN]]#1, {{.*}} = %[[MAIN]]#2, {{.*}} = %[[MAIN]]#3)
// CHECK:           arith.select
// CHECK:         %[[A:.*]] = arith.addf %[[REST]]#0, %[[REST]]#1 : f32
// CHECK:         %[[B:.*]] = arith.addf %[[REST]]#2, %[[REST]]#3 : f32
// CHECK:         arith.addf %[[A]], %[[B]] : f32
func.func @column_sums(%in: memref<?x?xf32>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = memref.dim %in, %c0 : memref<?x?xf32>
  %cols = memref.dim %in, %c1 : memref<?x?xf32>
  scf.for %i = %c0 to %cols step %c1 {
    scf.for %j = %c0 to %rows step %c1 {
      %a = memref.load %out[%i] : memref<?xf32>
      %x = memref.load %in[%j, %i] : memref<?x?xf32>
      %s = arith.addf %a, %x : f32
      memref.store %s, %out[%i] : memref<?xf32>
    }
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

// Run. Rows of n = 0, 3, 15, 16, 17 and 37 elements 1, 2, ..., n sum
// exactly to n (n + 1) / 2: no element is dropped or added twice at the
// groups' and the rest's bounds. The same through the scalar lanes (a
// column of 5 and of 37) and through the strided form (every other
// element of 1, 2, ..., 2n: the odd numbers, n^2 for n = 16 and 19). Then
// the row 1/(j + 3) of 37 elements, and the same row followed by 27 zeros
// (a padded row of 64): the same bits, as the additions' order does not
// depend on the trip count. The maximum of -1, -2, ..., -17 is -1: the
// masked step's lanes past the end (loaded as 0) are not taken.
// EXEC: 0
// EXEC-NEXT: 6
// EXEC-NEXT: 120
// EXEC-NEXT: 136
// EXEC-NEXT: 153
// EXEC-NEXT: 703
// EXEC-NEXT: 15
// EXEC-NEXT: 703
// EXEC-NEXT: 256
// EXEC-NEXT: 361
// EXEC-NEXT: -1
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

func.func @column_sum_of(%row: memref<?xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %row, %c0 : memref<?xf32>
  %in = memref.expand_shape %row [[0, 1]] output_shape [%n, 1] : memref<?xf32> into memref<?x1xf32>
  %dyn = memref.cast %in : memref<?x1xf32> to memref<?x?xf32>
  %out = memref.alloca() : memref<1xf32>
  memref.store %zero, %out[%c0] : memref<1xf32>
  %outd = memref.cast %out : memref<1xf32> to memref<?xf32>
  func.call @column_sums(%dyn, %outd) : (memref<?x?xf32>, memref<?xf32>) -> ()
  %s = memref.load %out[%c0] : memref<1xf32>
  return %s : f32
}

func.func @odd_sum_of(%row: memref<?xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  %all = memref.dim %row, %c0 : memref<?xf32>
  %n = arith.divui %all, %c2 : index
  %odd = memref.subview %row[0] [%n] [2] : memref<?xf32> to memref<?xf32, strided<[2]>>
  %dyn = memref.cast %odd : memref<?xf32, strided<[2]>> to memref<?xf32, strided<[?]>>
  %out = memref.alloca() : memref<f32>
  memref.store %zero, %out[] : memref<f32>
  func.call @strided_row(%dyn, %out) : (memref<?xf32, strided<[?]>>, memref<f32>) -> ()
  %s = memref.load %out[] : memref<f32>
  return %s : f32
}

func.func @integers(%n: index) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %row = memref.alloc(%n) : memref<?xf32>
  scf.for %j = %c0 to %n step %c1 {
    %j1 = arith.addi %j, %c1 : index
    %ji = arith.index_cast %j1 : index to i32
    %v = arith.sitofp %ji : i32 to f32
    memref.store %v, %row[%j] : memref<?xf32>
  }
  return %row : memref<?xf32>
}

func.func @print_sums(%n: index) {
  %row = func.call @integers(%n) : (index) -> memref<?xf32>
  %s = func.call @sum_of(%row) : (memref<?xf32>) -> f32
  vector.print %s : f32
  memref.dealloc %row : memref<?xf32>
  return
}

func.func @print_column_sums(%n: index) {
  %row = func.call @integers(%n) : (index) -> memref<?xf32>
  %s = func.call @column_sum_of(%row) : (memref<?xf32>) -> f32
  vector.print %s : f32
  memref.dealloc %row : memref<?xf32>
  return
}

func.func @print_odd_sums(%n: index) {
  %row = func.call @integers(%n) : (index) -> memref<?xf32>
  %s = func.call @odd_sum_of(%row) : (memref<?xf32>) -> f32
  vector.print %s : f32
  memref.dealloc %row : memref<?xf32>
  return
}

func.func @print_negated_max(%n: index) {
  %c0 = arith.constant 0 : index
  %minus_inf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %row = func.call @integers(%n) : (index) -> memref<?xf32>
  %negated = memref.alloc(%n) : memref<?xf32>
  %c1 = arith.constant 1 : index
  scf.for %j = %c0 to %n step %c1 {
    %x = memref.load %row[%j] : memref<?xf32>
    %y = arith.subf %zero, %x : f32
    memref.store %y, %negated[%j] : memref<?xf32>
  }
  %out = memref.alloca() : memref<f32>
  memref.store %minus_inf, %out[] : memref<f32>
  func.call @row_max(%negated, %out) : (memref<?xf32>, memref<f32>) -> ()
  %m = memref.load %out[] : memref<f32>
  vector.print %m : f32
  memref.dealloc %row : memref<?xf32>
  memref.dealloc %negated : memref<?xf32>
  return
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
  %c5 = arith.constant 5 : index
  %c15 = arith.constant 15 : index
  %c16 = arith.constant 16 : index
  %c17 = arith.constant 17 : index
  %c32 = arith.constant 32 : index
  %c37 = arith.constant 37 : index
  %c38 = arith.constant 38 : index
  %c64 = arith.constant 64 : index
  func.call @print_sums(%c0) : (index) -> ()
  func.call @print_sums(%c3) : (index) -> ()
  func.call @print_sums(%c15) : (index) -> ()
  func.call @print_sums(%c16) : (index) -> ()
  func.call @print_sums(%c17) : (index) -> ()
  func.call @print_sums(%c37) : (index) -> ()
  func.call @print_column_sums(%c5) : (index) -> ()
  func.call @print_column_sums(%c37) : (index) -> ()
  func.call @print_odd_sums(%c32) : (index) -> ()
  func.call @print_odd_sums(%c38) : (index) -> ()
  func.call @print_negated_max(%c17) : (index) -> ()
  %real = func.call @reciprocals(%c37, %c37) : (index, index) -> f32
  %padded = func.call @reciprocals(%c37, %c64) : (index, index) -> f32
  %same = arith.cmpf oeq, %real, %padded : f32
  vector.print %same : i1
  return
}
