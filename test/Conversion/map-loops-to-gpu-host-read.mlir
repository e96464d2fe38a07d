// RUN: mbt-opt --mbt-map-loops-to-gpu --verify-diagnostics %s

// A value read from device memory that host code then uses (here as a loop
// bound) cannot move into a kernel: an error at the op, not a host load
// of a device pointer at run time.
func.func @bound_from_memory(%sizes: memref<1xindex>, %x: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = arith.constant 1.0 : f32
  // expected-error @+1 {{computes from device memory a value that host code uses}}
  %n = memref.load %sizes[%c0] : memref<1xindex>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %f, %x[%i] : memref<?xf32>
    scf.reduce
  }
  return
}
