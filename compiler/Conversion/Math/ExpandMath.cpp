//===- ExpandMath.cpp - math ops that libm computes slowly, rewritten -----===//
//
// glibc's tanhf goes through expm1f and costs several times an expf: in a
// GRU's step (the candidate gate at every position, forward and backward)
// it took a third of the CPU time. Upstream's expansion computes
// tanh(x) = sign(x) (1 - e^(-2|x|)) / (1 + e^(-2|x|)), one exp and one
// division, with no overflow (the exponent is never positive); its
// absolute error is at most 1.1e-7 (tanhf: 6e-8), measured over [-10, 10].
// Only f32 is rewritten: f64 models keep libm's tanh, as their checks
// against finite differences want every bit.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/Passes.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::mbt {
#define GEN_PASS_DEF_MBTEXPANDMATH
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::mbt

using namespace mlir;

namespace {

struct ExpandMathPass
    : public mlir::mbt::impl::MBTExpandMathBase<ExpandMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateExpandTanhPattern(patterns);
    // The f64 tanh ops are left alone: the pattern set sees only the f32
    // ones, through a filter on the ops the driver visits.
    SmallVector<Operation *> f32Tanh;
    getOperation().walk([&](math::TanhOp op) {
      if (getElementTypeOrSelf(op.getType()).isF32())
        f32Tanh.push_back(op);
    });
    FrozenRewritePatternSet frozen(std::move(patterns));
    GreedyRewriteConfig config;
    config.strictMode = GreedyRewriteStrictness::ExistingOps;
    if (failed(applyOpPatternsAndFold(f32Tanh, frozen, config)))
      return signalPassFailure();
  }
};

} // namespace
