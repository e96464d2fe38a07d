//===- ConstEval.h - the evaluator of constant expressions ------*- C++ -*-===//
//
// One evaluator for every constant expression of a spec: the settings of a
// sweep, the arguments of initializers, sizes and constant arguments inside
// models and functions, and the conditions of optimizers. It knows numbers,
// `true`/`false`, lists, unary `-` and `not`, `+ - * /` (true division, as
// in Python), comparisons and `and`/`or`; operators apply elementwise to
// lists, a scalar meeting every element, and integer arithmetic stays exact.
// What names and calls mean depends on where the expression is, and a
// subclass says it:
//   - SweepEval.h: `models`, grid axes, range/linspace/logspace and the
//     seeded draws;
//   - SemaInternal.h (BodyConstants): the tensors in scope and dim(...);
//   - SemaOptim.cpp: an optimizer's flags, and its hyperparameters as one
//     column of values per model.
//
//===----------------------------------------------------------------------===//
#ifndef MBT_COMPILER_FRONTEND_CONSTEVAL_H
#define MBT_COMPILER_FRONTEND_CONSTEVAL_H

#include "compiler/Frontend/AST.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/LogicalResult.h"

#include <string>
#include <vector>

namespace mbt {

/// The value of a constant expression: a scalar or a list of scalars.
struct ConstValue {
  bool isList = false;
  /// The list's elements, or the scalar as the only element.
  std::vector<ConstScalar> elements;

  static ConstValue scalar(ConstScalar value) {
    ConstValue result;
    result.elements.push_back(value);
    return result;
  }
  static ConstValue list(std::vector<ConstScalar> elements) {
    ConstValue result;
    result.isList = true;
    result.elements = std::move(elements);
    return result;
  }
};

/// Formats a double for diagnostics as %g, keeping a float that happens to
/// be integral recognizable as a float ("2.0").
std::string formatNumber(double number);

/// Evaluates constant expressions, reporting errors as diagnostics. Every
/// failure has been reported (or follows from an error reported earlier).
/// A subclass is the scope: it says what names and calls mean.
class ConstEvaluator {
public:
  explicit ConstEvaluator(mlir::MLIRContext &ctx) : ctx(ctx) {}
  virtual ~ConstEvaluator() = default;

  /// Evaluates `expr`. `what` names it where a diagnostic needs a subject
  /// ("a dimension size", "argument 'out' of 'linear'"); without one, the
  /// diagnostics name no subject.
  mlir::FailureOr<ConstValue> evaluate(const ExprAST &expr,
                                       llvm::StringRef what = {});
  /// A single scalar (in a scope without lists, every value is one).
  mlir::FailureOr<ConstScalar> evaluateScalar(const ExprAST &expr,
                                              llvm::StringRef what);
  /// A single scalar of `kind` (an int is also a float).
  mlir::FailureOr<ConstScalar>
  evaluateAs(const ExprAST &expr, ConstScalar::Kind kind, llvm::StringRef what);
  /// A single number, int or float; `what` names it when it is not one.
  mlir::FailureOr<ConstScalar> evaluateNumber(const ExprAST &expr,
                                              llvm::StringRef what);
  /// A single integer.
  mlir::FailureOr<int64_t> evaluateInteger(const ExprAST &expr,
                                           llvm::StringRef what);

protected:
  /// The value of `var`, which is neither `true` nor `false`.
  virtual mlir::FailureOr<ConstValue> lookup(const VariableExprAST &var) = 0;
  /// The value of `call`.
  virtual mlir::FailureOr<ConstValue> call(const CallExprAST &call) = 0;
  /// Whether list literals are values here.
  virtual bool allowsLists() const { return true; }
  /// The subject of the expression being evaluated (see evaluate).
  llvm::StringRef subject() const { return what; }

  mlir::MLIRContext &ctx;

private:
  mlir::FailureOr<ConstValue> eval(const ExprAST &expr);
  mlir::FailureOr<ConstValue> evalList(const ListExprAST &list);
  mlir::FailureOr<ConstValue> evalUnary(const UnaryExprAST &unary);
  mlir::FailureOr<ConstValue> evalBinary(const BinaryExprAST &binary);
  mlir::FailureOr<ConstScalar> applyUnary(const UnaryExprAST &unary,
                                          const ConstScalar &operand);
  mlir::FailureOr<ConstScalar> applyBinary(const BinaryExprAST &binary,
                                           const ConstScalar &lhs,
                                           const ConstScalar &rhs);
  /// "WHAT must be a number" where there is a subject, else "expected a
  /// number".
  std::string expectedNumber() const;

  std::string what;
};

/// Converts `value` to an argument of `kind`, or reports at `loc` that
/// `what` must be of that kind.
mlir::FailureOr<ConstScalar> convertScalar(mlir::MLIRContext &ctx,
                                           const ConstScalar &value,
                                           ConstScalar::Kind kind,
                                           const Location &loc,
                                           llvm::StringRef what);

/// Binds the arguments of `call` to the parameters `params` by position or
/// by keyword. `callee` names the callee in diagnostics (e.g. "initializer
/// 'normal'") and `noun` its parameters ("argument", "hyperparameter").
/// Returns one expression per parameter, null where the argument is absent.
mlir::FailureOr<llvm::SmallVector<const ExprAST *>>
bindArguments(mlir::MLIRContext &ctx, const CallExprAST &call,
              llvm::ArrayRef<llvm::StringRef> params, llvm::StringRef callee,
              llvm::StringRef noun);

} // namespace mbt

#endif // MBT_COMPILER_FRONTEND_CONSTEVAL_H
