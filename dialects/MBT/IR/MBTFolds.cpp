//===- MBTFolds.cpp - folders of the mbt ops ------------------------------===//
#include "dialects/MBT/IR/MBTOps.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::mbt;

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

/// reshape to the same type is the identity.
OpFoldResult ReshapeOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

/// unbroadcast that sums over nothing is the identity.
OpFoldResult UnbroadcastOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

/// Whether `perm` swaps the last two dims and keeps the others.
static bool swapsLastTwo(ArrayRef<int64_t> perm) {
  int64_t rank = static_cast<int64_t>(perm.size());
  if (rank < 2 || perm[rank - 2] != rank - 1 || perm[rank - 1] != rank - 2)
    return false;
  for (int64_t d = 0; d + 2 < rank; ++d)
    if (perm[d] != d)
      return false;
  return true;
}

namespace {
/// matmul(transpose(a), b) -> matmul(a, b) {transpose_lhs} when the
/// transpose swaps the last two dims only (likewise for b): the GEMM reads
/// the operand transposed instead of copying it every step, as `x @
/// transpose(w)` (tied weights) and the batched adjoints produce.
struct FoldTransposeIntoMatmul : public OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;

  static Value swappedLastTwo(Value v) {
    auto transpose = v.getDefiningOp<TransposeOp>();
    if (!transpose || !swapsLastTwo(transpose.getPermutation()))
      return {};
    return transpose.getInput();
  }

  LogicalResult matchAndRewrite(MatmulOp op,
                                PatternRewriter &rewriter) const override {
    Value lhs = swappedLastTwo(op.getLhs());
    Value rhs = swappedLastTwo(op.getRhs());
    if (!lhs && !rhs)
      return failure();
    bool ta = op.getTransposeLhs(), tb = op.getTransposeRhs();
    if (lhs)
      ta = !ta;
    if (rhs)
      tb = !tb;
    rewriter.replaceOpWithNewOp<MatmulOp>(op, lhs ? lhs : op.getLhs(),
                                          rhs ? rhs : op.getRhs(), ta, tb);
    return success();
  }
};
} // namespace

void MatmulOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                           MLIRContext *ctx) {
  patterns.add<FoldTransposeIntoMatmul>(ctx);
}

namespace {
/// transpose(matmul(a, b)) = matmul(b, a) with both flags flipped, as
/// (op(A) op(B))^T = op(B)^T op(A)^T: the adjoint of a transposed weight
/// is then one GEMM, not a GEMM and a copy.
struct FoldMatmulIntoTranspose : public OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto matmul = op.getInput().getDefiningOp<MatmulOp>();
    if (!matmul || !matmul->hasOneUse() || !swapsLastTwo(op.getPermutation()))
      return failure();
    rewriter.replaceOpWithNewOp<MatmulOp>(op, matmul.getRhs(), matmul.getLhs(),
                                          !matmul.getTransposeRhs(),
                                          !matmul.getTransposeLhs());
    return success();
  }
};
} // namespace

void TransposeOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                              MLIRContext *ctx) {
  patterns.add<FoldMatmulIntoTranspose>(ctx);
}

namespace {
/// tensor.dim of a tensor.expand_shape is the op's output size. mbt lowers
/// mbt.split_rows to an expand_shape whose group has two dynamic sizes
/// (batch and positions), and MLIR 19's own fold of such a dim divides the
/// source size by the group's other sizes, a dynamic one among them: it
/// builds a division by ShapedType::kDynamic. This pattern, at a higher
/// benefit, runs first.
struct DimOfExpandShapeIsOutputSize : public OpRewritePattern<tensor::DimOp> {
  DimOfExpandShapeIsOutputSize(MLIRContext *context)
      : OpRewritePattern(context, /*benefit=*/2) {}

  LogicalResult matchAndRewrite(tensor::DimOp op,
                                PatternRewriter &rewriter) const override {
    auto expand = op.getSource().getDefiningOp<tensor::ExpandShapeOp>();
    std::optional<int64_t> dim = op.getConstantIndex();
    if (!expand || !dim || !expand.getResultType().isDynamicDim(*dim))
      return failure();
    SmallVector<OpFoldResult> sizes = getMixedValues(
        expand.getStaticOutputShape(), expand.getOutputShape(), rewriter);
    rewriter.replaceOp(op, getValueOrCreateConstantIndexOp(
                               rewriter, op.getLoc(), sizes[*dim]));
    return success();
  }
};
} // namespace

void MBTDialect::getCanonicalizationPatterns(
    RewritePatternSet &patterns) const {
  patterns.add<DimOfExpandShapeIsOutputSize>(getContext());
}
