//===- MatmulPatterns.cpp - mbt.matmul to linalg matmuls ------------------===//
//
// Ranks 2 and 3 become named linalg matmuls (plain or with a transposed
// operand), which mbt-linalg-to-blas can hand to BLAS after bufferization;
// other ranks and the doubly transposed product become a linalg.generic.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/MBTToLinalg/LinalgBuilders.h"
#include "compiler/Conversion/MBTToLinalg/PopulatePatterns.h"
#include "compiler/Conversion/Utils/BatchMatmul.h"
#include "dialects/MBT/IR/MBTOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::mbt;

namespace {

struct MatmulPattern : public OpConversionPattern<MatmulOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(MatmulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = op.getType();
    int64_t rank = type.getRank();
    Value lhs = adaptor.getLhs(), rhs = adaptor.getRhs();
    bool ta = op.getTransposeLhs(), tb = op.getTransposeRhs();

    // Dynamic sizes: batch dims from lhs, rows from lhs, columns from rhs.
    SmallVector<std::pair<Value, int64_t>> sources;
    for (int64_t d = 0; d + 2 < rank; ++d)
      sources.push_back({lhs, d});
    sources.push_back({lhs, ta ? rank - 1 : rank - 2});
    sources.push_back({rhs, tb ? rank - 2 : rank - 1});
    Value init = buildFilled(rewriter, loc, type, sources,
                             rewriter.getFloatAttr(type.getElementType(), 0.0));
    SmallVector<Value> ins{lhs, rhs};
    Operation *result = nullptr;
    SmallVector<Type> types{type};
    if (rank == 2 && !ta && !tb)
      result = rewriter.create<linalg::MatmulOp>(loc, types, ins, init);
    else if (rank == 2 && ta && !tb)
      result =
          rewriter.create<linalg::MatmulTransposeAOp>(loc, types, ins, init);
    else if (rank == 2 && !ta && tb)
      result =
          rewriter.create<linalg::MatmulTransposeBOp>(loc, types, ins, init);
    else if (rank == 3 && !ta && !tb)
      result = rewriter.create<linalg::BatchMatmulOp>(loc, types, ins, init);
    else if (rank == 3 && ta && !tb)
      result = rewriter.create<linalg::BatchMatmulTransposeAOp>(loc, types, ins,
                                                                init);
    else if (rank == 3 && !ta && tb)
      result = rewriter.create<linalg::BatchMatmulTransposeBOp>(loc, types, ins,
                                                                init);
    else
      result = buildGeneric(rewriter, loc, op, init);
    for (StringRef name : {kOperandsFormatAttr, kRoundOperandsAttr})
      if (Attribute format = op->getAttr(name))
        result->setAttr(name, format);
    rewriter.replaceOp(op, result->getResults());
    return success();
  }

  /// Loops (batch..., i, j, k) with C[batch, i, j] += op(A)[i, k] op(B)[k, j].
  static Operation *buildGeneric(PatternRewriter &rewriter, Location loc,
                                 MatmulOp op, Value init) {
    MLIRContext *ctx = rewriter.getContext();
    int64_t rank = op.getType().getRank();
    int64_t loops = rank + 1;
    SmallVector<AffineExpr> batch;
    for (int64_t d = 0; d + 2 < rank; ++d)
      batch.push_back(getAffineDimExpr(d, ctx));
    AffineExpr i = getAffineDimExpr(rank - 2, ctx);
    AffineExpr j = getAffineDimExpr(rank - 1, ctx);
    AffineExpr k = getAffineDimExpr(rank, ctx);
    auto map = [&](AffineExpr r, AffineExpr c) {
      SmallVector<AffineExpr> exprs(batch);
      exprs.append({r, c});
      return AffineMap::get(loops, 0, exprs, ctx);
    };
    SmallVector<AffineMap> maps{op.getTransposeLhs() ? map(k, i) : map(i, k),
                                op.getTransposeRhs() ? map(j, k) : map(k, j),
                                map(i, j)};
    return rewriter.create<linalg::GenericOp>(
        loc, TypeRange{op.getType()}, ValueRange{op.getLhs(), op.getRhs()},
        ValueRange{init}, maps, iterators(loops, {rank}),
        [](OpBuilder &b, Location l, ValueRange args) {
          Value prod = b.create<arith::MulFOp>(l, args[0], args[1]);
          b.create<linalg::YieldOp>(
              l, ValueRange{b.create<arith::AddFOp>(l, args[2], prod)});
        });
  }
};

} // namespace

void mlir::mbt::populateMatmulPatterns(RewritePatternSet &patterns) {
  patterns.add<MatmulPattern>(patterns.getContext());
}
