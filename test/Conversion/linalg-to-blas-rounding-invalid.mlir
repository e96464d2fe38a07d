// RUN: mbt-opt --mbt-linalg-to-blas -split-input-file -verify-diagnostics %s -o /dev/null

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

// -----

// The same for a matmul in a linalg.generic: its kernels do not round.
#a = affine_map<(b, i, j, k) -> (b, i, k)>
#b = affine_map<(b, i, j, k) -> (b, k, j)>
#c = affine_map<(b, i, j, k) -> (b, i, j)>
func.func @generic(%a: memref<2x3x4xf32>, %b: memref<2x4x5xf32>,
                   %c: memref<2x3x5xf32>) {
  // expected-error@+1 {{rounds its operands (mbt.round_operands_to)}}
  linalg.generic {indexing_maps = [#a, #b, #c],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<2x3x4xf32>, memref<2x4x5xf32>)
      outs(%c : memref<2x3x5xf32>) attrs = {mbt.round_operands_to = bf16} {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}
