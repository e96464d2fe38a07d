//===- SemaInit.cpp - checks of parameter initializers --------------------===//
//
// `param NAME: f32[dims] = INIT` where INIT is zeros, ones, normal(mean, std),
// uniform(low, high), xavier_uniform or kaiming_uniform; arguments are
// constant expressions given by position or keyword.
//
//===----------------------------------------------------------------------===//
#include "compiler/Frontend/Diagnostics.h"
#include "compiler/Frontend/Sema.h"
#include "compiler/Frontend/SweepEval.h"

#include "dialects/MBT/IR/MBTShapes.h"

#include "llvm/ADT/StringExtras.h"

using namespace mbt;
using llvm::dyn_cast;

namespace {
/// The parameter initializers, with their arguments in `mbt.init` order.
struct InitializerInfo {
  llvm::StringLiteral name;
  llvm::SmallVector<llvm::StringRef, 2> params;
  bool needsFans; // computes fan-in/fan-out, so needs rank >= 2
};
const InitializerInfo kInitializers[] = {{"zeros", {}, false},
                                         {"ones", {}, false},
                                         {"normal", {"mean", "std"}, false},
                                         {"uniform", {"low", "high"}, false},
                                         {"xavier_uniform", {}, true},
                                         {"kaiming_uniform", {}, true}};
} // namespace

std::optional<InitSpec> mbt::resolveInitializer(mlir::MLIRContext &ctx,
                                                const ParamDeclAST &decl) {
  const ExprAST *init = decl.getInit();
  llvm::StringRef name;
  const auto *call = dyn_cast<CallExprAST>(init);
  if (call)
    name = call->getCallee();
  else if (const auto *var = dyn_cast<VariableExprAST>(init))
    name = var->getName();
  std::string known = llvm::join(
      llvm::map_range(kInitializers,
                      [](const InitializerInfo &i) { return i.name.str(); }),
      ", ");
  if (name.empty()) {
    emitError(ctx, init->loc()) << "expected an initializer (" << known << ")";
    return std::nullopt;
  }
  const InitializerInfo *info = llvm::find_if(
      kInitializers, [&](const InitializerInfo &i) { return i.name == name; });
  if (info == std::end(kInitializers)) {
    emitError(ctx, init->loc())
        << "unknown initializer '" << name << "' (known: " << known << ")";
    return std::nullopt;
  }
  InitSpec spec;
  spec.kind = name.str();
  std::string callee = ("initializer '" + name + "'").str();
  llvm::SmallVector<const ExprAST *> bound(info->params.size(), nullptr);
  if (call) {
    auto args = bindArguments(ctx, *call, info->params, callee, "argument");
    if (failed(args))
      return std::nullopt;
    bound = *args;
  }
  ConstEvaluator eval(ctx, std::nullopt);
  bool argsOk = true;
  for (auto [param, arg] : llvm::zip(info->params, bound)) {
    if (!arg) {
      emitError(ctx, init->loc())
          << callee << " needs " << info->params.size() << " arguments ("
          << llvm::join(info->params, ", ") << "); '" << param
          << "' is missing";
      return std::nullopt;
    }
    auto value = eval.evaluateNumber(
        *arg, ("argument '" + param + "' of " + callee).str());
    if (failed(value)) {
      argsOk = false;
      continue;
    }
    spec.args.emplace_back(param.str(), value->value);
  }
  if (!argsOk)
    return std::nullopt;
  if (spec.kind == "normal" && spec.args[1].second < 0) {
    emitError(ctx, init->loc())
        << "the std of initializer 'normal' must be "
        << "non-negative, got " << formatNumber(spec.args[1].second);
    return std::nullopt;
  }
  if (spec.kind == "uniform" && spec.args[0].second > spec.args[1].second) {
    emitError(ctx, init->loc())
        << "initializer 'uniform' needs low <= high, got low = "
        << formatNumber(spec.args[0].second)
        << " and high = " << formatNumber(spec.args[1].second);
    return std::nullopt;
  }
  if (info->needsFans && decl.getType().dims.size() < 2) {
    emitError(ctx, init->loc())
        << callee << " needs a parameter of rank >= 2 (to "
        << "compute fan-in and fan-out), got "
        << mlir::mbt::formatShape(decl.getType().dims);
    return std::nullopt;
  }
  return spec;
}
