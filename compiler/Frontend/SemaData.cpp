//===- SemaData.cpp - sequence data sets, and data against the input ------===//
//
// The byte tokenizer of the runtime (runtime/include/mbt/runtime/
// ByteTokenizer.h) gives every text 259 token ids: 0 pad, 1 begin, 2 end,
// 3 + byte. A tokens[V] input reading it needs V >= 259.
//
//===----------------------------------------------------------------------===//
#include "compiler/Frontend/SemaData.h"
#include "compiler/Frontend/Diagnostics.h"
#include "dialects/MBT/IR/MBTShapes.h"

#include "llvm/ADT/STLExtras.h"

using namespace mbt;

namespace {
/// The token ids the runtime's byte tokenizer produces.
constexpr int64_t kByteVocabSize = 259;

const llvm::StringRef kSequenceDataArgs[] = {"batch",    "shuffle_seed",
                                             "batching", "token_budget",
                                             "window",   "max_length"};

/// The batching strategies as the spec names them (the IR and the runtime,
/// LengthBatching.h, spell two of them with hyphens).
const std::pair<llvm::StringRef, mlir::mbt::Batching> kStrategies[] = {
    {"dynamic", mlir::mbt::Batching::dynamic},
    {"fixed", mlir::mbt::Batching::fixed},
    {"group_by_length", mlir::mbt::Batching::group_by_length},
    {"fixed_shape", mlir::mbt::Batching::fixed_shape}};

/// The input (`input`) or target declaration of an expanded body, also
/// inside a taken `if` branch.
const DataDeclAST *findData(llvm::ArrayRef<std::unique_ptr<StmtAST>> body,
                            bool input) {
  for (const auto &stmt : body) {
    if (const auto *decl = llvm::dyn_cast<DataDeclAST>(stmt.get()))
      if (decl->isInput() == input)
        return decl;
    if (const auto *branch = llvm::dyn_cast<IfStmtAST>(stmt.get()))
      if (const DataDeclAST *decl = findData(branch->getTaken(), input))
        return decl;
  }
  return nullptr;
}
const DataDeclAST *findInput(llvm::ArrayRef<std::unique_ptr<StmtAST>> body) {
  return findData(body, /*input=*/true);
}

/// A target of values (f32[K]) needs data whose targets are numbers: the
/// user's arrays or a CSV column, not a data set of classes or texts.
mlir::LogicalResult checkValueTarget(mlir::MLIRContext &ctx,
                                     const SweepConfig &config,
                                     const ModelAST &model, Location at) {
  const DataDeclAST *target = findData(model.instance->body, false);
  if (!target || !target->isValueTarget())
    return mlir::success();
  using mlir::mbt::DataSet;
  const llvm::SmallVector<int64_t, 4> &dims = target->getType().dims;
  if (config.data == DataSet::csv && dims.size() == 1 && dims.front() > 1) {
    auto diag = emitError(ctx, target->getType().loc)
                << "target '" << target->getName() << "' has " << dims.front()
                << " values per sample, but a CSV file gives one target "
                   "column; declare it f32[1], or write the targets as an "
                   "array (npz, npy, safetensors)";
    attachNote(diag, ctx, at, "the data set is chosen here");
    return mlir::failure();
  }
  if (config.data == DataSet::npz || config.data == DataSet::npy ||
      config.data == DataSet::safetensors || config.data == DataSet::csv)
    return mlir::success();
  // Without a `data =` line (the default data set) the target is the place.
  if (!config.dataLoc.file)
    at = target->getType().loc;
  auto diag = emitError(ctx, at)
              << "data set '" << stringifyDataSet(config.data)
              << "' has class labels, but target '" << target->getName()
              << "' of model '" << model.getName()
              << "' takes values to regress; use your own arrays (npz, npy, "
                 "safetensors) or a CSV column";
  if (config.dataLoc.file)
    attachNote(diag, ctx, target->loc(), "the target is declared here");
  return mlir::failure();
}
/// An image folder fills an input of [C, H, W] or [H, W] images, C = 1
/// (gray) or 3 (RGB), with mean and std of one value or one per channel.
mlir::LogicalResult checkImageInput(mlir::MLIRContext &ctx,
                                    const SweepConfig &config,
                                    const DataDeclAST &input,
                                    const Location &at) {
  const auto &dims = input.getType().dims;
  int64_t channels = dims.size() == 3 ? dims[0] : 1;
  if (dims.size() < 2 || dims.size() > 3 || (channels != 1 && channels != 3)) {
    auto diag = emitError(ctx, at)
                << "data set 'image_folder' gives images of [C, H, W] with "
                   "C = 1 (gray) or 3 (RGB), or [H, W]; input '"
                << input.getName() << "' is " << input.getType().elementType
                << mlir::mbt::formatShape(dims);
    attachNote(diag, ctx, input.loc(), "the input is declared here");
    return mlir::failure();
  }
  for (const auto &[what, values] : {std::pair{"mean", &config.source.mean},
                                     std::pair{"std", &config.source.stddev}})
    if (values->size() > 1 &&
        static_cast<int64_t>(values->size()) != channels) {
      emitError(ctx, at) << what << " has " << values->size()
                         << " values, but the images have " << channels
                         << (channels == 1 ? " channel" : " channels");
      return mlir::failure();
    }
  return mlir::success();
}
} // namespace

mlir::LogicalResult mbt::checkSequenceData(mlir::MLIRContext &ctx,
                                           const CallExprAST *call,
                                           SweepEvaluator &eval,
                                           SweepConfig &config) {
  config.batching = mlir::mbt::Batching::dynamic;
  config.batchSize = 0; // fixed steps: the budget over the longest sample
  if (!call)
    return mlir::success();
  auto args = bindArguments(
      ctx, *call, kSequenceDataArgs,
      ("data set '" + stringifyDataSet(config.data) + "'").str(), "argument");
  if (failed(args))
    return mlir::failure();
  bool ok = true;
  // A positive integer argument, at most `max`.
  auto positive = [&](const ExprAST *expr, llvm::StringRef what, int64_t max,
                      int64_t &into) {
    if (!expr)
      return;
    auto n = eval.evaluateInteger(*expr, what);
    if (failed(n)) {
      ok = false;
    } else if (*n < 1 || *n > max) {
      emitError(ctx, expr->loc()) << what << " must be an integer between 1 "
                                  << "and " << max << ", got " << *n;
      ok = false;
    } else {
      into = *n;
    }
  };
  positive((*args)[0], "batch", int64_t(1) << 24, config.batchSize);
  if (const ExprAST *seed = (*args)[1]) {
    auto n = eval.evaluateInteger(*seed, "shuffle_seed");
    if (failed(n)) {
      ok = false;
    } else if (*n < 0) {
      emitError(ctx, seed->loc())
          << "shuffle_seed must be non-negative, got " << *n;
      ok = false;
    } else {
      config.shuffleSeed = *n;
    }
  }
  if (const ExprAST *batching = (*args)[2]) {
    llvm::StringRef name;
    if (const auto *var = llvm::dyn_cast<VariableExprAST>(batching))
      name = var->getName();
    else if (const auto *text = llvm::dyn_cast<StringExprAST>(batching))
      name = text->getValue();
    const auto *strategy = llvm::find_if(
        kStrategies, [&](const auto &s) { return s.first == name; });
    if (strategy == std::end(kStrategies)) {
      emitError(ctx, batching->loc())
          << "batching must be one of dynamic, fixed, group_by_length, "
             "fixed_shape";
      ok = false;
    } else {
      config.batching = strategy->second;
    }
  }
  positive((*args)[3], "token_budget", int64_t(1) << 30, config.tokenBudget);
  positive((*args)[4], "window", int64_t(1) << 24, config.window);
  positive((*args)[5], "max_length", int64_t(1) << 24, config.maxLength);
  if (ok && config.maxLength > config.tokenBudget) {
    emitError(ctx, (*args)[5] ? (*args)[5]->loc() : call->loc())
        << "max_length " << config.maxLength << " exceeds the token budget "
        << config.tokenBudget << ": such a sample would not fit a step";
    ok = false;
  }
  return mlir::success(ok);
}

mlir::LogicalResult mbt::checkDataFitsInput(mlir::MLIRContext &ctx,
                                            const SweepConfig &config,
                                            const ModelAST &model) {
  if (!model.instance)
    return mlir::success();
  const DataDeclAST *input = findInput(model.instance->body);
  if (!input)
    return mlir::success(); // reported by the model's check
  const TypeAST &type = input->getType();
  bool tokens = type.elementType == "tokens";
  Location at = config.dataLoc.file ? config.dataLoc : config.modelLoc;
  if (mlir::mbt::isSequenceDataSet(config.data) && !tokens) {
    auto diag = emitError(ctx, at)
                << "data set '" << stringifyDataSet(config.data)
                << "' holds text: model '" << model.getName()
                << "' needs an input of token ids, such "
                << "as 'input " << input->getName() << ": tokens["
                << kByteVocabSize << "]'";
    attachNote(diag, ctx, input->loc(), "the input is declared here");
    return mlir::failure();
  }
  if (!mlir::mbt::isSequenceDataSet(config.data) && tokens) {
    auto diag = emitError(ctx, at)
                << "data set '" << stringifyDataSet(config.data)
                << (config.data == mlir::mbt::DataSet::fashion_mnist
                        ? "' holds images"
                        : "' holds float features")
                << ", but input '" << input->getName() << "' of model '"
                << model.getName()
                << "' takes token ids; use a text data set such as fortunes";
    attachNote(diag, ctx, input->loc(), "the input is declared here");
    return mlir::failure();
  }
  if (mlir::failed(checkValueTarget(ctx, config, model, at)))
    return mlir::failure();
  if (config.data == mlir::mbt::DataSet::image_folder)
    return checkImageInput(ctx, config, *input, at);
  if (tokens && !type.dims.empty() && type.dims.front() < kByteVocabSize) {
    auto diag = emitError(ctx, input->getType().loc)
                << "input '" << input->getName() << "' has a vocabulary of "
                << type.dims.front() << " token ids, but data set '"
                << stringifyDataSet(config.data)
                << "' uses the byte tokenizer's " << kByteVocabSize
                << " (0 pad, 1 begin, 2 end, 3 + byte)";
    attachNote(diag, ctx, at, "the data set is chosen here");
    return mlir::failure();
  }
  return mlir::success();
}
