//===- SemaCheckpoint.cpp - init = checkpoint(...) in the sweep -----------===//
//
// A warm start: every model begins from the tensors of a safetensors or .pt
// file rather than from its parameters' initializers. The files are resolved
// against the spec's folder here; their tensors are matched to the
// parameters by name when training starts (runtime/lib/InitCheckpoint.cpp).
//
//===----------------------------------------------------------------------===//
#include "compiler/Frontend/SemaData.h"

#include "compiler/Frontend/ConstEval.h"
#include "compiler/Frontend/Diagnostics.h"

using namespace mbt;

namespace {

/// The strings of a string or a list of strings; null after an error.
std::optional<std::vector<const StringExprAST *>>
stringsOf(mlir::MLIRContext &ctx, const ExprAST &value, llvm::StringRef what) {
  std::vector<const StringExprAST *> strings;
  for (const ExprAST *item : listItems(value)) {
    const auto *string = llvm::dyn_cast<StringExprAST>(item);
    if (!string) {
      emitError(ctx, item->loc()) << what;
      return std::nullopt;
    }
    strings.push_back(string);
  }
  return strings;
}

/// rename = {"spec name": "file's name", ...}: each parameter once.
mlir::LogicalResult checkRename(mlir::MLIRContext &ctx, const ExprAST &value,
                                SweepConfig &config) {
  const auto *dict = llvm::dyn_cast<DictExprAST>(&value);
  if (!dict) {
    emitError(ctx, value.loc())
        << "rename must map parameter names to the file's tensor names, "
           "such as {\"fc1.w\": \"0.weight\"}";
    return mlir::failure();
  }
  for (const DictExprAST::Entry &entry : dict->getEntries()) {
    const auto *name = llvm::dyn_cast<StringExprAST>(entry.key.get());
    const auto *tensor = llvm::dyn_cast<StringExprAST>(entry.value.get());
    if (!name || !tensor) {
      emitError(ctx, (name ? entry.value : entry.key)->loc())
          << "rename's names must be in quotes, such as "
             "{\"fc1.w\": \"0.weight\"}";
      return mlir::failure();
    }
    if (!config.initRename.emplace(name->getValue().str(), tensor->getValue())
             .second) {
      emitError(ctx, name->loc())
          << "rename names '" << name->getValue() << "' twice";
      return mlir::failure();
    }
  }
  return mlir::success();
}

} // namespace

mlir::LogicalResult mbt::checkInitCheckpoint(mlir::MLIRContext &ctx,
                                             const ExprAST &value,
                                             int64_t models,
                                             SweepConfig &config) {
  const auto *call = llvm::dyn_cast<CallExprAST>(&value);
  if (!call || call->getCallee() != "checkpoint") {
    emitError(ctx, value.loc())
        << "init must be checkpoint(\"FILE.safetensors\" or \"FILE.pt\"), or "
           "checkpoint([\"FILE\", ...]) with one file per model";
    return mlir::failure();
  }
  auto bound =
      bindArguments(ctx, *call, {"file", "transpose", "partial", "rename"},
                    "init 'checkpoint'", "argument");
  if (mlir::failed(bound))
    return mlir::failure();
  const ExprAST *files = (*bound)[0];
  if (!files) {
    emitError(ctx, call->loc()) << "checkpoint needs its file: "
                                   "checkpoint(\"base.safetensors\")";
    return mlir::failure();
  }
  auto paths = stringsOf(ctx, *files,
                         "checkpoint's file must be a path in quotes, or a "
                         "list of them (one per model)");
  if (!paths)
    return mlir::failure();
  if (paths->size() != 1 && static_cast<int64_t>(paths->size()) != models) {
    emitError(ctx, files->loc())
        << "checkpoint lists " << paths->size() << " files for " << models
        << " models: give one file for all, or one per model";
    return mlir::failure();
  }
  for (const StringExprAST *path : *paths) {
    std::optional<std::string> resolved =
        resolveSpecPath(ctx, path->loc(), path->getValue(), "the checkpoint");
    if (!resolved)
      return mlir::failure();
    config.initFiles.push_back(*resolved);
  }
  if (const ExprAST *transpose = (*bound)[1]) {
    auto names = stringsOf(ctx, *transpose,
                           "transpose must list parameter names in quotes, "
                           "such as [\"fc1.w\"]");
    if (!names)
      return mlir::failure();
    for (const StringExprAST *name : *names)
      config.initTranspose.push_back(name->getValue().str());
  }
  if (const ExprAST *partial = (*bound)[2]) {
    const auto *var = llvm::dyn_cast<VariableExprAST>(partial);
    if (!var || (var->getName() != "true" && var->getName() != "false")) {
      emitError(ctx, partial->loc()) << "partial must be true or false";
      return mlir::failure();
    }
    config.initPartial = var->getName() == "true";
  }
  if (const ExprAST *rename = (*bound)[3])
    return checkRename(ctx, *rename, config);
  return mlir::success();
}
