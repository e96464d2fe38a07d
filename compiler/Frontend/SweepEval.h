//===- SweepEval.h - constant expressions and the sweep ---------*- C++ -*-===//
//
// Evaluates the constant expressions of a spec (sweep settings, initializer
// arguments): numbers, lists, `models`, unary minus, `+ - *` (elementwise on
// lists), range(n), range(start, stop), linspace(start, stop, num) and
// logspace(start, stop, num) (geometric spacing between the endpoints, like
// numpy.geomspace), the seeded per-model draws uniform, loguniform, randint
// and choice (SweepDraws.cpp), and names bound by a sweep's grid. Sema uses
// it for the sweep and for initializers.
//
//===----------------------------------------------------------------------===//
#ifndef MBT_COMPILER_FRONTEND_SWEEPEVAL_H
#define MBT_COMPILER_FRONTEND_SWEEPEVAL_H

#include "compiler/Frontend/AST.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/LogicalResult.h"

#include "llvm/ADT/StringMap.h"

#include <optional>
#include <string>

namespace mbt {

/// A number of a constant expression; integer literals and arithmetic on
/// them stay exact.
struct ConstNumber {
  double value = 0;
  bool isInteger = false;
  int64_t intValue = 0;

  static ConstNumber integer(int64_t v) {
    return {static_cast<double>(v), true, v};
  }
  static ConstNumber real(double v) { return {v, false, 0}; }
};

/// The value of a constant expression: a number or a list of numbers.
struct ConstValue {
  bool isList = false;
  /// The list's elements, or the number as the only element.
  std::vector<ConstNumber> elements;
};

/// Formats a number for diagnostics: integers exactly, others as %g.
std::string formatNumber(const ConstNumber &number);
std::string formatNumber(double number);

/// Evaluates constant expressions, reporting errors as diagnostics. Every
/// failure has been reported (or follows from an error reported earlier).
class ConstEvaluator {
public:
  /// `models` is the value of the name `models`: std::nullopt where the name
  /// does not exist (outside a sweep); `modelsBroken` marks a sweep whose
  /// `models` setting is missing or bad, where uses fail silently.
  ConstEvaluator(mlir::MLIRContext &ctx, std::optional<int64_t> models,
                 bool modelsBroken = false)
      : ctx(ctx), models(models), modelsBroken(modelsBroken) {}

  mlir::FailureOr<ConstValue> evaluate(const ExprAST &expr);
  /// A single number; `what` names it in diagnostics.
  mlir::FailureOr<ConstNumber> evaluateNumber(const ExprAST &expr,
                                              llvm::StringRef what);
  /// A single integer.
  mlir::FailureOr<int64_t> evaluateInteger(const ExprAST &expr,
                                           llvm::StringRef what);
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
  mlir::FailureOr<ConstValue> evaluateVariable(const VariableExprAST &var);
  mlir::FailureOr<ConstValue> evaluateBinary(const BinaryExprAST &binary);
  mlir::FailureOr<ConstValue> evaluateCall(const CallExprAST &call);
  mlir::FailureOr<ConstValue> evaluateRange(const CallExprAST &call);
  mlir::FailureOr<ConstValue> evaluateSpace(const CallExprAST &call);
  mlir::FailureOr<ConstValue> evaluateDraw(const CallExprAST &call);

  mlir::MLIRContext &ctx;
  std::optional<int64_t> models;
  bool modelsBroken;
  llvm::StringMap<ConstValue> variables;
  uint64_t drawSeed = 0;
  uint32_t drawCount = 0;
};

/// Binds the arguments of `call` to the parameters `params` by position or
/// by keyword. `callee` names the callee in diagnostics (e.g. "initializer
/// 'normal'") and `noun` its parameters ("argument", "hyperparameter").
/// Returns one expression per parameter, null where the argument is absent.
mlir::FailureOr<llvm::SmallVector<const ExprAST *>>
bindArguments(mlir::MLIRContext &ctx, const CallExprAST &call,
              llvm::ArrayRef<llvm::StringRef> params, llvm::StringRef callee,
              llvm::StringRef noun);

/// The most elements a list may have (and the most models in a sweep).
constexpr int64_t kMaxListLength = 1 << 20;

} // namespace mbt

#endif // MBT_COMPILER_FRONTEND_SWEEPEVAL_H
