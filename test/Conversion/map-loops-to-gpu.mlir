// RUN: mbt-opt --mbt-map-loops-to-gpu --split-input-file %s | FileCheck %s
// RUN: not mbt-opt --mbt-map-loops-to-gpu="threads-x=64 threads-y=32" %s 2>&1 | FileCheck %s --check-prefix=BAD

// Each outermost scf.parallel is tiled into blocks of threads, its
// innermost dimension on x at both levels: a warp walks consecutive
// elements, and the long dimension (a model's parameters) is the one grid
// x, not y (at most 65,535 blocks), counts. A dimension statically shorter
// than its tile gets a smaller tile (here the 4 models: 4 x 32 threads).

// CHECK-LABEL: func.func @update
// CHECK-DAG:     %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG:     %[[C32:.*]] = arith.constant 32 : index
// CHECK:         scf.parallel ({{.*}}) = ({{.*}}) to ({{.*}}) step (%[[BM:.*]], %[[BP:.*]]) {
// CHECK:           scf.parallel
// CHECK:             arith.cmpi ult
// CHECK:             scf.if
// CHECK:               memref.store
// CHECK:           } {mapping = [#gpu.loop_dim_map<processor = thread_y, {{.*}}>, #gpu.loop_dim_map<processor = thread_x, {{.*}}>]}
// CHECK:         } {mapping = [#gpu.loop_dim_map<processor = block_y, {{.*}}>, #gpu.loop_dim_map<processor = block_x, {{.*}}>]}
func.func @update(%a: memref<4x?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %f = arith.constant 1.0 : f32
  scf.parallel (%m, %p) = (%c0, %c0) to (%c4, %n) step (%c1, %c1) {
    memref.store %f, %a[%m, %p] : memref<4x?xf32>
    scf.reduce
  }
  return
}

// -----

// Three dimensions: columns on x (32), rows on y (8), models on z (1 per
// block); the block loop puts the models on grid z.
// CHECK-LABEL: func.func @matrix
// CHECK:         scf.parallel
// CHECK:           scf.parallel
// CHECK:           } {mapping = [#gpu.loop_dim_map<processor = thread_z, {{.*}}>, #gpu.loop_dim_map<processor = thread_y, {{.*}}>, #gpu.loop_dim_map<processor = thread_x, {{.*}}>]}
// CHECK:         } {mapping = [#gpu.loop_dim_map<processor = block_z, {{.*}}>, #gpu.loop_dim_map<processor = block_y, {{.*}}>, #gpu.loop_dim_map<processor = block_x, {{.*}}>]}
func.func @matrix(%a: memref<?x?x?xf32>, %m: index, %r: index, %c: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = arith.constant 1.0 : f32
  scf.parallel (%i, %j, %k) = (%c0, %c0, %c0) to (%m, %r, %c) step (%c1, %c1, %c1) {
    memref.store %f, %a[%i, %j, %k] : memref<?x?x?xf32>
    scf.reduce
  }
  return
}

// -----

// Four dimensions: the outermost stays a loop inside the kernel.
// CHECK-LABEL: func.func @four
// CHECK:         } {mapping = [#gpu.loop_dim_map<processor = sequential, {{.*}}>, #gpu.loop_dim_map<processor = thread_z, {{.*}}>, #gpu.loop_dim_map<processor = thread_y, {{.*}}>, #gpu.loop_dim_map<processor = thread_x, {{.*}}>]}
// CHECK:         } {mapping = [#gpu.loop_dim_map<processor = sequential, {{.*}}>, #gpu.loop_dim_map<processor = block_z, {{.*}}>, #gpu.loop_dim_map<processor = block_y, {{.*}}>, #gpu.loop_dim_map<processor = block_x, {{.*}}>]}
func.func @four(%a: memref<?x?x?x?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = arith.constant 1.0 : f32
  scf.parallel (%i, %j, %k, %l) = (%c0, %c0, %c0, %c0) to (%n, %n, %n, %n) step (%c1, %c1, %c1, %c1) {
    memref.store %f, %a[%i, %j, %k, %l] : memref<?x?x?x?xf32>
    scf.reduce
  }
  return
}

// -----

// One dimension (a loop per model, a serial reduction inside): 32 models
// per block on x; the nested loop is left as it is.
// CHECK-LABEL: func.func @per_model
// CHECK:         scf.parallel ({{.*}}) = ({{.*}}) to ({{.*}}) step ({{.*}}) {
// CHECK:           scf.parallel
// CHECK:             scf.for
// CHECK:           } {mapping = [#gpu.loop_dim_map<processor = thread_x, {{.*}}>]}
// CHECK:         } {mapping = [#gpu.loop_dim_map<processor = block_x, {{.*}}>]}
// CHECK-NOT:     mapping
func.func @per_model(%a: memref<?x?xf32>, %s: memref<?xf32>, %m: index, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    %init = memref.load %s[%i] : memref<?xf32>
    %sum = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %init) -> f32 {
      %v = memref.load %a[%i, %j] : memref<?x?xf32>
      %next = arith.addf %acc, %v : f32
      scf.yield %next : f32
    }
    memref.store %sum, %s[%i] : memref<?xf32>
    scf.reduce
  }
  return
}

// BAD: error: mbt-map-loops-to-gpu: a block of 64 x 32 threads is not between 1 and 1024

// -----

// A sweep of one model: the canonicalizer folded the unit loop over the
// models, and a loss's mean (a store, a reduction loop, a load, a divide,
// a store) was left in host code, which must not touch device memory. The
// run becomes a kernel of one thread; the size it divides by, host
// arithmetic that reads nothing of the run, is computed before it; the
// BLAS call stays on the host.
// CHECK-LABEL: func.func @one_model_mean
// CHECK:         %[[N:.*]] = arith.sitofp
// CHECK:         scf.parallel
// CHECK:           scf.parallel
// CHECK:             memref.store
// CHECK:             scf.for
// CHECK:             memref.load
// CHECK:             arith.divf %{{.*}}, %[[N]]
// CHECK:             memref.store
// CHECK:           } {mapping = [#gpu.loop_dim_map<processor = thread_x, {{.*}}>]}
// CHECK:         } {mapping = [#gpu.loop_dim_map<processor = block_x, {{.*}}>]}
// CHECK:         call @blas
func.func private @blas(memref<1xf32>)
func.func @one_model_mean(%loss: memref<1xf32>, %x: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  memref.store %zero, %loss[%c0] : memref<1xf32>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %x[%i] : memref<?xf32>
    %s = memref.load %loss[%c0] : memref<1xf32>
    %t = arith.addf %s, %v : f32
    memref.store %t, %loss[%c0] : memref<1xf32>
  }
  %n64 = arith.index_cast %n : index to i64
  %nf = arith.sitofp %n64 : i64 to f32
  %sum = memref.load %loss[%c0] : memref<1xf32>
  %mean = arith.divf %sum, %nf : f32
  memref.store %mean, %loss[%c0] : memref<1xf32>
  call @blas(%loss) : (memref<1xf32>) -> ()
  return
}
