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

#include "dialects/MBT/IR/InitRules.h"
#include "dialects/MBT/IR/MBTShapes.h"

#include "llvm/ADT/StringExtras.h"

using namespace mbt;
using llvm::dyn_cast;

std::optional<ResolvedInit> mbt::resolveInitializer(mlir::MLIRContext &ctx,
                                                    const ParamDeclAST &decl) {
  const ExprAST *init = decl.getInit();
  llvm::StringRef name;
  const auto *call = dyn_cast<CallExprAST>(init);
  if (call)
    name = call->getCallee();
  else if (const auto *var = dyn_cast<VariableExprAST>(init))
    name = var->getName();
  auto inLanguage = llvm::make_filter_range(
      mlir::mbt::allInitRules(),
      [](const mlir::mbt::InitRule &rule) { return rule.inLanguage; });
  std::string known =
      llvm::join(llvm::map_range(inLanguage,
                                 [](const mlir::mbt::InitRule &rule) {
                                   return rule.name().str();
                                 }),
                 ", ");
  if (name.empty()) {
    emitError(ctx, init->loc()) << "expected an initializer (" << known << ")";
    return std::nullopt;
  }
  std::optional<mlir::mbt::InitKind> kind = mlir::mbt::symbolizeInitKind(name);
  if (!kind || !mlir::mbt::getInitRule(*kind).inLanguage) {
    emitError(ctx, init->loc())
        << "unknown initializer '" << name << "' (known: " << known << ")";
    return std::nullopt;
  }
  const mlir::mbt::InitRule *info = &mlir::mbt::getInitRule(*kind);
  ResolvedInit spec;
  spec.kind = *kind;
  std::string callee = ("initializer '" + name + "'").str();
  llvm::SmallVector<llvm::StringRef> params(info->params.begin(),
                                            info->params.end());
  llvm::SmallVector<const ExprAST *> bound(params.size(), nullptr);
  if (call) {
    auto args = bindArguments(ctx, *call, params, callee, "argument");
    if (failed(args))
      return std::nullopt;
    bound = *args;
  }
  SweepEvaluator eval(ctx, std::nullopt);
  bool argsOk = true;
  for (auto [param, arg] : llvm::zip(params, bound)) {
    if (!arg) {
      emitError(ctx, init->loc())
          << callee << " needs " << params.size() << " arguments ("
          << llvm::join(params, ", ") << "); '" << param << "' is missing";
      return std::nullopt;
    }
    auto value = eval.evaluateNumber(
        *arg, ("argument '" + param + "' of " + callee).str());
    if (failed(value)) {
      argsOk = false;
      continue;
    }
    spec.args.push_back(value->floatValue);
  }
  if (!argsOk)
    return std::nullopt;
  if (spec.kind == mlir::mbt::InitKind::normal && spec.args[1] < 0) {
    emitError(ctx, init->loc())
        << "the std of initializer 'normal' must be "
        << "non-negative, got " << formatNumber(spec.args[1]);
    return std::nullopt;
  }
  if (spec.kind == mlir::mbt::InitKind::uniform &&
      spec.args[0] > spec.args[1]) {
    emitError(ctx, init->loc())
        << "initializer 'uniform' needs low <= high, got low = "
        << formatNumber(spec.args[0])
        << " and high = " << formatNumber(spec.args[1]);
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
