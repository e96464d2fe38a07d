//===- LowerToLinalg.cpp - the mbt-lower-to-linalg pass -------------------===//
#include "compiler/Conversion/MBTToLinalg/LinalgBuilders.h"
#include "compiler/Conversion/Passes.h"
#include "dialects/MBT/IR/MBTOps.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::mbt {
#define GEN_PASS_DEF_MBTLOWERTOLINALG
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::mbt

using namespace mlir;
using namespace mlir::mbt;

namespace {
struct LowerToLinalgPass
    : public mlir::mbt::impl::MBTLowerToLinalgBase<LowerToLinalgPass> {
  using MBTLowerToLinalgBase::MBTLowerToLinalgBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    RewritePatternSet patterns(&getContext());
    populateElementwisePatterns(patterns);
    populateMatmulPatterns(patterns);
    populateReductionPatterns(patterns);
    populateLossPatterns(patterns);
    populateSlicePatterns(patterns);
    populateClipPatterns(patterns);
    populateGuardStepPatterns(patterns);
    populatePrecisionPatterns(patterns);
    populateDropoutPatterns(patterns);
    populateConvPatterns(patterns);
    populatePoolPatterns(patterns);
    populateNormPatterns(patterns);
    populateEmbeddingPatterns(patterns);
    populateMaskedMeanPatterns(patterns);
    populateRowsPatterns(patterns);
    populateAttentionPatterns(patterns);
    populateGruPatterns(patterns);
    populateLstmPatterns(patterns);
    populateSchedulePatterns(patterns);
    populateOptimizerPatterns(patterns, scalarsPerElement);
    GreedyRewriteConfig config;
    config.strictMode = GreedyRewriteStrictness::ExistingOps;
    if (failed(applyPatternsAndFoldGreedily(module, std::move(patterns),
                                            config)))
      return signalPassFailure();
    // Every mbt op but the sweep and the update rules (whose copies the
    // fused update's loops hold) must be gone.
    WalkResult result = module.walk<WalkOrder::PreOrder>([](Operation *op) {
      if (isa<SweepOp, OptimizerOp>(op))
        return WalkResult::skip();
      if (isa<MBTDialect>(op->getDialect())) {
        op->emitOpError("has no lowering to linalg");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
