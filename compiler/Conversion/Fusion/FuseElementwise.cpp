//===- FuseElementwise.cpp - elementwise fusion that keeps the GEMMs ------===//
//
// The patterns and canonicalizations of upstream's
// linalg-fuse-elementwise-ops (mlir/lib/Dialect/Linalg/Transforms/
// ElementwiseOpFusion.cpp), driven top-down as it does, with two changes to
// the control function. Nothing fuses into or out of a named linalg op or
// a linalg.generic that is a matmul: these are the batched matmuls that
// mbt-linalg-to-blas (BLAS, cuBLAS) recognizes; an elementwise producer
// fused into one, or a reshape folded into one by expansion, would leave a
// linalg.generic computed by loops. And no reshape moves across a generic
// where it fuses nothing on its far side.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/Passes.h"
#include "compiler/Conversion/Utils/BatchMatmul.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::mbt {
#define GEN_PASS_DEF_MBTFUSEELEMENTWISE
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::mbt

using namespace mlir;

namespace {

/// A linalg op other than linalg.generic (a named matmul, a fill, a copy),
/// or a linalg.generic that is a matmul.
bool isKeptWhole(Operation *op) {
  if (auto generic = dyn_cast_or_null<linalg::GenericOp>(op))
    return mlir::mbt::matchGenericMatmul(generic).has_value();
  return isa_and_nonnull<linalg::LinalgOp>(op);
}

/// Whether `op` is a linalg.generic that an elementwise fusion may take.
bool isFusableGeneric(Operation *op) {
  return isa_and_nonnull<linalg::GenericOp>(op) && !isKeptWhole(op);
}

/// Whether moving `reshape` across the generic on its other side (fusion
/// by expansion) gains nothing: nothing on the reshape's far side (the
/// producer of a collapse_shape, every user of an expand_shape) is a
/// generic it could fuse with: a kept-whole op, a loop's result, a
/// function's argument. The expansion would only split the generic's
/// innermost loop (32 contiguous values become 4 loops of 8, too short to
/// vectorize).
bool reshapeFusesNothing(Operation *reshape) {
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(reshape))
    return !isFusableGeneric(collapse.getSrc().getDefiningOp());
  if (!isa<tensor::ExpandShapeOp>(reshape) || reshape->use_empty())
    return false;
  return llvm::none_of(reshape->getUsers(), isFusableGeneric);
}

bool shouldFuse(OpOperand *fused) {
  Operation *producer = fused->get().getDefiningOp();
  Operation *consumer = fused->getOwner();
  if (!producer || isKeptWhole(producer) || isKeptWhole(consumer))
    return false;
  if (reshapeFusesNothing(consumer) || reshapeFusesNothing(producer))
    return false;
  return producer->hasOneUse();
}

struct FuseElementwisePass
    : public mlir::mbt::impl::MBTFuseElementwiseBase<FuseElementwisePass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    linalg::ControlFusionFn control = shouldFuse;
    RewritePatternSet patterns(ctx);
    linalg::populateElementwiseOpsFusionPatterns(patterns, control);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, control);
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, ctx);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, ctx);
    ctx->getLoadedDialect<linalg::LinalgDialect>()->getCanonicalizationPatterns(
        patterns);
    linalg::populateConstantFoldLinalgOperations(patterns, control);
    GreedyRewriteConfig config;
    config.useTopDownTraversal = true;
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns),
                                            config)))
      return signalPassFailure();
  }
};

} // namespace
