//===- SemaPrecision.cpp - the sweep's precision and loss scale -----------===//
//
// `precision = bf16 | f16 | f32`: the format of the model's products
// (mixed precision, mbt-autocast). f16 comes with a dynamic loss scale per
// model, whose settings `loss_scale = dynamic(init_scale = ...,
// growth_factor = ..., backoff_factor = ..., growth_interval = ...)` are
// torch.amp.GradScaler's, with its defaults.
//
//===----------------------------------------------------------------------===//
#include "compiler/Frontend/SemaPrecision.h"
#include "compiler/Frontend/Diagnostics.h"

#include "dialects/MBT/IR/LossScaleRules.h"

using namespace mbt;
using llvm::dyn_cast;

namespace {

/// `loss_scale = dynamic(...)` into `settings`; false after an error.
bool checkLossScale(mlir::MLIRContext &ctx, const ExprAST &value,
                    SweepEvaluator &eval,
                    mlir::mbt::LossScaleSettings &settings) {
  const auto *call = dyn_cast<CallExprAST>(&value);
  const auto *bare = dyn_cast<VariableExprAST>(&value);
  if ((!call || call->getCallee() != "dynamic") &&
      (!bare || bare->getName() != "dynamic")) {
    emitError(ctx, value.loc())
        << "loss_scale must be dynamic(init_scale = 65536, growth_factor = 2, "
           "backoff_factor = 0.5, growth_interval = 2000) (each argument "
           "optional, GradScaler's defaults shown)";
    return false;
  }
  if (!call)
    return true;
  const llvm::StringRef params[] = {"init_scale", "growth_factor",
                                    "backoff_factor", "growth_interval"};
  auto args =
      bindArguments(ctx, *call, params, "loss_scale 'dynamic'", "argument");
  if (failed(args))
    return false;
  double *reals[] = {&settings.initScale, &settings.growthFactor,
                     &settings.backoffFactor};
  for (size_t k = 0; k < 3; ++k) {
    if (!(*args)[k])
      continue;
    auto number = eval.evaluateNumber(*(*args)[k], params[k]);
    if (failed(number))
      return false;
    *reals[k] = number->floatValue;
  }
  if (const ExprAST *interval = (*args)[3]) {
    auto count = eval.evaluateInteger(*interval, params[3]);
    if (failed(count))
      return false;
    settings.growthInterval = *count;
  }
  if (std::optional<std::string> problem =
          mlir::mbt::lossScaleProblem(settings)) {
    emitError(ctx, value.loc()) << "loss_scale: " << *problem;
    return false;
  }
  return true;
}

} // namespace

bool mbt::checkPrecisionSettings(mlir::MLIRContext &ctx,
                                 const ExprAST *precision,
                                 const ExprAST *lossScale, SweepEvaluator &eval,
                                 SweepConfig &config) {
  if (precision) {
    const auto *var = dyn_cast<VariableExprAST>(precision);
    llvm::StringRef name = var ? var->getName() : "";
    if (name != "bf16" && name != "f16" && name != "f32") {
      emitError(ctx, precision->loc())
          << "precision must be bf16 or f16 (the model's matmuls and "
             "convolutions in that format, the rest in f32) or f32";
      return false;
    }
    if (name != "f32") {
      config.precision = *mlir::mbt::symbolizePrecision(name);
      config.precisionLoc = precision->loc();
    }
  }
  if (!lossScale) {
    if (config.precision == mlir::mbt::Precision::f16)
      config.lossScale = mlir::mbt::LossScaleSettings{};
    return true;
  }
  if (config.precision != mlir::mbt::Precision::f16) {
    emitError(ctx, lossScale->loc())
        << "loss_scale needs precision = f16 (bf16 and f32 have f32's "
           "exponent range: their gradients need no scaling)";
    return false;
  }
  mlir::mbt::LossScaleSettings settings;
  if (!checkLossScale(ctx, *lossScale, eval, settings))
    return false;
  config.lossScale = settings;
  return true;
}
