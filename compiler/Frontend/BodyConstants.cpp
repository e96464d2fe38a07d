//===- BodyConstants.cpp - constant expressions inside models -------------===//
//
// Sizes in declared shapes, constant arguments of calls and the conditions
// of `if`s are evaluated when a body is expanded. By then the constant
// arguments have been replaced by their values, so what is left to evaluate
// is numbers, `true`/`false`, operators and `dim(...)` of tensors in scope.
//
//===----------------------------------------------------------------------===//
#include "compiler/Frontend/Sema.h"
#include "compiler/Frontend/SemaInternal.h"
#include "compiler/Frontend/SweepEval.h"

#include "mlir/IR/BuiltinTypes.h"

#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mbt;
using namespace mbt::sema;
using llvm::cast;
using mlir::failure;
using mlir::FailureOr;

FailureOr<ConstValue> BodyConstants::lookup(const VariableExprAST &var) {
  llvm::StringRef name = var.getName();
  const ValueType *type = lookupType(name);
  if (!type) {
    emitError(ctx, var.loc()) << "use of undeclared name '" << name << "'";
    return failure();
  }
  auto diag = emitError(ctx, var.loc())
              << subject() << " must be a constant, but '" << name << "' ";
  if (type->perModel)
    diag << "differs between the models of the sweep (only tensor "
            "expressions can use such a model argument)";
  else
    diag << (type->kind == ValueType::Class    ? "holds class indices"
             : type->kind == ValueType::Tokens ? "holds token ids"
             : type->kind == ValueType::NextTokens
                 ? "holds the input's next tokens"
                 : "is a tensor");
  return failure();
}

FailureOr<ConstValue> BodyConstants::call(const CallExprAST &call) {
  if (call.getCallee() == "dim") {
    auto size = evaluateDim(call);
    if (failed(size))
      return failure();
    return ConstValue::scalar(*size);
  }
  emitError(ctx, call.loc())
      << subject() << " must be a constant expression (numbers, constant "
      << "arguments, dim(...)), got a call to '" << call.getCallee() << "'";
  return failure();
}

/// dim(t) is the last per-sample size of t; dim(t, axis) the size along a
/// per-sample axis (negative: from the end). For the target it is the
/// number of classes.
FailureOr<ConstScalar> BodyConstants::evaluateDim(const CallExprAST &call) {
  static const llvm::StringRef params[] = {"tensor", "axis"};
  auto bound = bindArguments(ctx, call, params, "'dim'", "argument");
  if (failed(bound))
    return failure();
  const ExprAST *tensor = (*bound)[0];
  const auto *var = llvm::dyn_cast_or_null<VariableExprAST>(tensor);
  const ValueType *type = var ? lookupType(var->getName()) : nullptr;
  if (!type) {
    if (var && var->getName() != "true" && var->getName() != "false") {
      emitError(ctx, var->loc())
          << "use of undeclared name '" << var->getName() << "'";
      return failure();
    }
    emitError(ctx, tensor ? tensor->loc() : call.loc())
        << "the first argument of 'dim' must name a tensor";
    return failure();
  }
  if (!type->isValid())
    return failure(); // its definition has been reported
  int64_t axis = -1;
  if (const ExprAST *axisExpr = (*bound)[1]) {
    auto value = evaluateAs(*axisExpr, ConstScalar::Int, "the axis of 'dim'");
    if (failed(value))
      return failure();
    axis = value->intValue;
  }
  if (type->kind == ValueType::Class) {
    if (axis != -1 && axis != 0) {
      emitError(ctx, call.loc())
          << "axis " << axis << " is out of range for the class indices '"
          << var->getName() << "' (only axis 0: the number of classes)";
      return failure();
    }
    return ConstScalar::integer(type->numClasses);
  }
  if (type->kind == ValueType::Tokens || type->kind == ValueType::NextTokens) {
    // Like the target's classes: the one fixed number is the vocabulary.
    if (axis != -1 && axis != 0) {
      emitError(ctx, call.loc())
          << "axis " << axis << " is out of range for the token ids '"
          << var->getName() << "' (only axis 0: the vocabulary size)";
      return failure();
    }
    return ConstScalar::integer(type->numClasses);
  }
  int64_t rank = static_cast<int64_t>(type->shape.size());
  if (axis < -rank || axis >= rank) {
    emitError(ctx, call.loc())
        << "axis " << axis << " is out of range for '" << var->getName()
        << "' of " << describeShape(*type);
    return failure();
  }
  int64_t size = type->shape[axis < 0 ? axis + rank : axis];
  if (mlir::ShapedType::isDynamic(size)) {
    emitError(ctx, call.loc())
        << "axis " << axis << " of '" << var->getName()
        << "' is the sequence length, which changes from step to step";
    return failure();
  }
  return ConstScalar::integer(size);
}
