//===- ManifestWriter.cpp - write the manifest as JSON --------------------===//
//
// The inverse of ManifestReader.cpp: every field readManifest() reads, in
// the spelling of docs/abi.md. Optional parts are written only where they
// say something (a kfold routing's folds, a loss scale, `decay` under
// no_decay); `clip_norm` and `schedule` are null without one.
//
//===----------------------------------------------------------------------===//

#include "mbt/common/Manifest.h"

#include <nlohmann/json.hpp>

#include <algorithm>

using nlohmann::json;

namespace mbt {
namespace {

json initToJson(const InitSpec &init) {
  json object{{"kind", initKindName(init.kind)}};
  switch (init.kind) {
  case InitSpec::Kind::Normal:
    object["mean"] = init.mean;
    object["std"] = init.stddev;
    break;
  case InitSpec::Kind::Uniform:
    object["low"] = init.low;
    object["high"] = init.high;
    break;
  case InitSpec::Kind::Constant:
    object["value"] = init.value;
    break;
  default:
    break;
  }
  return object;
}

/// A layout's entries; `decay` on each where any of them does not decay
/// (the sweep's no_decay matched it), `trainable` where any is frozen.
json layoutToJson(const std::vector<ParamSpec> &layout) {
  bool anyExcluded = std::any_of(layout.begin(), layout.end(),
                                 [](const ParamSpec &p) { return !p.decay; });
  bool anyFrozen = std::any_of(layout.begin(), layout.end(),
                               [](const ParamSpec &p) { return !p.trainable; });
  json entries = json::array();
  for (const ParamSpec &p : layout) {
    json entry{{"name", p.name},
               {"shape", p.shape},
               {"offset", p.offset},
               {"size", p.size},
               {"init", initToJson(p.init)}};
    if (anyExcluded)
      entry["decay"] = p.decay;
    if (anyFrozen)
      entry["trainable"] = p.trainable;
    entries.push_back(std::move(entry));
  }
  return entries;
}

json inputToJson(const Manifest &m) {
  if (m.inputKind == Manifest::InputKind::Tokens)
    // T changes from step to step: no features, a shape of [null].
    return {{"name", m.inputName},
            {"kind", "tokens"},
            {"vocab", m.vocab},
            {"shape", json::array({nullptr})},
            {"features", 0}};
  return {
      {"name", m.inputName}, {"shape", m.inputShape}, {"features", m.features}};
}

json targetToJson(const Manifest &m) {
  if (m.targetKind == Manifest::TargetKind::Values)
    return {
        {"name", m.targetName}, {"kind", "values"}, {"width", m.targetWidth}};
  json target{{"name", m.targetName}, {"classes", m.classes}};
  if (m.targetKind == Manifest::TargetKind::NextTokens)
    target["kind"] = "next_tokens";
  return target;
}

json optimizerToJson(const Manifest &m) {
  json optimizer{
      {"rule", m.optimizerRule}, {"slots", m.slots}, {"hyper", m.hyperNames}};
  if (!m.optimizerFlags.empty())
    optimizer["flags"] = m.optimizerFlags;
  return optimizer;
}

/// The settings of the user's own files that differ from the defaults.
json sourceToJson(const DataSource &s) {
  json source = json::object();
  const DataSource unset;
  for (const auto &[key, member] : kDataSourceTexts)
    if (s.*member != unset.*member)
      source[key] = s.*member;
  if (!s.columns.empty())
    source["columns"] = s.columns;
  if (!s.header)
    source["header"] = false;
  if (s.skipRows > 0)
    source["skip_rows"] = s.skipRows;
  if (s.standardize)
    source["standardize"] = true;
  if (!s.mean.empty())
    source["mean"] = s.mean;
  if (!s.stddev.empty())
    source["std"] = s.stddev;
  return source;
}

json dataToJson(const DataSpec &d) {
  json data{{"name", d.name},
            {"batch", d.batch},
            {"shuffle_seed", d.shuffleSeed},
            {"routing", routingName(d.routing)}};
  if (isFileDataSet(d.name))
    data["source"] = sourceToJson(d.source);
  if (d.sequences())
    data["batching"] = {{"strategy", d.batching.strategy},
                        {"token_budget", d.batching.tokenBudget},
                        {"window", d.batching.window},
                        {"max_length", d.batching.maxLength}};
  if (d.validation > 0)
    data["validation"] = d.validation;
  if (d.crop > 0)
    data["crop"] = d.crop;
  if (d.flip)
    data["flip"] = true;
  if (d.routing == DataSpec::Routing::KFold) {
    data["folds"] = d.folds;
    data["fold"] = d.fold;
  }
  return data;
}

json lossScaleToJson(const Manifest &m) {
  const LossScaleSpec &s = *m.lossScale;
  auto name = [&](int64_t buffer) {
    return buffer >= 0 && buffer < static_cast<int64_t>(m.buffers.size())
               ? m.buffers[buffer].name
               : std::string();
  };
  return {{"init_scale", s.initScale},
          {"growth_factor", s.growthFactor},
          {"backoff_factor", s.backoffFactor},
          {"growth_interval", s.growthInterval},
          {"buffers",
           {{"scale", name(s.scaleBuffer)},
            {"good_steps", name(s.goodStepsBuffer)},
            {"skipped_steps", name(s.skippedStepsBuffer)}}}};
}

} // namespace

std::string writeManifest(const Manifest &m) {
  json root{
      {"abi_version", m.abiVersion},
      {"dtype", dtypeName(m.dtype)},
      {"device", m.device == Manifest::Device::CUDA ? "cuda" : "cpu"},
      {"model", m.model},
      {"models", m.models},
      {"params", layoutToJson(m.params)},
      {"param_count", m.paramCount},
      {"trainable_count", m.trainableCount},
      {"buffers", layoutToJson(m.buffers)},
      {"buffer_count", m.bufferCount},
      {"input", inputToJson(m)},
      {"target", targetToJson(m)},
      {"optimizer", optimizerToJson(m)},
      {"hyper_values", m.hyperValues},
      {"seeds", m.seeds},
      {"clip_norm", m.clipNorm.empty() ? json(nullptr) : json(m.clipNorm)},
      {"schedule", m.scheduleName.empty()
                       ? json(nullptr)
                       : json{{"name", m.scheduleName},
                              {"params", m.scheduleParamNames},
                              {"values", m.scheduleValues}}},
      {"outputs", m.outputs},
      {"data", dataToJson(m.data)},
      {"epochs", m.epochs}};
  if (!m.precision.empty())
    root["precision"] = m.precision;
  if (!m.rankBy.empty())
    root["rank_by"] = m.rankBy;
  if (m.gradStep)
    root["grad_step"] = true;
  if (!m.cpuName.empty())
    root["cpu"] = {{"name", m.cpuName}, {"features", m.cpuFeatures}};
  if (m.isSlice()) {
    root["first_model"] = m.firstModel;
    root["sweep_models"] = m.sweepModels;
  }
  // Optional, and one row per model where present: a manifest made
  // without them (no rows) reads back the same.
  if (!m.modelArgValues.empty())
    root["model_args"] = {{"names", m.modelArgNames},
                          {"values", m.modelArgValues}};
  if (m.initCheckpoint) {
    json init = {{"files", m.initCheckpoint->files}};
    if (!m.initCheckpoint->transpose.empty())
      init["transpose"] = m.initCheckpoint->transpose;
    if (!m.initCheckpoint->rename.empty())
      init["rename"] = m.initCheckpoint->rename;
    if (m.initCheckpoint->partial)
      init["partial"] = true;
    root["init_checkpoint"] = init;
  }
  if (!m.splitOutputs.empty()) {
    json split = json::array();
    for (const SplitOutput &output : m.splitOutputs)
      split.push_back(
          {{"name", output.name},
           {"reduce", output.reduce == SplitOutput::Reduce::R2 ? "r2" : "rmse"},
           {"width", output.width}});
    root["split_outputs"] = split;
  }
  if (m.lossScale)
    root["loss_scale"] = lossScaleToJson(m);
  return root.dump();
}

} // namespace mbt
