//===- ScalarEval.cpp - constant expressions inside models ----------------===//
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

FailureOr<ConstScalar> ScalarEval::evaluate(const ExprAST &expr,
                                            llvm::StringRef what) {
  this->what = what.str();
  return eval(expr);
}

FailureOr<ConstScalar> sema::convertScalar(mlir::MLIRContext &ctx,
                                           const ConstScalar &value,
                                           ConstScalar::Kind kind,
                                           const Location &loc,
                                           llvm::StringRef what) {
  if (value.kind == kind)
    return value;
  if (kind == ConstScalar::Float && value.kind == ConstScalar::Int)
    return ConstScalar::real(value.floatValue);
  emitError(ctx, loc) << what << " must be "
                      << (kind == ConstScalar::Int ? "an " : "a ")
                      << kindName(kind) << ", got " << value.str();
  return failure();
}

FailureOr<ConstScalar> ScalarEval::evaluateAs(const ExprAST &expr,
                                              ConstScalar::Kind kind,
                                              llvm::StringRef what) {
  auto value = evaluate(expr, what);
  if (failed(value))
    return failure();
  return convertScalar(ctx, *value, kind, expr.loc(), what);
}

FailureOr<ConstScalar> ScalarEval::eval(const ExprAST &expr) {
  switch (expr.getKind()) {
  case ExprAST::Expr_Number: {
    const auto &number = cast<NumberExprAST>(expr);
    return number.isInteger() ? ConstScalar::integer(number.getIntValue())
                              : ConstScalar::real(number.getValue());
  }
  case ExprAST::Expr_Var:
    return evalVariable(cast<VariableExprAST>(expr));
  case ExprAST::Expr_Unary:
    return evalUnary(cast<UnaryExprAST>(expr));
  case ExprAST::Expr_Binary:
    return evalBinary(cast<BinaryExprAST>(expr));
  case ExprAST::Expr_Call: {
    const auto &call = cast<CallExprAST>(expr);
    if (call.getCallee() == "dim")
      return evalDim(call);
    emitError(ctx, call.loc())
        << what << " must be a constant expression (numbers, constant "
        << "arguments, dim(...)), got a call to '" << call.getCallee() << "'";
    return failure();
  }
  case ExprAST::Expr_List:
    emitError(ctx, expr.loc()) << what << " must be a number, got a list";
    return failure();
  case ExprAST::Expr_String:
    emitError(ctx, expr.loc()) << what << " must be a number, got a string";
    return failure();
  }
  llvm_unreachable("unknown expression kind");
}

FailureOr<ConstScalar> ScalarEval::evalVariable(const VariableExprAST &var) {
  llvm::StringRef name = var.getName();
  if (name == "true" || name == "false")
    return ConstScalar::boolean(name == "true");
  const ValueType *type = lookup(name);
  if (!type) {
    emitError(ctx, var.loc()) << "use of undeclared name '" << name << "'";
    return failure();
  }
  auto diag = emitError(ctx, var.loc())
              << what << " must be a constant, but '" << name << "' ";
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

FailureOr<ConstScalar> ScalarEval::evalUnary(const UnaryExprAST &unary) {
  auto operand = eval(*unary.getOperand());
  if (failed(operand))
    return failure();
  if (unary.getOp() == '!') {
    if (operand->kind != ConstScalar::Bool) {
      emitError(ctx, unary.loc())
          << "the operand of 'not' must be a bool, got " << operand->str();
      return failure();
    }
    return ConstScalar::boolean(!operand->boolValue);
  }
  switch (operand->kind) {
  case ConstScalar::Bool:
    emitError(ctx, unary.loc())
        << "the operand of '-' must be a number, got " << operand->str();
    return failure();
  case ConstScalar::Float:
    return ConstScalar::real(-operand->floatValue);
  case ConstScalar::Int:
    if (operand->intValue == std::numeric_limits<int64_t>::min()) {
      emitError(ctx, unary.loc()) << "integer overflow in '-'";
      return failure();
    }
    return ConstScalar::integer(-operand->intValue);
  }
  llvm_unreachable("unknown scalar kind");
}

FailureOr<ConstScalar> ScalarEval::evalBinary(const BinaryExprAST &binary) {
  char op = binary.getOp();
  llvm::StringRef spelling = spellOperator(op);
  const Location &loc = binary.loc();
  if (op == '@') {
    emitError(ctx, loc) << "'@' is not allowed in a constant expression";
    return failure();
  }
  auto lhs = eval(*binary.getLHS());
  auto rhs = eval(*binary.getRHS());
  if (failed(lhs) || failed(rhs))
    return failure();
  bool lhsBool = lhs->kind == ConstScalar::Bool,
       rhsBool = rhs->kind == ConstScalar::Bool;
  if (op == BinaryOp::And || op == BinaryOp::Or) {
    if (!lhsBool || !rhsBool) {
      emitError(ctx, loc) << "the operands of '" << spelling
                          << "' must be bools, got " << lhs->str() << " and "
                          << rhs->str();
      return failure();
    }
    return ConstScalar::boolean(op == BinaryOp::And
                                    ? lhs->boolValue && rhs->boolValue
                                    : lhs->boolValue || rhs->boolValue);
  }
  if ((op == BinaryOp::Eq || op == BinaryOp::Ne) && lhsBool && rhsBool)
    return ConstScalar::boolean((lhs->boolValue == rhs->boolValue) ==
                                (op == BinaryOp::Eq));
  if (lhsBool || rhsBool) {
    emitError(ctx, loc) << "the operands of '" << spelling
                        << "' must be numbers, got " << lhs->str() << " and "
                        << rhs->str();
    return failure();
  }
  bool ints = lhs->kind == ConstScalar::Int && rhs->kind == ConstScalar::Int;
  if (op != '+' && op != '-' && op != '*' && op != '/') {
    // A comparison: exact on integers.
    auto compare = [&](auto a, auto b) {
      switch (op) {
      case BinaryOp::Lt:
        return a < b;
      case BinaryOp::Gt:
        return a > b;
      case BinaryOp::Le:
        return a <= b;
      case BinaryOp::Ge:
        return a >= b;
      case BinaryOp::Eq:
        return a == b;
      default:
        return a != b;
      }
    };
    return ConstScalar::boolean(
        ints ? compare(lhs->intValue, rhs->intValue)
             : compare(lhs->floatValue, rhs->floatValue));
  }
  if (op == '/') {
    // True division, as in Python: 1 / 2 is 0.5.
    if (rhs->floatValue == 0) {
      emitError(ctx, loc) << "division by zero";
      return failure();
    }
    double quotient = lhs->floatValue / rhs->floatValue;
    if (!std::isfinite(quotient)) {
      emitError(ctx, loc) << "result of '/' is out of range";
      return failure();
    }
    return ConstScalar::real(quotient);
  }
  if (ints) {
    int64_t result = 0;
    bool overflow =
        op == '+'   ? llvm::AddOverflow(lhs->intValue, rhs->intValue, result)
        : op == '-' ? llvm::SubOverflow(lhs->intValue, rhs->intValue, result)
                    : llvm::MulOverflow(lhs->intValue, rhs->intValue, result);
    if (overflow) {
      emitError(ctx, loc) << "integer overflow in '" << spelling << "'";
      return failure();
    }
    return ConstScalar::integer(result);
  }
  double a = lhs->floatValue, b = rhs->floatValue;
  double result = op == '+' ? a + b : op == '-' ? a - b : a * b;
  if (!std::isfinite(result)) {
    emitError(ctx, loc) << "result of '" << spelling << "' is out of range";
    return failure();
  }
  return ConstScalar::real(result);
}

/// dim(t) is the last per-sample size of t; dim(t, axis) the size along a
/// per-sample axis (negative: from the end). For the target it is the
/// number of classes.
FailureOr<ConstScalar> ScalarEval::evalDim(const CallExprAST &call) {
  static const llvm::StringRef params[] = {"tensor", "axis"};
  auto bound = bindArguments(ctx, call, params, "'dim'", "argument");
  if (failed(bound))
    return failure();
  const ExprAST *tensor = (*bound)[0];
  const auto *var = llvm::dyn_cast_or_null<VariableExprAST>(tensor);
  const ValueType *type = var ? lookup(var->getName()) : nullptr;
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
    std::string outer = std::move(what);
    auto value = evaluateAs(*axisExpr, ConstScalar::Int, "the axis of 'dim'");
    what = std::move(outer);
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
