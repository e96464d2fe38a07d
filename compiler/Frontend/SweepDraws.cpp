//===- SweepDraws.cpp - seeded per-model random draws in a sweep ----------===//
//
//   uniform(low, high)      real in [low, high)
//   loguniform(low, high)   exp of a uniform in [log low, log high)
//   randint(low, high)      integer in [low, high)
//   choice(list)            one element of the list
//
// Each draw gives one value per model from Philox4x32-10 (the runtime's
// generator), keyed by the sweep's draw_seed and addressed by (model, draw
// ordinal): model m's value depends on neither the number of models nor the
// other models, so a random search can grow without changing its first
// trials.
//
//===----------------------------------------------------------------------===//
#include "compiler/Frontend/Diagnostics.h"
#include "compiler/Frontend/SweepEval.h"

#include "mbt/common/Philox.h"

#include <cmath>

using namespace mbt;
using llvm::cast;
using mlir::failure;
using mlir::FailureOr;

/// A uniform double in [0, 1) with 53 random bits.
static double uniform53(const mbt::PhiloxCounter &block) {
  uint64_t bits =
      (static_cast<uint64_t>(block[0] >> 5) << 26) | (block[1] >> 6);
  return static_cast<double>(bits) * (1.0 / 9007199254740992.0);
}

FailureOr<ConstValue> SweepEvaluator::evaluateDraw(const CallExprAST &call) {
  llvm::StringRef callee = call.getCallee();
  if (!models) {
    if (!modelsBroken)
      emitError(ctx, call.loc())
          << "'" << callee << "' draws one value per model and is only "
          << "allowed in a sweep";
    return failure();
  }
  bool isChoice = callee == "choice";
  llvm::SmallVector<llvm::StringRef, 2> params;
  if (isChoice)
    params = {"options"};
  else
    params = {"low", "high"};
  auto args =
      bindArguments(ctx, call, params, "'" + callee.str() + "'", "argument");
  if (failed(args))
    return failure();
  for (auto [param, arg] : llvm::zip(params, *args))
    if (!arg) {
      emitError(ctx, call.loc())
          << "'" << callee << "' needs its '" << param << "' argument";
      return failure();
    }

  std::vector<ConstScalar> options;
  double low = 0, high = 0;
  if (isChoice) {
    auto list = evaluate(*(*args)[0]);
    if (failed(list))
      return failure();
    if (list->elements.empty()) {
      emitError(ctx, (*args)[0]->loc()) << "choice needs at least one option";
      return failure();
    }
    options = list->elements;
  } else {
    auto lo = evaluateNumber(*(*args)[0], "low");
    auto hi = evaluateNumber(*(*args)[1], "high");
    if (failed(lo) || failed(hi))
      return failure();
    low = lo->floatValue;
    high = hi->floatValue;
    if (!(low < high)) {
      emitError(ctx, call.loc()) << "'" << callee << "' needs low < high, got "
                                 << lo->str() << " and " << hi->str();
      return failure();
    }
    if (callee == "loguniform" && !(low > 0)) {
      emitError(ctx, call.loc())
          << "'loguniform' needs low > 0, got " << lo->str();
      return failure();
    }
    if (callee == "randint" &&
        (lo->kind != ConstScalar::Int || hi->kind != ConstScalar::Int)) {
      emitError(ctx, call.loc()) << "'randint' needs integer bounds";
      return failure();
    }
  }

  uint32_t ordinal = drawCount++;
  auto key = mbt::makePhiloxKey(drawSeed);
  ConstValue result;
  result.isList = true;
  for (int64_t m = 0; m < *models; ++m) {
    double u = uniform53(mbt::philox4x32x10(
        {static_cast<uint32_t>(m), ordinal, 0, mbt::kSweepDrawDomain}, key));
    if (isChoice) {
      size_t index =
          std::min(options.size() - 1, static_cast<size_t>(u * options.size()));
      result.elements.push_back(options[index]);
    } else if (callee == "randint") {
      double span = high - low;
      result.elements.push_back(ConstScalar::integer(
          static_cast<int64_t>(low) +
          std::min(static_cast<int64_t>(span) - 1,
                   static_cast<int64_t>(std::floor(u * span)))));
    } else if (callee == "loguniform") {
      double v = std::exp(std::log(low) + (std::log(high) - std::log(low)) * u);
      result.elements.push_back(
          ConstScalar::real(std::min(v, std::nextafter(high, low))));
    } else {
      result.elements.push_back(ConstScalar::real(low + (high - low) * u));
    }
  }
  return result;
}
