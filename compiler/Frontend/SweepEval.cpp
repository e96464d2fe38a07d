//===- SweepEval.cpp - constant expressions and the sweep -----------------===//
#include "compiler/Frontend/SweepEval.h"
#include "compiler/Frontend/Diagnostics.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <cstdio>

using namespace mbt;
using llvm::cast;
using llvm::dyn_cast;
using mlir::failure;
using mlir::FailureOr;
using mlir::LogicalResult;
using mlir::success;

std::string mbt::formatNumber(double number) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%g", number);
  std::string text = buffer;
  // Keep a float that happens to be integral recognizable as a float.
  if (text.find_first_of(".eni") == std::string::npos)
    text += ".0";
  return text;
}

std::string mbt::formatNumber(const ConstNumber &number) {
  return number.isInteger ? std::to_string(number.intValue)
                          : formatNumber(number.value);
}

/// "a, b, c" for diagnostics that list the choices.
template <typename Range> static std::string joinNames(const Range &names) {
  std::string text;
  for (const auto &name : names) {
    if (!text.empty())
      text += ", ";
    text += llvm::StringRef(name).str();
  }
  return text;
}

//===----------------------------------------------------------------------===//
// ConstEvaluator
//===----------------------------------------------------------------------===//

FailureOr<ConstValue> ConstEvaluator::evaluate(const ExprAST &expr) {
  switch (expr.getKind()) {
  case ExprAST::Expr_Number: {
    const auto &number = cast<NumberExprAST>(expr);
    ConstValue value;
    value.elements.push_back(number.isInteger()
                                 ? ConstNumber::integer(number.getIntValue())
                                 : ConstNumber::real(number.getValue()));
    return value;
  }
  case ExprAST::Expr_Var:
    return evaluateVariable(cast<VariableExprAST>(expr));
  case ExprAST::Expr_Unary: {
    auto operand = evaluate(*cast<UnaryExprAST>(expr).getOperand());
    if (failed(operand))
      return failure();
    for (ConstNumber &n : operand->elements) {
      if (!n.isInteger) {
        n.value = -n.value;
        continue;
      }
      if (n.intValue == std::numeric_limits<int64_t>::min()) {
        emitError(ctx, expr.loc()) << "integer overflow in '-'";
        return failure();
      }
      n = ConstNumber::integer(-n.intValue);
    }
    return operand;
  }
  case ExprAST::Expr_Binary:
    return evaluateBinary(cast<BinaryExprAST>(expr));
  case ExprAST::Expr_Call:
    return evaluateCall(cast<CallExprAST>(expr));
  case ExprAST::Expr_List: {
    ConstValue list;
    list.isList = true;
    bool ok = true;
    for (const auto &element : cast<ListExprAST>(expr).getElements()) {
      auto value = evaluate(*element);
      if (failed(value)) {
        ok = false;
        continue;
      }
      if (value->isList) {
        emitError(ctx, element->loc()) << "lists cannot be nested";
        ok = false;
        continue;
      }
      list.elements.push_back(value->elements.front());
    }
    if (!ok)
      return failure();
    return list;
  }
  case ExprAST::Expr_String:
    emitError(ctx, expr.loc()) << "expected a number, got a string";
    return failure();
  }
  llvm_unreachable("unknown expression kind");
}

FailureOr<ConstValue>
ConstEvaluator::evaluateVariable(const VariableExprAST &var) {
  auto bound = variables.find(var.getName());
  if (bound != variables.end())
    return bound->second;
  if (var.getName() == "models") {
    if (models) {
      ConstValue value;
      value.elements.push_back(ConstNumber::integer(*models));
      return value;
    }
    if (modelsBroken)
      return failure(); // the bad `models` setting has been reported
  }
  auto diag = emitError(ctx, var.loc())
              << "use of undeclared name '" << var.getName() << "'";
  if (models || modelsBroken) {
    diag << " (a sweep can only refer to 'models'";
    if (!variables.empty()) {
      std::vector<std::string> axes;
      for (const auto &entry : variables)
        axes.push_back("'" + entry.getKey().str() + "'");
      llvm::sort(axes);
      diag << " and its grid axes " << llvm::join(axes, ", ");
    }
    diag << ")";
  }
  return failure();
}

/// Applies `op` to two numbers; integers stay integers unless they overflow.
static FailureOr<ConstNumber> applyBinary(mlir::MLIRContext &ctx,
                                          const Location &loc, char op,
                                          ConstNumber a, ConstNumber b) {
  if (op == '/') {
    // True division, as in Python: 1 / 2 is 0.5.
    if (b.value == 0) {
      emitError(ctx, loc) << "division by zero";
      return failure();
    }
    if (!std::isfinite(a.value / b.value)) {
      emitError(ctx, loc) << "result of '/' is out of range";
      return failure();
    }
    return ConstNumber::real(a.value / b.value);
  }
  if (a.isInteger && b.isInteger) {
    int64_t result = 0;
    bool overflow =
        op == '+'   ? llvm::AddOverflow(a.intValue, b.intValue, result)
        : op == '-' ? llvm::SubOverflow(a.intValue, b.intValue, result)
                    : llvm::MulOverflow(a.intValue, b.intValue, result);
    if (overflow) {
      emitError(ctx, loc) << "integer overflow in '" << op << "'";
      return failure();
    }
    return ConstNumber::integer(result);
  }
  double result = op == '+'   ? a.value + b.value
                  : op == '-' ? a.value - b.value
                              : a.value * b.value;
  if (!std::isfinite(result)) {
    emitError(ctx, loc) << "result of '" << op << "' is out of range";
    return failure();
  }
  return ConstNumber::real(result);
}

FailureOr<ConstValue>
ConstEvaluator::evaluateBinary(const BinaryExprAST &binary) {
  char op = binary.getOp();
  if (op == '@') {
    emitError(ctx, binary.loc())
        << "'@' is not allowed in a constant expression";
    return failure();
  }
  auto lhs = evaluate(*binary.getLHS());
  auto rhs = evaluate(*binary.getRHS());
  if (failed(lhs) || failed(rhs))
    return failure();
  size_t lhsSize = lhs->elements.size(), rhsSize = rhs->elements.size();
  if (lhs->isList && rhs->isList && lhsSize != rhsSize) {
    emitError(ctx, binary.loc())
        << "operands of '" << op << "' are lists of different lengths ("
        << lhsSize << " and " << rhsSize << ")";
    return failure();
  }
  ConstValue result;
  result.isList = lhs->isList || rhs->isList;
  size_t size = lhs->isList ? lhsSize : rhsSize;
  for (size_t i = 0; i < size; ++i) {
    auto value =
        applyBinary(ctx, binary.loc(), op, lhs->elements[lhs->isList ? i : 0],
                    rhs->elements[rhs->isList ? i : 0]);
    if (failed(value))
      return failure();
    result.elements.push_back(*value);
  }
  return result;
}

FailureOr<ConstValue> ConstEvaluator::evaluateCall(const CallExprAST &call) {
  llvm::StringRef callee = call.getCallee();
  if (callee == "range")
    return evaluateRange(call);
  if (callee == "linspace" || callee == "logspace")
    return evaluateSpace(call);
  if (callee == "uniform" || callee == "loguniform" || callee == "randint" ||
      callee == "choice")
    return evaluateDraw(call);
  emitError(ctx, call.loc())
      << "unknown function '" << callee
      << "' in a constant expression (known: range, linspace, logspace, "
         "uniform, loguniform, randint, choice)";
  return failure();
}

/// range(stop) is 0, 1, ..., stop - 1; range(start, stop) starts at start.
FailureOr<ConstValue> ConstEvaluator::evaluateRange(const CallExprAST &call) {
  auto args = call.getArgs();
  for (const ArgumentAST &arg : args)
    if (!arg.name.empty()) {
      emitError(ctx, arg.nameLoc) << "'range' takes no keyword arguments";
      return failure();
    }
  if (args.empty() || args.size() > 2) {
    emitError(ctx, call.loc())
        << "'range' takes 1 or 2 arguments (stop, or start and stop), got "
        << args.size();
    return failure();
  }
  int64_t start = 0;
  if (args.size() == 2) {
    auto value = evaluateInteger(*args[0].value, "the start of 'range'");
    if (failed(value))
      return failure();
    start = *value;
  }
  auto stop = evaluateInteger(*args.back().value, "the stop of 'range'");
  if (failed(stop))
    return failure();
  int64_t count = 0;
  if (llvm::SubOverflow(*stop, start, count) || count > kMaxListLength) {
    emitError(ctx, call.loc()) << "'range' would have too many values (at "
                               << "most " << kMaxListLength << ")";
    return failure();
  }
  ConstValue result;
  result.isList = true;
  for (int64_t i = 0; i < count; ++i)
    result.elements.push_back(ConstNumber::integer(start + i));
  return result;
}

/// `num` evenly spaced values from `start` to `stop` inclusive, computed as
/// numpy.linspace computes them.
static std::vector<double> linspace(double start, double stop, int64_t num) {
  std::vector<double> values;
  if (num == 1)
    values.push_back(start);
  if (num < 2)
    return values;
  double div = static_cast<double>(num - 1);
  double delta = stop - start;
  double step = delta / div;
  for (int64_t i = 0; i < num; ++i) {
    double x = static_cast<double>(i);
    values.push_back(step == 0 ? x / div * delta + start : x * step + start);
  }
  values.back() = stop;
  return values;
}

/// linspace(start, stop, num) and logspace(start, stop, num); logspace
/// spaces its values geometrically between the endpoints, like
/// numpy.geomspace (not numpy.logspace, whose endpoints are exponents).
FailureOr<ConstValue> ConstEvaluator::evaluateSpace(const CallExprAST &call) {
  llvm::StringRef callee = call.getCallee();
  std::string name = ("'" + callee + "'").str();
  static const llvm::StringRef params[] = {"start", "stop", "num"};
  auto bound = bindArguments(ctx, call, params, name, "argument");
  if (failed(bound))
    return failure();
  for (auto [param, arg] : llvm::zip(params, *bound))
    if (!arg) {
      emitError(ctx, call.loc()) << name << " needs 3 arguments (start, stop, "
                                 << "num); '" << param << "' is missing";
      return failure();
    }
  auto start = evaluateNumber(*(*bound)[0], "the start of " + name);
  auto stop = evaluateNumber(*(*bound)[1], "the stop of " + name);
  auto num = evaluateInteger(*(*bound)[2], "the num of " + name);
  if (failed(start) || failed(stop) || failed(num))
    return failure();
  if (*num < 0 || *num > kMaxListLength) {
    emitError(ctx, (*bound)[2]->loc())
        << "the num of " << name << " must be between 0 and " << kMaxListLength
        << ", got " << *num;
    return failure();
  }
  std::vector<double> values;
  if (callee == "linspace") {
    values = linspace(start->value, stop->value, *num);
  } else {
    if (start->value <= 0 || stop->value <= 0) {
      emitError(ctx, call.loc())
          << "the endpoints of 'logspace' must be positive, got "
          << formatNumber(*start) << " and " << formatNumber(*stop);
      return failure();
    }
    values = linspace(std::log10(start->value), std::log10(stop->value), *num);
    for (double &v : values)
      v = std::pow(10.0, v);
    if (!values.empty()) {
      values.front() = start->value;
      values.back() = *num > 1 ? stop->value : start->value;
    }
  }
  ConstValue result;
  result.isList = true;
  for (double v : values)
    result.elements.push_back(ConstNumber::real(v));
  return result;
}

FailureOr<ConstNumber> ConstEvaluator::evaluateNumber(const ExprAST &expr,
                                                      llvm::StringRef what) {
  auto value = evaluate(expr);
  if (failed(value))
    return failure();
  if (value->isList) {
    emitError(ctx, expr.loc()) << what << " must be a number, got a list";
    return failure();
  }
  return value->elements.front();
}

FailureOr<int64_t> ConstEvaluator::evaluateInteger(const ExprAST &expr,
                                                   llvm::StringRef what) {
  auto number = evaluateNumber(expr, what);
  if (failed(number))
    return failure();
  if (!number->isInteger) {
    emitError(ctx, expr.loc())
        << what << " must be an integer, got " << formatNumber(*number);
    return failure();
  }
  return number->intValue;
}

FailureOr<std::vector<double>>
ConstEvaluator::evaluatePerModel(const ExprAST &expr, llvm::StringRef what) {
  auto value = evaluate(expr);
  if (failed(value) || !models)
    return failure();
  std::vector<double> values;
  if (!value->isList) {
    values.assign(*models, value->elements.front().value);
    return values;
  }
  if (static_cast<int64_t>(value->elements.size()) != *models) {
    emitError(ctx, expr.loc()) << what << " has " << value->elements.size()
                               << " values for " << *models << " models";
    return failure();
  }
  for (const ConstNumber &n : value->elements)
    values.push_back(n.value);
  return values;
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
