//===- BatchMatmul.h - the batched matmuls of a step ------------*- C++ -*-===//
//
// After bufferization, the batched matmuls of a step are linalg named ops on
// strided memrefs. The passes that replace them (with a BLAS call, or with
// generated vector kernels) share how they recognize one and how they spot
// the zero-fill of its output that they can fold into it.
//
//===----------------------------------------------------------------------===//
#ifndef MBT_COMPILER_CONVERSION_UTILS_BATCHMATMUL_H
#define MBT_COMPILER_CONVERSION_UTILS_BATCHMATMUL_H

#include "dialects/MBT/IR/MBTDialect.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <optional>

namespace mlir::mbt {

/// The discardable attribute (a TypeAttr: bf16 or f16) on a matmul whose
/// two operands hold values of that format (mbt-autocast rounded them):
/// mbt-lower-to-linalg puts it on the linalg op, and on a GPU
/// mbt-linalg-to-blas calls a kernel that multiplies in that format on the
/// tensor cores, which gives the same exact products.
constexpr llvm::StringLiteral kOperandsFormatAttr =
    mlir::mbt::MBTDialect::OperandsFormatAttrHelper::getNameStr();

/// The discardable attribute (a TypeAttr: bf16) on a linalg batched matmul
/// whose operands are still to be rounded to that format: part of what the
/// op computes, so only mbt-linalg-to-blas may replace such an op, with the
/// CPU kernel that rounds its operands as it packs them
/// (mbt_rt_batch_matmul_f32_bf16); every other pass leaves it alone.
constexpr llvm::StringLiteral kRoundOperandsAttr =
    mlir::mbt::MBTDialect::RoundOperandsToAttrHelper::getNameStr();

/// Which operands of a batched matmul are transposed.
struct BatchMatmulKind {
  bool transposeA = false;
  bool transposeB = false;
};

/// Whether `op` is a batched f32 or f64 matmul on memrefs, and which
/// operands it transposes. Unless `anyStrides` (the CPU's kernels read any
/// strides), every operand must have a unit inner stride.
std::optional<BatchMatmulKind> matchBatchMatmul(linalg::LinalgOp op,
                                                bool anyStrides = false);

/// The loops of a linalg.generic that is a batched matmul in all but name
/// (attention's products over models, sequences and heads): its body adds
/// the product of its two inputs to its output, each operand indexes a
/// distinct loop with each of its dims, and every loop is a batch loop (in
/// A, B and C), the one m loop (A and C), the one n loop (B and C) or the
/// one k loop (A and B, the only reduction).
struct GenericMatmul {
  SmallVector<unsigned> batch; // in the order of C's dims
  unsigned m = 0, n = 0, k = 0;

  /// Each operand's dims in the kernel's order: A [batch..., m, k],
  /// B [batch..., k, n], C [batch..., m, n], as positions in its map.
  SmallVector<unsigned> permutation(AffineMap map, unsigned rows,
                                    unsigned cols) const;
};

/// Whether `op` is such a matmul of f32 or f64 (on tensors or memrefs).
std::optional<GenericMatmul> matchGenericMatmul(linalg::GenericOp op);

/// The op that zeroes `op`'s output right before `op`, which a replacement
/// can fold by overwriting the output instead of accumulating; null when
/// there is none. Either a zero fill of the output, or a copy into it of a
/// buffer that a zero fill wrote, with nothing else touching that buffer in
/// between (CSE merges the zero-filled inits of two matmuls into one
/// tensor, and bufferization then copies it for the first).
Operation *zeroingBefore(linalg::LinalgOp op);

} // namespace mlir::mbt

#endif
