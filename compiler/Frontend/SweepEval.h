//===- SweepEval.h - constant expressions and the sweep ---------*- C++ -*-===//
//
// The scope of a sweep's constant expressions (the operators are
// ConstEval.h's): `models`, names bound by a sweep's grid, range(n),
// range(start, stop), linspace(start, stop, num) and logspace(start, stop,
// num) (geometric spacing between the endpoints, like numpy.geomspace), and
// the seeded per-model draws uniform, loguniform, randint and choice
// (SweepDraws.cpp). Sema uses it for the sweep and for initializers.
//
//===----------------------------------------------------------------------===//
#ifndef MBT_COMPILER_FRONTEND_SWEEPEVAL_H
#define MBT_COMPILER_FRONTEND_SWEEPEVAL_H

#include "compiler/Frontend/AST.h"
#include "compiler/Frontend/ConstEval.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/LogicalResult.h"

#include "llvm/ADT/StringMap.h"

#include <optional>
#include <string>

namespace mbt {

/// Evaluates the expressions of a sweep, whose names are `models` and the
/// grid axes and whose functions are range, linspace, logspace and the
/// seeded draws. Outside a sweep (initializer arguments)
/// it has no `models`.
class SweepEvaluator final : public ConstEvaluator {
public:
  /// `models` is the value of the name `models`: std::nullopt where the name
  /// does not exist (outside a sweep); `modelsBroken` marks a sweep whose
  /// `models` setting is missing or bad, where uses fail silently.
  SweepEvaluator(mlir::MLIRContext &ctx, std::optional<int64_t> models,
                 bool modelsBroken = false)
      : ConstEvaluator(ctx), models(models), modelsBroken(modelsBroken) {}

  /// One number per model: a number (the same for every model) or a list
  /// of exactly `models` numbers.
  mlir::FailureOr<std::vector<double>> evaluatePerModel(const ExprAST &expr,
                                                        llvm::StringRef what);

  /// The number of models of the sweep, when it is known.
  std::optional<int64_t> modelCount() const { return models; }

  /// Binds `name` (a grid axis) to `value` in the expressions evaluated
  /// after.
  void define(llvm::StringRef name, ConstValue value) {
    variables[name] = std::move(value);
  }

  /// Seed of the random draws. The k-th draw call evaluated (in source
  /// order) gives model m the Philox4x32-10 block keyed by the seed at
  /// counter {m, k, 0, "DRAW"}, so model m's value does not depend on the
  /// number of models.
  void setDrawSeed(uint64_t seed) { drawSeed = seed; }

private:
  mlir::FailureOr<ConstValue> lookup(const VariableExprAST &var) override;
  mlir::FailureOr<ConstValue> call(const CallExprAST &call) override;
  mlir::FailureOr<ConstValue> evaluateRange(const CallExprAST &call);
  mlir::FailureOr<ConstValue> evaluateSpace(const CallExprAST &call);
  mlir::FailureOr<ConstValue> evaluateDraw(const CallExprAST &call);

  std::optional<int64_t> models;
  bool modelsBroken;
  llvm::StringMap<ConstValue> variables;
  uint64_t drawSeed = 0;
  uint32_t drawCount = 0;
};

/// The most elements a list may have (and the most models in a sweep).
constexpr int64_t kMaxListLength = 1 << 20;

} // namespace mbt

#endif // MBT_COMPILER_FRONTEND_SWEEPEVAL_H
