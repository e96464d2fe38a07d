// RUN: mbt-opt --mbt-linalg-to-blas -verify-diagnostics %s -o /dev/null

// The rounding a product owes (mbt.round_operands_to) is done by the CPU
// kernel only; a matmul the pass does not replace with it (here one
// without a batch dim) is an error, not a product of unrounded operands.
func.func @unbatched(%a: memref<3x4xf32>, %b: memref<4x5xf32>,
                     %c: memref<3x5xf32>) {
  // expected-error@+1 {{rounds its operands (mbt.round_operands_to), which only a BLAS kernel call does, but is not a batched matmul mbt-linalg-to-blas replaces}}
  linalg.matmul {mbt.round_operands_to = bf16}
      ins(%a, %b : memref<3x4xf32>, memref<4x5xf32>)
      outs(%c : memref<3x5xf32>)
  return
}
