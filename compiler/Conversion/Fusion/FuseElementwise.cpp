//===- FuseElementwise.cpp - elementwise fusion that keeps the GEMMs ------===//
//
// The patterns and canonicalizations of upstream's
// linalg-fuse-elementwise-ops (mlir/lib/Dialect/Linalg/Transforms/
// ElementwiseOpFusion.cpp), driven top-down as it does, with one change to
// the control function: nothing fuses into or out of a named linalg op.
// Named ops are the batched matmuls that mbt-linalg-to-blas (BLAS, cuBLAS)
// recognizes; a reshape folded into one by expansion would make it a
// linalg.generic computed by loops.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::mbt {
#define GEN_PASS_DEF_MBTFUSEELEMENTWISE
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::mbt

using namespace mlir;

namespace {

/// A linalg op other than linalg.generic (a named matmul, a fill, a copy).
bool isNamedLinalgOp(Operation *op) {
  return isa_and_nonnull<linalg::LinalgOp>(op) && !isa<linalg::GenericOp>(op);
}

struct FuseElementwisePass
    : public mlir::mbt::impl::MBTFuseElementwiseBase<FuseElementwisePass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    linalg::ControlFusionFn control = [](OpOperand *fused) {
      Operation *producer = fused->get().getDefiningOp();
      if (!producer || isNamedLinalgOp(producer) ||
          isNamedLinalgOp(fused->getOwner()))
        return false;
      return producer->hasOneUse();
    };
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
