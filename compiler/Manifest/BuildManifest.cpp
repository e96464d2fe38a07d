//===- BuildManifest.cpp - the artifact's manifest from the module --------===//
#include "compiler/Manifest/Manifest.h"

#include "dialects/MBT/IR/InitRules.h"
#include "dialects/MBT/IR/MBTOps.h"
#include "dialects/MBT/IR/ScheduleRules.h"

#include "mbt/common/Abi.h"

#include "llvm/Support/JSON.h"

using namespace mlir;
namespace json = llvm::json;

/// {"kind": ..., and each argument by its name}; zeros where none is given.
static json::Value initToJson(mlir::mbt::InitAttr init) {
  json::Object object;
  if (!init) {
    object["kind"] = "zeros";
    return object;
  }
  const mlir::mbt::InitRule &rule = mlir::mbt::getInitRule(init.getKind());
  object["kind"] = rule.name().str();
  for (auto [param, value] :
       llvm::zip_equal(rule.params, init.getArgs().asArrayRef()))
    object[param] = value;
  return object;
}

namespace mbt {
FailureOr<std::string> buildManifest(ModuleOp module, StringRef device) {
  auto sweeps = module.getOps<mlir::mbt::SweepOp>();
  auto layout = module->getAttrOfType<ArrayAttr>(
      mlir::mbt::MBTDialect::LayoutAttrHelper::getNameStr());
  auto outputs = module->getAttrOfType<ArrayAttr>(
      mlir::mbt::MBTDialect::OutputsAttrHelper::getNameStr());
  auto train = module.lookupSymbol<func::FuncOp>("mbt_train_step");
  if (sweeps.empty() || !layout || !outputs || !train)
    return module.emitError("the module is not at the fused stage (no "
                            "mbt.sweep, mbt.layout or @mbt_train_step)");
  mlir::mbt::SweepOp sweep = *sweeps.begin();
  auto rule = module.lookupSymbol<mlir::mbt::OptimizerOp>(sweep.getOptimizerAttr());
  if (!rule)
    return sweep.emitError("the sweep's optimizer is not in the module");

  // The parameters' layout in [M, P], and the buffers' in [M, Q].
  auto layoutToJson = [](ArrayAttr layout, int64_t &count) {
    json::Array entries;
    for (Attribute a : layout) {
      auto entry = cast<DictionaryAttr>(a);
      json::Array shape;
      for (int64_t d : cast<DenseI64ArrayAttr>(entry.get("shape")).asArrayRef())
        shape.push_back(d);
      int64_t size = cast<IntegerAttr>(entry.get("size")).getInt();
      entries.push_back(json::Object{
          {"name", cast<StringAttr>(entry.get("name")).getValue().str()},
          {"shape", std::move(shape)},
          {"offset", cast<IntegerAttr>(entry.get("offset")).getInt()},
          {"size", size},
          {"init", initToJson(entry.getAs<mlir::mbt::InitAttr>("init"))}});
      if (auto decay = entry.getAs<BoolAttr>("decay"))
        entries.back().getAsObject()->try_emplace("decay", decay.getValue());
      count += size;
    }
    return entries;
  };
  int64_t paramCount = 0, bufferCount = 0;
  json::Array params = layoutToJson(layout, paramCount);
  json::Array buffers;
  if (auto bufferLayout = module->getAttrOfType<ArrayAttr>(
          mlir::mbt::MBTDialect::BufferLayoutAttrHelper::getNameStr()))
    buffers = layoutToJson(bufferLayout, bufferCount);

  json::Array slots, hyperNames, hyperValues, seeds, outputNames;
  for (Attribute s : rule.getSlots())
    slots.push_back(cast<StringAttr>(s).getValue().str());
  for (Attribute h : rule.getHyper())
    hyperNames.push_back(cast<StringAttr>(h).getValue().str());
  for (int64_t m = 0; m < sweep.getModels(); ++m) {
    json::Array row;
    for (Attribute h : rule.getHyper())
      row.push_back(sweep.getHyperValues(cast<StringAttr>(h).getValue())[m]);
    hyperValues.push_back(std::move(row));
  }
  for (int64_t s : sweep.getSeeds())
    seeds.push_back(s);
  // Each model's gradient-norm bound (null without clipping): the
  // artifact applies it; the runtime reports it.
  json::Value clipNorm = nullptr;
  if (auto clip = sweep.getClipNorm()) {
    json::Array values;
    for (double v : *clip)
      values.push_back(v);
    clipNorm = std::move(values);
  }
  // The learning-rate schedule (null without one): name, parameter names
  // and one row of values per model. The artifact applies it.
  json::Value schedule = nullptr;
  if (auto kind = sweep.getSchedule()) {
    const mlir::mbt::ScheduleRule &scheduleRule =
        mlir::mbt::getScheduleRule(*kind);
    json::Array names, rows;
    for (const mlir::mbt::ScheduleParam &param : scheduleRule.params)
      names.push_back(param.name.str());
    // (A local, not `*sweep.getScheduleParams()` in the loop header: the
    // optional is a temporary that dies before the loop runs.)
    ArrayAttr table = sweep.getScheduleParamsAttr();
    for (int64_t m = 0; m < sweep.getModels(); ++m) {
      json::Array row;
      for (Attribute values : table)
        row.push_back(cast<DenseF64ArrayAttr>(values)[m]);
      rows.push_back(std::move(row));
    }
    schedule = json::Object{{"name", scheduleRule.name().str()},
                            {"params", std::move(names)},
                            {"values", std::move(rows)}};
  }
  json::Array argNames, argRows;
  if (auto names = sweep.getModelArgNames())
    for (Attribute n : *names)
      argNames.push_back(cast<StringAttr>(n).getValue().str());
  for (int64_t m = 0; m < sweep.getModels(); ++m) {
    json::Array row;
    if (auto args = sweep.getModelArgs())
      for (Attribute values : *args)
        row.push_back(cast<DenseF64ArrayAttr>(values)[m]);
    argRows.push_back(std::move(row));
  }
  for (Attribute o : outputs)
    outputNames.push_back(cast<StringAttr>(o).getValue().str());

  // x [M, B, F]: the train step's sixth argument (params, buffers, state,
  // hyper, step, x, ...).
  // A tokens input is i32 [M, B, T]: T changes from step to step, so it
  // has no features (0) and a shape of [null]; its vocabulary is recorded.
  auto xType = cast<ShapedType>(train.getArgumentTypes()[5]);
  bool tokens = xType.getElementType().isInteger(32);
  int64_t features = tokens ? 0 : xType.getDimSize(2);
  json::Array inputShape;
  if (auto shape = module->getAttrOfType<DenseI64ArrayAttr>(
          mlir::mbt::MBTDialect::InputShapeAttrHelper::getNameStr()))
    for (int64_t d : shape.asArrayRef())
      inputShape.push_back(ShapedType::isDynamic(d) ? json::Value(nullptr)
                                                    : json::Value(d));
  else
    inputShape.push_back(features);
  json::Object input{{"name", ""}, {"shape", std::move(inputShape)},
                     {"features", features}};
  if (tokens) {
    auto vocab = module->getAttrOfType<IntegerAttr>(
        mlir::mbt::MBTDialect::VocabAttrHelper::getNameStr());
    input["kind"] = "tokens";
    input["vocab"] = vocab ? vocab.getInt() : 0;
  }
  auto inputName = module->getAttrOfType<StringAttr>(
      mlir::mbt::MBTDialect::InputAttrHelper::getNameStr());
  input["name"] = inputName ? inputName.getValue().str() : "x";
  auto targetName = module->getAttrOfType<StringAttr>(
      mlir::mbt::MBTDialect::TargetAttrHelper::getNameStr());
  auto classes = module->getAttrOfType<IntegerAttr>(
      mlir::mbt::MBTDialect::ClassesAttrHelper::getNameStr());
  json::Object target{
      {"name", targetName ? targetName.getValue().str() : "y"},
      {"classes", classes ? classes.getInt() : 0}};
  // y [M, B] holds class indices; y [M, B, T] the input's next tokens (a
  // language model's targets, which the runtime makes from each sample).
  if (cast<ShapedType>(train.getArgumentTypes()[6]).getRank() == 3)
    target["kind"] = "next_tokens";
  auto modelName = module->getAttrOfType<StringAttr>(
      mlir::mbt::MBTDialect::ModelAttrHelper::getNameStr());

  json::Object data{{"name", stringifyDataSet(sweep.getData()).str()},
                    {"batch", sweep.getBatchSize()},
                    {"shuffle_seed", sweep.getShuffleSeed()},
                    {"routing", stringifyRouting(sweep.getRouting()).str()}};
  // A sequence data set's grouping of samples into steps (docs/data.md).
  if (auto batching = sweep.getBatching())
    data["batching"] =
        json::Object{{"strategy", stringifyBatching(*batching).str()},
                     {"token_budget", sweep.getTokenBudget()},
                     {"window", sweep.getWindow()},
                     {"max_length", sweep.getMaxLength()}};
  if (sweep.getValidation().convertToDouble() > 0)
    data["validation"] = sweep.getValidation().convertToDouble();
  if (sweep.getCrop() > 0)
    data["crop"] = sweep.getCrop();
  if (sweep.getFlip())
    data["flip"] = true;
  if (sweep.getRouting() == mlir::mbt::Routing::kfold) {
    data["folds"] = sweep.getFolds();
    json::Array folds;
    // (Not `*sweep.getFold()` in the loop header: the optional is a
    // temporary that dies before the loop runs.)
    ArrayRef<int64_t> fold = sweep.getFold().value_or(ArrayRef<int64_t>());
    for (int64_t f : fold)
      folds.push_back(f);
    data["fold"] = std::move(folds);
  }

  json::Object optimizer{{"rule", rule.getSymName().str()},
                         {"slots", std::move(slots)},
                         {"hyper", std::move(hyperNames)}};
  // The flags (bool arguments) that chose the rule's code.
  if (auto flags = rule.getFlags()) {
    json::Object values;
    for (NamedAttribute flag : *flags)
      values[flag.getName().getValue()] =
          cast<BoolAttr>(flag.getValue()).getValue();
    optimizer["flags"] = std::move(values);
  }

  json::Object manifest{
      {"abi_version", ::mbt::kAbiVersion},
      // The element type of params, state, x and out (docs/abi.md).
      {"dtype", rule.getElementType().isF64() ? "f64" : "f32"},
      // Where the buffers live: host memory, or the GPU's (docs/abi.md).
      {"device", device.str()},
      {"model", modelName ? modelName.getValue().str() : "model"},
      {"models", sweep.getModels()},
      {"params", std::move(params)},
      {"param_count", paramCount},
      {"buffers", std::move(buffers)},
      {"buffer_count", bufferCount},
      {"input", std::move(input)},
      {"target", std::move(target)},
      {"optimizer", std::move(optimizer)},
      {"hyper_values", std::move(hyperValues)},
      {"seeds", std::move(seeds)},
      {"model_args", json::Object{{"names", std::move(argNames)},
                                  {"values", std::move(argRows)}}},
      {"clip_norm", std::move(clipNorm)},
      {"schedule", std::move(schedule)},
      {"outputs", std::move(outputNames)},
      {"data", std::move(data)},
      {"epochs", sweep.getEpochs()}};
  // Mixed precision (mbt-autocast): the artifact rounds its products to
  // this format itself; recorded for the reader.
  if (auto precision = sweep.getPrecision()) {
    manifest["precision"] = stringifyPrecision(*precision).str();
    // f16's loss scale (its state is in the buffers amp.*).
    if (*precision == mlir::mbt::Precision::f16) {
      mlir::mbt::LossScaleSettings scale = sweep.getLossScaleSettings();
      json::Object buffers;
      for (const mlir::mbt::LossScaleBuffer &buffer :
           mlir::mbt::kLossScaleBuffers)
        buffers[buffer.role] = buffer.name;
      manifest["loss_scale"] =
          json::Object{{"init_scale", scale.initScale},
                       {"growth_factor", scale.growthFactor},
                       {"backoff_factor", scale.backoffFactor},
                       {"growth_interval", scale.growthInterval},
                       {"buffers", std::move(buffers)}};
    }
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << json::Value(std::move(manifest));
  return text;
}
} // namespace mbt
