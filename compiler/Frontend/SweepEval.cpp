//===- SweepEval.cpp - constant expressions and the sweep -----------------===//
#include "compiler/Frontend/SweepEval.h"
#include "compiler/Frontend/Diagnostics.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mbt;
using llvm::cast;
using llvm::dyn_cast;
using mlir::failure;
using mlir::FailureOr;
using mlir::LogicalResult;
using mlir::success;

//===----------------------------------------------------------------------===//
// Names and calls
//===----------------------------------------------------------------------===//

FailureOr<ConstValue> SweepEvaluator::lookup(const VariableExprAST &var) {
  auto bound = variables.find(var.getName());
  if (bound != variables.end())
    return bound->second;
  if (var.getName() == "models") {
    if (models)
      return ConstValue::scalar(ConstScalar::integer(*models));
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

FailureOr<ConstValue> SweepEvaluator::call(const CallExprAST &call) {
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
FailureOr<ConstValue> SweepEvaluator::evaluateRange(const CallExprAST &call) {
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
  std::vector<ConstScalar> values;
  for (int64_t i = 0; i < count; ++i)
    values.push_back(ConstScalar::integer(start + i));
  return ConstValue::list(std::move(values));
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
FailureOr<ConstValue> SweepEvaluator::evaluateSpace(const CallExprAST &call) {
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
    values = linspace(start->floatValue, stop->floatValue, *num);
  } else {
    if (start->floatValue <= 0 || stop->floatValue <= 0) {
      emitError(ctx, call.loc())
          << "the endpoints of 'logspace' must be positive, got "
          << start->str() << " and " << stop->str();
      return failure();
    }
    values = linspace(std::log10(start->floatValue),
                      std::log10(stop->floatValue), *num);
    for (double &v : values)
      v = std::pow(10.0, v);
    if (!values.empty()) {
      values.front() = start->floatValue;
      values.back() = *num > 1 ? stop->floatValue : start->floatValue;
    }
  }
  std::vector<ConstScalar> elements;
  for (double v : values)
    elements.push_back(ConstScalar::real(v));
  return ConstValue::list(std::move(elements));
}

FailureOr<std::vector<double>>
SweepEvaluator::evaluatePerModel(const ExprAST &expr, llvm::StringRef what) {
  auto value = evaluate(expr);
  if (failed(value) || !models)
    return failure();
  for (const ConstScalar &element : value->elements)
    if (!element.isNumber()) {
      emitError(ctx, expr.loc())
          << what << " must be a number, got " << element.str();
      return failure();
    }
  std::vector<double> values;
  if (!value->isList) {
    values.assign(*models, value->elements.front().floatValue);
    return values;
  }
  if (static_cast<int64_t>(value->elements.size()) != *models) {
    emitError(ctx, expr.loc()) << what << " has " << value->elements.size()
                               << " values for " << *models << " models";
    return failure();
  }
  for (const ConstScalar &element : value->elements)
    values.push_back(element.floatValue);
  return values;
}
