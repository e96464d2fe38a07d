//===- LowerToLinalg.cpp - the mbt-lower-to-linalg pass -------------------===//
#include "compiler/Conversion/MBTToLinalg/LinalgBuilders.h"
#include "compiler/Conversion/Utils/BatchMatmul.h"
#include "compiler/Conversion/Passes.h"
#include "dialects/MBT/IR/MBTOps.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::mbt {
#define GEN_PASS_DEF_MBTLOWERTOLINALG
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::mbt

using namespace mlir;
using namespace mlir::mbt;

/// Marks each product (a matmul, a convolution or one of its adjoints)
/// whose two factors mbt.round_to rounded to one format with it
/// (kOperandsFormatAttr), before the patterns lower the rounding, for the
/// product's pattern to pass on to its GEMM.
static void markRoundedProducts(ModuleOp module) {
  auto mark = [](Operation *op, Value a, Value b) {
    auto ra = a.getDefiningOp<RoundToOp>();
    auto rb = b.getDefiningOp<RoundToOp>();
    if (ra && rb && ra.getFormat() == rb.getFormat())
      op->setAttr(kOperandsFormatAttr, ra.getFormatAttr());
  };
  module.walk([&](Operation *op) {
    if (auto matmul = dyn_cast<MatmulOp>(op))
      mark(op, matmul.getLhs(), matmul.getRhs());
    else if (auto conv = dyn_cast<Conv2dOp>(op))
      mark(op, conv.getInput(), conv.getFilter());
    else if (auto grad = dyn_cast<Conv2dGradFilterOp>(op))
      mark(op, grad.getInput(), grad.getGrad());
    else if (auto grad = dyn_cast<Conv2dGradInputOp>(op))
      mark(op, grad.getGrad(), grad.getFilter());
  });
}

namespace {
struct LowerToLinalgPass
    : public mlir::mbt::impl::MBTLowerToLinalgBase<LowerToLinalgPass> {
  using MBTLowerToLinalgBase::MBTLowerToLinalgBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    markRoundedProducts(module);
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
