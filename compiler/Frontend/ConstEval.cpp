//===- ConstEval.cpp - the evaluator of constant expressions --------------===//
#include "compiler/Frontend/ConstEval.h"
#include "compiler/Frontend/Diagnostics.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <cstdio>
#include <limits>

using namespace mbt;
using llvm::cast;
using mlir::failure;
using mlir::FailureOr;

std::string mbt::formatNumber(double number) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%g", number);
  std::string text = buffer;
  if (text.find_first_of(".eni") == std::string::npos)
    text += ".0";
  return text;
}

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

FailureOr<ConstValue> ConstEvaluator::evaluate(const ExprAST &expr,
                                               llvm::StringRef subject) {
  // Scopes evaluate the arguments of calls with subjects of their own.
  std::string outer = std::exchange(what, subject.str());
  auto value = eval(expr);
  what = std::move(outer);
  return value;
}

FailureOr<ConstScalar> ConstEvaluator::evaluateScalar(const ExprAST &expr,
                                                      llvm::StringRef what) {
  auto value = evaluate(expr, what);
  if (failed(value))
    return failure();
  if (value->isList) {
    emitError(ctx, expr.loc()) << what << " must be a number, got a list";
    return failure();
  }
  return value->elements.front();
}

FailureOr<ConstScalar> ConstEvaluator::evaluateAs(const ExprAST &expr,
                                                  ConstScalar::Kind kind,
                                                  llvm::StringRef what) {
  auto value = evaluateScalar(expr, what);
  if (failed(value))
    return failure();
  return convertScalar(ctx, *value, kind, expr.loc(), what);
}

FailureOr<ConstScalar> ConstEvaluator::evaluateNumber(const ExprAST &expr,
                                                      llvm::StringRef what) {
  auto value = evaluateScalar(expr, what);
  if (failed(value))
    return failure();
  if (!value->isNumber()) {
    emitError(ctx, expr.loc())
        << what << " must be a number, got " << value->str();
    return failure();
  }
  return value;
}

FailureOr<int64_t> ConstEvaluator::evaluateInteger(const ExprAST &expr,
                                                   llvm::StringRef what) {
  auto number = evaluateNumber(expr, what);
  if (failed(number))
    return failure();
  if (number->kind != ConstScalar::Int) {
    emitError(ctx, expr.loc())
        << what << " must be an integer, got " << number->str();
    return failure();
  }
  return number->intValue;
}

FailureOr<ConstScalar> mbt::convertScalar(mlir::MLIRContext &ctx,
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

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

std::string ConstEvaluator::expectedNumber() const {
  return what.empty() ? "expected a number" : what + " must be a number";
}

FailureOr<ConstValue> ConstEvaluator::eval(const ExprAST &expr) {
  switch (expr.getKind()) {
  case ExprAST::Expr_Number: {
    const auto &number = cast<NumberExprAST>(expr);
    return ConstValue::scalar(number.isInteger()
                                  ? ConstScalar::integer(number.getIntValue())
                                  : ConstScalar::real(number.getValue()));
  }
  case ExprAST::Expr_Var: {
    const auto &var = cast<VariableExprAST>(expr);
    if (var.getName() == "true" || var.getName() == "false")
      return ConstValue::scalar(ConstScalar::boolean(var.getName() == "true"));
    return lookup(var);
  }
  case ExprAST::Expr_Unary:
    return evalUnary(cast<UnaryExprAST>(expr));
  case ExprAST::Expr_Binary:
    return evalBinary(cast<BinaryExprAST>(expr));
  case ExprAST::Expr_Call:
    return call(cast<CallExprAST>(expr));
  case ExprAST::Expr_List:
    return evalList(cast<ListExprAST>(expr));
  case ExprAST::Expr_String:
    emitError(ctx, expr.loc()) << expectedNumber() << ", got a string";
    return failure();
  case ExprAST::Expr_Dict:
    emitError(ctx, expr.loc()) << expectedNumber() << ", got a dict";
    return failure();
  }
  llvm_unreachable("unknown expression kind");
}

FailureOr<ConstValue> ConstEvaluator::evalList(const ListExprAST &list) {
  if (!allowsLists()) {
    emitError(ctx, list.loc()) << expectedNumber() << ", got a list";
    return failure();
  }
  std::vector<ConstScalar> elements;
  bool ok = true;
  for (const auto &element : list.getElements()) {
    auto value = eval(*element);
    if (failed(value)) {
      ok = false;
      continue;
    }
    if (value->isList) {
      emitError(ctx, element->loc()) << "lists cannot be nested";
      ok = false;
      continue;
    }
    elements.push_back(value->elements.front());
  }
  if (!ok)
    return failure();
  return ConstValue::list(std::move(elements));
}

FailureOr<ConstValue> ConstEvaluator::evalUnary(const UnaryExprAST &unary) {
  auto operand = eval(*unary.getOperand());
  if (failed(operand))
    return failure();
  for (ConstScalar &element : operand->elements) {
    auto value = applyUnary(unary, element);
    if (failed(value))
      return failure();
    element = *value;
  }
  return operand;
}

FailureOr<ConstValue> ConstEvaluator::evalBinary(const BinaryExprAST &binary) {
  if (binary.getOp() == '@') {
    emitError(ctx, binary.loc())
        << "'@' is not allowed in a constant expression";
    return failure();
  }
  auto lhs = eval(*binary.getLHS());
  auto rhs = eval(*binary.getRHS());
  if (failed(lhs) || failed(rhs))
    return failure();
  size_t lhsSize = lhs->elements.size(), rhsSize = rhs->elements.size();
  if (lhs->isList && rhs->isList && lhsSize != rhsSize) {
    emitError(ctx, binary.loc())
        << "operands of '" << spellOperator(binary.getOp())
        << "' are lists of different lengths (" << lhsSize << " and " << rhsSize
        << ")";
    return failure();
  }
  ConstValue result;
  result.isList = lhs->isList || rhs->isList;
  size_t size = lhs->isList ? lhsSize : rhsSize;
  for (size_t i = 0; i < size; ++i) {
    auto value = applyBinary(binary, lhs->elements[lhs->isList ? i : 0],
                             rhs->elements[rhs->isList ? i : 0]);
    if (failed(value))
      return failure();
    result.elements.push_back(*value);
  }
  return result;
}

//===----------------------------------------------------------------------===//
// Operators on scalars
//===----------------------------------------------------------------------===//

FailureOr<ConstScalar> ConstEvaluator::applyUnary(const UnaryExprAST &unary,
                                                  const ConstScalar &operand) {
  if (unary.getOp() == '!') {
    if (operand.kind != ConstScalar::Bool) {
      emitError(ctx, unary.loc())
          << "the operand of 'not' must be a bool, got " << operand.str();
      return failure();
    }
    return ConstScalar::boolean(!operand.boolValue);
  }
  switch (operand.kind) {
  case ConstScalar::Bool:
    emitError(ctx, unary.loc())
        << "the operand of '-' must be a number, got " << operand.str();
    return failure();
  case ConstScalar::Float:
    return ConstScalar::real(-operand.floatValue);
  case ConstScalar::Int:
    if (operand.intValue == std::numeric_limits<int64_t>::min()) {
      emitError(ctx, unary.loc()) << "integer overflow in '-'";
      return failure();
    }
    return ConstScalar::integer(-operand.intValue);
  }
  llvm_unreachable("unknown scalar kind");
}

/// `a OP b` for a comparison OP.
template <typename T> static bool compare(char op, T a, T b) {
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
}

FailureOr<ConstScalar> ConstEvaluator::applyBinary(const BinaryExprAST &binary,
                                                   const ConstScalar &lhs,
                                                   const ConstScalar &rhs) {
  char op = binary.getOp();
  llvm::StringRef spelling = spellOperator(op);
  const Location &loc = binary.loc();
  bool lhsBool = lhs.kind == ConstScalar::Bool,
       rhsBool = rhs.kind == ConstScalar::Bool;
  if (op == BinaryOp::And || op == BinaryOp::Or) {
    if (!lhsBool || !rhsBool) {
      emitError(ctx, loc) << "the operands of '" << spelling
                          << "' must be bools, got " << lhs.str() << " and "
                          << rhs.str();
      return failure();
    }
    return ConstScalar::boolean(op == BinaryOp::And
                                    ? lhs.boolValue && rhs.boolValue
                                    : lhs.boolValue || rhs.boolValue);
  }
  if ((op == BinaryOp::Eq || op == BinaryOp::Ne) && lhsBool && rhsBool)
    return ConstScalar::boolean((lhs.boolValue == rhs.boolValue) ==
                                (op == BinaryOp::Eq));
  if (lhsBool || rhsBool) {
    emitError(ctx, loc) << "the operands of '" << spelling
                        << "' must be numbers, got " << lhs.str() << " and "
                        << rhs.str();
    return failure();
  }
  bool ints = lhs.kind == ConstScalar::Int && rhs.kind == ConstScalar::Int;
  if (op != '+' && op != '-' && op != '*' && op != '/')
    return ConstScalar::boolean(
        ints ? compare(op, lhs.intValue, rhs.intValue)
             : compare(op, lhs.floatValue, rhs.floatValue));
  if (op == '/') {
    // True division, as in Python: 1 / 2 is 0.5.
    if (rhs.floatValue == 0) {
      emitError(ctx, loc) << "division by zero";
      return failure();
    }
    double quotient = lhs.floatValue / rhs.floatValue;
    if (!std::isfinite(quotient)) {
      emitError(ctx, loc) << "result of '/' is out of range";
      return failure();
    }
    return ConstScalar::real(quotient);
  }
  if (ints) {
    int64_t result = 0;
    bool overflow =
        op == '+'   ? llvm::AddOverflow(lhs.intValue, rhs.intValue, result)
        : op == '-' ? llvm::SubOverflow(lhs.intValue, rhs.intValue, result)
                    : llvm::MulOverflow(lhs.intValue, rhs.intValue, result);
    if (overflow) {
      emitError(ctx, loc) << "integer overflow in '" << spelling << "'";
      return failure();
    }
    return ConstScalar::integer(result);
  }
  double a = lhs.floatValue, b = rhs.floatValue;
  double result = op == '+' ? a + b : op == '-' ? a - b : a * b;
  if (!std::isfinite(result)) {
    emitError(ctx, loc) << "result of '" << spelling << "' is out of range";
    return failure();
  }
  return ConstScalar::real(result);
}

//===----------------------------------------------------------------------===//
// Arguments of calls
//===----------------------------------------------------------------------===//

/// "a, b, c" for diagnostics that list the choices.
static std::string joinNames(llvm::ArrayRef<llvm::StringRef> names) {
  std::string text;
  for (llvm::StringRef name : names) {
    if (!text.empty())
      text += ", ";
    text += name.str();
  }
  return text;
}

FailureOr<llvm::SmallVector<const ExprAST *>>
mbt::bindArguments(mlir::MLIRContext &ctx, const CallExprAST &call,
                   llvm::ArrayRef<llvm::StringRef> params,
                   llvm::StringRef callee, llvm::StringRef noun) {
  llvm::SmallVector<const ExprAST *> bound(params.size(), nullptr);
  size_t positional = 0;
  bool ok = true;
  for (const ArgumentAST &arg : call.getArgs()) {
    if (params.empty()) {
      emitError(ctx, arg.name.empty() ? arg.value->loc() : arg.nameLoc)
          << callee << " takes no arguments";
      return failure();
    }
    if (arg.name.empty()) {
      if (positional >= params.size()) {
        emitError(ctx, arg.value->loc())
            << callee << " takes at most " << params.size() << " " << noun
            << (params.size() == 1 ? "" : "s") << " (" << joinNames(params)
            << "), got " << call.getArgs().size();
        return failure();
      }
      bound[positional++] = arg.value.get();
      continue;
    }
    auto it = llvm::find(params, arg.name);
    if (it == params.end()) {
      emitError(ctx, arg.nameLoc)
          << "unknown " << noun << " '" << arg.name << "' for " << callee
          << " (known: " << joinNames(params) << ")";
      ok = false;
      continue;
    }
    const ExprAST *&slot = bound[it - params.begin()];
    if (slot) {
      emitError(ctx, arg.nameLoc)
          << noun << " '" << arg.name << "' is given twice";
      ok = false;
      continue;
    }
    slot = arg.value.get();
  }
  if (!ok)
    return failure();
  return bound;
}
