//===- EmbeddingPatterns.cpp - mbt.embedding and its adjoint --------------===//
//
// The lookup is one linalg.generic over the result [L..., I..., D] whose
// body reads the table at the position's index (tensor.extract). Its
// adjoint is a scatter-add, which linalg cannot express without reading
// the gradient once per table row (V times the work). It is an scf.forall
// over the models and the features instead, each iteration owning one
// column table[l..., :, d] and adding the gradient of every position into
// the row its index picks, serially: no two iterations write the same
// element, so the forall becomes parallel loops (OpenMP on the CPU, a
// kernel's threads on the GPU) with no atomics. One-shot bufferization
// updates the column in place.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/MBTToLinalg/LinalgBuilders.h"
#include "compiler/Conversion/MBTToLinalg/PopulatePatterns.h"
#include "dialects/MBT/IR/MBTOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::mbt;

namespace {

/// Whether `index` (an index value) lies in [0, rows), and the row to read:
/// `index` where it does, 0 where it does not (so the read stays inside).
std::pair<Value, Value> rowInRange(OpBuilder &b, Location l, Value index,
                                   Value rows) {
  Value zero = b.create<arith::ConstantIndexOp>(l, 0);
  Value ok = b.create<arith::AndIOp>(
      l, b.create<arith::CmpIOp>(l, arith::CmpIPredicate::sge, index, zero),
      b.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, index, rows));
  return {ok, b.create<arith::SelectOp>(l, ok, index, zero)};
}

struct EmbeddingPattern : public OpConversionPattern<EmbeddingOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(EmbeddingOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    int64_t rank = type.getRank(), leading = op.getNumLeadingDims();
    Value table = adaptor.getTable(), indices = adaptor.getIndices();
    SmallVector<std::pair<Value, int64_t>> sources;
    for (int64_t d = 0; d + 1 < rank; ++d)
      sources.push_back({indices, d});
    sources.push_back({table, leading + 1});
    Value init = buildEmpty(rewriter, loc, type, sources);
    Value rows = rewriter.create<tensor::DimOp>(loc, table, leading);
    SmallVector<AffineMap> maps{
        droppingMap(rewriter.getContext(), rank, {rank - 1}),
        rewriter.getMultiDimIdentityMap(rank)};
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{type}, ValueRange{indices}, ValueRange{init}, maps,
        iterators(rank), [&](OpBuilder &b, Location l, ValueRange a) {
          Value index = b.create<arith::IndexCastOp>(l, b.getIndexType(), a[0]);
          auto [ok, row] = rowInRange(b, l, index, rows);
          SmallVector<Value> at;
          for (int64_t d = 0; d < leading; ++d)
            at.push_back(b.create<linalg::IndexOp>(l, d));
          at.push_back(row);
          at.push_back(b.create<linalg::IndexOp>(l, rank - 1));
          Value v = b.create<tensor::ExtractOp>(l, table, at);
          Value zero = floatConstant(b, l, type.getElementType(), 0.0);
          b.create<linalg::YieldOp>(
              l, ValueRange{b.create<arith::SelectOp>(l, ok, v, zero)});
        });
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};

struct EmbeddingGradPattern : public OpConversionPattern<EmbeddingGradOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(EmbeddingGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    int64_t leading = type.getRank() - 2;
    Value indices = adaptor.getIndices(), grad = adaptor.getGrad();
    int64_t positions = cast<RankedTensorType>(indices.getType()).getRank();
    Value table =
        buildFilledLike(rewriter, loc, type, adaptor.getLike(),
                        rewriter.getFloatAttr(type.getElementType(), 0));
    Value rows = rewriter.create<tensor::DimOp>(loc, table, leading);
    Value zero = rewriter.create<arith::ConstantIndexOp>(loc, 0);
    Value one = rewriter.create<arith::ConstantIndexOp>(loc, 1);

    // In parallel over the models and the features: each iteration owns the
    // column table[l..., :, d], so no two write the same element.
    SmallVector<OpFoldResult> bounds;
    for (int64_t d = 0; d < leading; ++d)
      bounds.push_back(tensor::getMixedSize(rewriter, loc, table, d));
    bounds.push_back(tensor::getMixedSize(rewriter, loc, table, leading + 1));
    auto forall = rewriter.create<scf::ForallOp>(loc, bounds, ValueRange{table},
                                                 std::nullopt);
    SmallVector<Value> ivs = forall.getInductionVars();
    ArrayRef<Value> models = ArrayRef<Value>(ivs).drop_back();
    Value feature = ivs.back();
    Value shared = forall.getRegionOutArgs()[0];

    // The column [V] this iteration owns, as a rank-reducing slice of the
    // table.
    SmallVector<Value> columnAt(models);
    columnAt.append({Value(), feature});
    SliceAt owned = sliceAt(rewriter, loc, table, columnAt);
    rewriter.setInsertionPoint(forall.getTerminator());
    Value column = rewriter.create<tensor::ExtractSliceOp>(
        loc, owned.type, shared, owned.offsets, owned.sizes, owned.strides);

    // The positions past the model dims, in order: one scf.for each.
    SmallVector<Value> at(models.begin(), models.end());
    std::function<Value(OpBuilder &, Location, Value)> loopOver =
        [&](OpBuilder &b, Location l, Value acc) -> Value {
      if (static_cast<int64_t>(at.size()) == positions)
        return addEntry(b, l, acc, indices, grad, at, feature, rows);
      Value bound = b.create<tensor::DimOp>(l, indices, at.size());
      auto loop = b.create<scf::ForOp>(
          l, zero, bound, one, ValueRange{acc},
          [&](OpBuilder &nb, Location nl, Value iv, ValueRange carried) {
            at.push_back(iv);
            Value next = loopOver(nb, nl, carried[0]);
            at.pop_back();
            nb.create<scf::YieldOp>(nl, next);
          });
      return loop.getResult(0);
    };
    Value summed = loopOver(rewriter, loc, column);

    rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
    rewriter.create<tensor::ParallelInsertSliceOp>(
        loc, summed, shared, owned.offsets, owned.sizes, owned.strides);
    rewriter.replaceOp(op, forall.getResults());
    return success();
  }

  /// column[index] += grad[at..., feature] where index = indices[at...] is a
  /// row of the table.
  static Value addEntry(OpBuilder &b, Location l, Value column, Value indices,
                        Value grad, ArrayRef<Value> at, Value feature,
                        Value rows) {
    Value index = b.create<arith::IndexCastOp>(
        l, b.getIndexType(), b.create<tensor::ExtractOp>(l, indices, at));
    auto [ok, row] = rowInRange(b, l, index, rows);
    SmallVector<Value> source(at);
    source.push_back(feature);
    auto branch = b.create<scf::IfOp>(
        l, ok,
        [&](OpBuilder &tb, Location tl) {
          Value sum = tb.create<arith::AddFOp>(
              tl, tb.create<tensor::ExtractOp>(tl, column, ValueRange{row}),
              tb.create<tensor::ExtractOp>(tl, grad, source));
          tb.create<scf::YieldOp>(tl, ValueRange{tb.create<tensor::InsertOp>(
                                          tl, sum, column, ValueRange{row})});
        },
        [&](OpBuilder &eb, Location el) {
          eb.create<scf::YieldOp>(el, ValueRange{column});
        });
    return branch.getResult(0);
  }
};

} // namespace

void mlir::mbt::populateEmbeddingPatterns(RewritePatternSet &patterns) {
  patterns.add<EmbeddingPattern, EmbeddingGradPattern>(patterns.getContext());
}
