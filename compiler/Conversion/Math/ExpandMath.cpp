//===- ExpandMath.cpp - math ops that libm computes slowly, rewritten -----===//
//
// Two f32 rewrites, for the CPU:
//
// - tanh: glibc's tanhf goes through expm1f and costs several times an
//   expf; in a GRU's step (the candidate gate at every position, forward
//   and backward) it took a third of the CPU time. Upstream's expansion
//   computes tanh(x) = sign(x) (1 - e^(-2|x|)) / (1 + e^(-2|x|)), one exp
//   and one division, with no overflow (the exponent is never positive).
//
// - exp (including tanh's): a call to expf keeps LLVM from vectorizing the
//   loop around it (softmax, sigmoid, the gates and their adjoints), and a
//   vectorized libm (libmvec) gives other bits in its vector lanes than in
//   the scalar remainder, so a model's numbers would depend on where its
//   row falls in a batch. Upstream's polynomial approximation is fixed IEEE
//   arithmetic (x = k ln2 + r, a degree-7 polynomial in r through fma, 2^k
//   from its bits): every lane and the remainder give the same bits, and
//   the loop vectorizes. Its relative error is at most 1 ulp for x <= 0 and
//   3e-7 above (test/Conversion/expand-math-exp-accuracy.mlir).
//
// Only f32 is rewritten: f64 models keep libm, as their checks against
// finite differences want every bit.
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

/// The ops of type OpTy under `root` whose element type is f32.
template <typename OpTy> SmallVector<Operation *> f32Ops(Operation *root) {
  SmallVector<Operation *> ops;
  root->walk([&](OpTy op) {
    if (getElementTypeOrSelf(op.getType()).isF32())
      ops.push_back(op);
  });
  return ops;
}

/// Applies `patterns` to `ops` alone: pattern sets such as upstream's
/// polynomial approximations also rewrite ops this pass leaves to libm
/// (log, erf, sin, ...), and the rewritten ops' own results are not
/// revisited.
LogicalResult rewriteOnly(ArrayRef<Operation *> ops,
                          RewritePatternSet &&patterns) {
  FrozenRewritePatternSet frozen(std::move(patterns));
  GreedyRewriteConfig config;
  config.strictMode = GreedyRewriteStrictness::ExistingOps;
  return applyOpPatternsAndFold(ops, frozen, config);
}

struct ExpandMathPass
    : public mlir::mbt::impl::MBTExpandMathBase<ExpandMathPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    RewritePatternSet tanh(context);
    populateExpandTanhPattern(tanh);
    if (failed(
            rewriteOnly(f32Ops<math::TanhOp>(getOperation()), std::move(tanh))))
      return signalPassFailure();
    // After tanh's expansion, so that its exps are approximated too.
    RewritePatternSet exp(context);
    populateMathPolynomialApproximationPatterns(exp);
    if (failed(
            rewriteOnly(f32Ops<math::ExpOp>(getOperation()), std::move(exp))))
      return signalPassFailure();
  }
};

} // namespace
