//===- RunResults.cpp - What a run reports: metrics, leaderboard ----------===//

#include "mbt/runtime/RunResults.h"

#include "mbt/runtime/FileUtil.h"
#include "mbt/runtime/MetricsLog.h"
#include "mbt/runtime/Report.h"

#include <fmt/format.h>

#include <cmath>
#include <utility>

namespace mbt {
namespace runtime {

namespace {
/// The columns of `table` ([M][width]) whose value is not the same for
/// every model.
std::vector<size_t>
varyingColumns(const std::vector<std::vector<double>> &table, size_t width,
               int64_t models) {
  std::vector<size_t> columns;
  for (size_t a = 0; a < width; ++a)
    for (int64_t model = 1; model < models; ++model)
      if (table[model][a] != table[0][a]) {
        columns.push_back(a);
        break;
      }
  return columns;
}

/// The leaderboard's hyperparameter columns.
struct HyperColumns {
  std::vector<size_t> args, schedule;
};

/// The hyperparameters that tell the models apart: the model's arguments
/// that differ between models come first (they tell the models apart as
/// much as the optimizer's hyperparameters), then the optimizer's, the
/// clip norm and the schedule parameters that differ.
HyperColumns hyperColumns(const Manifest &manifest) {
  return {varyingColumns(manifest.modelArgValues, manifest.modelArgNames.size(),
                         manifest.models),
          varyingColumns(manifest.scheduleValues,
                         manifest.scheduleParamNames.size(), manifest.models)};
}

std::vector<std::string> hyperNames(const Manifest &manifest,
                                    const HyperColumns &columns) {
  std::vector<std::string> names;
  for (size_t a : columns.args)
    names.push_back(manifest.modelArgNames[a]);
  names.insert(names.end(), manifest.hyperNames.begin(),
               manifest.hyperNames.end());
  if (!manifest.clipNorm.empty())
    names.push_back("clip");
  for (size_t a : columns.schedule)
    names.push_back(manifest.scheduleParamNames[a]);
  return names;
}

/// Model `model`'s values of hyperNames' columns.
std::vector<double> hyperValues(const Manifest &manifest,
                                const HyperColumns &columns, int64_t model) {
  std::vector<double> values;
  for (size_t a : columns.args)
    values.push_back(manifest.modelArgValues[model][a]);
  values.insert(values.end(), manifest.hyperValues[model].begin(),
                manifest.hyperValues[model].end());
  if (!manifest.clipNorm.empty())
    values.push_back(manifest.clipNorm[model]);
  for (size_t a : columns.schedule)
    values.push_back(manifest.scheduleValues[model][a]);
  return values;
}

} // namespace

RunResults::RunResults(const Manifest &manifest, std::string outDir,
                       bool nextTokens, bool hasTestData)
    : manifest(manifest), outDir(std::move(outDir)), nextTokens(nextTokens),
      hasTestData(hasTestData) {}

std::string RunResults::metricsLines(int64_t epoch, int64_t step,
                                     const std::string &split,
                                     const Means &means) const {
  std::string lines;
  for (int64_t model = 0; model < manifest.models; ++model)
    lines += formatMetricsLine(epoch, step, model, split, manifest.outputs,
                               means[model]);
  return lines;
}

std::string RunResults::epochMetricsLines(int64_t epoch, int64_t step,
                                          const Means &train, const Means &test,
                                          const Means &validation) const {
  std::string lines;
  for (int64_t model = 0; model < manifest.models; ++model) {
    lines += formatMetricsLine(epoch, step, model, "train", manifest.outputs,
                               train[model]);
    lines += formatMetricsLine(epoch, step, model, "test", manifest.outputs,
                               test[model]);
    if (!validation.empty())
      lines += formatMetricsLine(epoch, step, model, "validation",
                                 manifest.outputs, validation[model]);
  }
  return lines;
}

std::vector<LossScaleReading>
RunResults::readLossScales(const Manifest &manifest, const StepRunner &steps) {
  std::vector<LossScaleReading> readings;
  if (!manifest.lossScale)
    return readings;
  const LossScaleSpec &scale = *manifest.lossScale;
  const FloatBuffer &buffers = steps.buffers();
  for (int64_t model = 0; model < manifest.models; ++model) {
    auto buffer = [&](int64_t k) {
      return buffers.get(model * manifest.bufferCount +
                         manifest.buffers[k].offset);
    };
    readings.push_back(
        {buffer(scale.scaleBuffer),
         static_cast<int64_t>(buffer(scale.skippedStepsBuffer))});
  }
  return readings;
}

Leaderboard
RunResults::leaderboard(const Means &train, const Means &test,
                        const Means &validation, const ModelStatus &status,
                        const std::vector<LossScaleReading> &lossScales) const {
  HyperColumns columns = hyperColumns(manifest);
  Leaderboard board;
  board.hyperNames = hyperNames(manifest, columns);
  board.outputs = manifest.outputs;
  board.rankBy = manifest.rankBy;
  // A language model's loss is per token: its perplexity, exp(loss), is
  // the number people compare, so it gets a column of its own.
  auto withPerplexity = [&](std::vector<double> means) {
    if (nextTokens && !means.empty())
      means.push_back(std::exp(means[0]));
    return means;
  };
  if (nextTokens)
    board.outputs.push_back("perplexity");
  for (int64_t model = 0; model < manifest.models; ++model) {
    ModelResult row;
    row.model = model;
    row.seed = manifest.seeds[model];
    row.hyper = hyperValues(manifest, columns, model);
    row.train = withPerplexity(train[model]);
    row.test = withPerplexity(test[model]);
    if (!validation.empty())
      row.validation = withPerplexity(validation[model]);
    // A non-finite test loss is as much a divergence as a train one (an
    // empty test split gives NaN for everyone and says nothing).
    row.diverged =
        status.diverged(model) || (hasTestData && !std::isfinite(row.test[0]));
    row.divergedStep = status.divergedSteps()[model];
    row.stoppedStep = status.stoppedSteps()[model];
    row.stopReason = status.stopReasons()[model];
    if (manifest.lossScale) {
      row.lossScale = lossScales[model].scale;
      row.skippedSteps = lossScales[model].skippedSteps;
    }
    board.rows.push_back(std::move(row));
  }
  board.ranked = hasTestData           ? Leaderboard::Split::Test
                 : !validation.empty() ? Leaderboard::Split::Validation
                                       : Leaderboard::Split::Train;
  rankModels(board);
  return board;
}

void RunResults::publish(const std::string &metricsPath,
                         const Leaderboard &board) const {
  if (outDir.empty())
    return;
  writeFileAtomically(outDir + "/leaderboard.json", leaderboardToJson(board));
  std::string title = fmt::format("mbt: {} models of '{}' ({})",
                                  manifest.models, manifest.model, outDir);
  writeFileAtomically(outDir + "/report.html",
                      renderReport(title, manifest.outputs,
                                   parseMetricsLog(readFileBytes(metricsPath)),
                                   board));
}

} // namespace runtime
} // namespace mbt
