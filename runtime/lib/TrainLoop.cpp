//===- TrainLoop.cpp - Epochs, progress, metrics and leaderboard ----------===//
//
// Trainer::run(): the user-facing job on top of the step machinery in
// Trainer.cpp. A diverged model (a NaN/inf loss or gradient) is frozen by
// the train step itself (docs/abi.md, version 6), reported here with its
// step as it happens, and ranked last; the others keep training untouched
// because every model owns its own rows of every buffer.
//
//===----------------------------------------------------------------------===//

#include "mbt/runtime/Trainer.h"

#include "mbt/runtime/Checkpoint.h"
#include "mbt/runtime/Error.h"
#include "mbt/runtime/FileUtil.h"
#include "mbt/runtime/MetricsLog.h"
#include "mbt/runtime/Progress.h"
#include "mbt/runtime/Report.h"

#include <chrono>
#include <cmath>
#include <limits>

namespace mbt {
namespace runtime {

bool Trainer::atEpochBoundary() const {
  return !epochBatches || batchIndex == epochBatches->numBatches();
}

Leaderboard Trainer::buildLeaderboard(
    const std::vector<std::vector<double>> &trainMeans,
    const std::vector<std::vector<double>> &testMeans,
    const std::vector<std::vector<double>> &validationMeans) const {
  Leaderboard board;
  // The model's arguments that differ between models come first: they
  // tell the models apart as much as the optimizer's hyperparameters.
  // Schedule parameters that differ come after those.
  auto varying = [&](const std::vector<std::vector<double>> &table,
                     size_t width) {
    std::vector<size_t> columns;
    for (size_t a = 0; a < width; ++a)
      for (int64_t model = 1; model < m; ++model)
        if (table[model][a] != table[0][a]) {
          columns.push_back(a);
          break;
        }
    return columns;
  };
  std::vector<size_t> varyingArgs =
      varying(manifest.modelArgValues, manifest.modelArgNames.size());
  std::vector<size_t> varyingSchedule =
      varying(manifest.scheduleValues, manifest.scheduleParamNames.size());
  for (size_t a : varyingArgs)
    board.hyperNames.push_back(manifest.modelArgNames[a]);
  board.hyperNames.insert(board.hyperNames.end(), manifest.hyperNames.begin(),
                          manifest.hyperNames.end());
  if (!manifest.clipNorm.empty())
    board.hyperNames.push_back("clip");
  for (size_t a : varyingSchedule)
    board.hyperNames.push_back(manifest.scheduleParamNames[a]);
  board.outputs = manifest.outputs;
  // A language model's loss is per token: its perplexity, exp(loss), is
  // the number people compare, so it gets a column of its own.
  auto withPerplexity = [&](std::vector<double> means) {
    if (nextTokens() && !means.empty())
      means.push_back(std::exp(means[0]));
    return means;
  };
  if (nextTokens())
    board.outputs.push_back("perplexity");
  // The loss scale's state is in the buffers, which may be on the GPU.
  if (manifest.lossScale)
    syncFromDevice();
  for (int64_t model = 0; model < m; ++model) {
    ModelResult row;
    row.model = model;
    row.seed = manifest.seeds[model];
    for (size_t a : varyingArgs)
      row.hyper.push_back(manifest.modelArgValues[model][a]);
    row.hyper.insert(row.hyper.end(), manifest.hyperValues[model].begin(),
                     manifest.hyperValues[model].end());
    if (!manifest.clipNorm.empty())
      row.hyper.push_back(manifest.clipNorm[model]);
    for (size_t a : varyingSchedule)
      row.hyper.push_back(manifest.scheduleValues[model][a]);
    row.train = withPerplexity(trainMeans[model]);
    row.test = withPerplexity(testMeans[model]);
    if (!validationMeans.empty())
      row.validation = withPerplexity(validationMeans[model]);
    // A non-finite test loss is as much a divergence as a train one (an
    // empty test split gives NaN for everyone and says nothing).
    row.diverged =
        diverged(model) || (testCount() > 0 && !std::isfinite(row.test[0]));
    row.divergedStep = divergedAt[model];
    row.stoppedStep = stoppedAt[model];
    row.stopReason = stopReason[model];
    if (const auto &scale = manifest.lossScale) {
      auto buffer = [&](int64_t k) {
        return buffersBuf.get(model * manifest.bufferCount +
                              manifest.buffers[k].offset);
      };
      row.lossScale = buffer(scale->scaleBuffer);
      row.skippedSteps =
          static_cast<int64_t>(buffer(scale->skippedStepsBuffer));
    }
    board.rows.push_back(std::move(row));
  }
  rankModels(board);
  return board;
}

Leaderboard Trainer::run() {
  int64_t epochs = options.epochs >= 0 ? options.epochs : manifest.epochs;
  if (!options.outDir.empty())
    createDirectories(options.outDir);
  MetricsLog metrics(options.outDir);
  if (options.resume) {
    if (options.outDir.empty())
      throw RuntimeError("resuming a run needs its results directory");
    RunCheckpoint saved =
        readCheckpoint(options.outDir + "/" + kCheckpointFile);
    restore(saved);
    metrics.truncate(saved.metricsBytes);
  } else {
    if (!atEpochBoundary())
      throw RuntimeError("Trainer::run() must start at an epoch boundary; "
                         "runSteps() left the data order mid-epoch");
    metrics.reset();
  }

  bool tty = options.progressTty >= 0
                 ? options.progressTty != 0
                 : options.progress == &std::cerr && stderrIsTty();
  ProgressMeter progress(options.progress, tty, options.quiet);
  // For the curve's spacing: the first epoch's steps.
  int64_t typicalSteps = stepsPerEpoch();
  std::vector<std::vector<double>> trainMeans(
      m, std::vector<double>(k, std::numeric_limits<double>::quiet_NaN()));
  std::vector<std::vector<double>> testMeans, validationMeans;
  if ((options.earlyStopPatience > 0 || options.halveEvery > 0) &&
      !routing.hasValidation())
    throw RuntimeError("early stopping and successive halving rank the "
                       "models on a validation split: give the data one "
                       "(fashion_mnist(validation = 0.1), or folds)");
  // A resumed run goes on inside the epoch it stopped in; one stopped
  // after its last epoch only reports.
  int64_t firstEpoch = completedEpochs() + 1;
  int64_t firstStep = atEpochBoundary() ? 1 : batchIndex + 1;
  int64_t logEvery = options.logEvery >= 0
                         ? options.logEvery
                         : std::max<int64_t>(1, (typicalSteps + 19) / 20);
  if (firstEpoch > 1 && firstStep == 1)
    trainMeans = runningMeans();
  // Successive halving stops models at every multiple of its period.
  auto halvingDue = [&] {
    return options.halveEvery > 0 && stepCount % options.halveEvery == 0;
  };

  for (int64_t epoch = firstEpoch; epoch <= epochs; ++epoch) {
    progress.beginEpoch();
    auto start = std::chrono::steady_clock::now();
    // This epoch's steps (a sequence data set's plan changes a little
    // from epoch to epoch).
    startEpochIfDue();
    int64_t stepsPerEpoch = epochBatches->numBatches();
    int64_t samplesBefore = totalSamples;
    for (int64_t step = epoch == firstEpoch ? firstStep : 1;
         step <= stepsPerEpoch; ++step) {
      trainNextBatch();
      for (int64_t model : newlyDiverged)
        progress.note("mbt: warning: model " + std::to_string(model) +
                      " diverged at step " + std::to_string(stepCount) +
                      " (its loss or gradients are not finite); it is frozen "
                      "at its parameters of the step before, and the other "
                      "models go on");
      bool halveNow = halvingDue();
      if (step < stepsPerEpoch) {
        // Within the epoch: curve points, evaluations, checkpoints.
        std::string lines;
        if (logEvery > 0 && step % logEvery == 0)
          lines += metricsLines(epoch, "train", runningMeans());
        bool evalNow =
            options.evalEvery > 0 && stepCount % options.evalEvery == 0;
        std::vector<std::vector<double>> tested, held;
        if (evalNow) {
          tested = evaluateTest();
          lines += metricsLines(epoch, "test", tested);
        }
        if (evalNow || halveNow) {
          held = evaluateValidation();
          if (!held.empty()) {
            lines += metricsLines(epoch, "validation", held);
            applyStopping(held, halveNow, progress);
          }
        }
        if (!lines.empty())
          metrics.append(lines);
        // A live leaderboard: each evaluation republishes it.
        if (evalNow)
          publish(metrics.path(),
                  buildLeaderboard(runningMeans(), tested, held));
        if (options.checkpointEvery > 0 &&
            stepCount % options.checkpointEvery == 0)
          writeCheckpoint(metrics.path());
      }
      double seconds = std::chrono::duration<double>(
                           std::chrono::steady_clock::now() - start)
                           .count();
      double best = std::numeric_limits<double>::quiet_NaN();
      for (int64_t model = 0; model < m; ++model) {
        double loss = runningSums[model * k] / runningWeight;
        if (!diverged(model) && std::isfinite(loss) &&
            (std::isnan(best) || loss < best))
          best = loss;
      }
      ProgressSample sample;
      sample.epoch = epoch;
      sample.epochs = epochs;
      sample.step = step;
      sample.stepsInEpoch = stepsPerEpoch;
      sample.bestLoss = best;
      sample.samplesPerSecond =
          seconds > 0
              ? static_cast<double>(totalSamples - samplesBefore) / seconds
              : 0.0;
      sample.models = m;
      progress.update(sample, step == stepsPerEpoch);
    }
    trainMeans = runningMeans();
    testMeans = evaluateTest();
    validationMeans = evaluateValidation();
    if (!validationMeans.empty())
      applyStopping(validationMeans, halvingDue(), progress);
    std::string lines;
    for (int64_t model = 0; model < m; ++model) {
      lines += formatMetricsLine(epoch, stepCount, model, "train",
                                 manifest.outputs, trainMeans[model]);
      lines += formatMetricsLine(epoch, stepCount, model, "test",
                                 manifest.outputs, testMeans[model]);
      if (!validationMeans.empty())
        lines += formatMetricsLine(epoch, stepCount, model, "validation",
                                   manifest.outputs, validationMeans[model]);
    }
    metrics.append(lines);
    writeStateDicts();
    publish(metrics.path(),
            buildLeaderboard(trainMeans, testMeans, validationMeans));
    // After the epoch's metrics: a run killed from here on resumes after
    // this epoch without logging it twice.
    writeCheckpoint(metrics.path());
  }
  if (testMeans.empty()) { // no epoch trained here: still report the models
    testMeans = evaluateTest();
    validationMeans = evaluateValidation();
  }

  Leaderboard board = buildLeaderboard(trainMeans, testMeans, validationMeans);
  publish(metrics.path(), board);
  if (options.report)
    *options.report << (options.reportJson ? leaderboardToJson(board)
                                           : formatLeaderboard(board))
                    << std::flush;
  return board;
}

void Trainer::applyStopping(const std::vector<std::vector<double>> &held,
                            bool halve, ProgressMeter &progress) {
  auto stop = [&](int64_t model, const std::string &reason) {
    stoppedAt[model] = stepCount;
    stopReason[model] = reason;
    progress.note("mbt: model " + std::to_string(model) + " stopped at step " +
                  std::to_string(stepCount) + " (" + reason + ")");
  };
  if (options.earlyStopPatience > 0)
    for (int64_t model = 0; model < m; ++model) {
      if (!training(model))
        continue;
      double loss = held[model][0];
      if (loss < bestValidationLoss[model]) {
        bestValidationLoss[model] = loss;
        evaluationsSinceBest[model] = 0;
      } else if (++evaluationsSinceBest[model] >= options.earlyStopPatience) {
        stop(model, "early stopping: no lower validation loss in " +
                        std::to_string(options.earlyStopPatience) +
                        " evaluations");
      }
    }
  if (!halve)
    return;
  // The models still training, best first by the leaderboard's key on the
  // validation split (a NaN score last); the worse half stops.
  RankKey key = chooseRankKey(manifest.outputs);
  std::vector<int64_t> active;
  for (int64_t model = 0; model < m; ++model)
    if (training(model))
      active.push_back(model);
  auto score = [&](int64_t model) { return held[model][key.output]; };
  std::stable_sort(active.begin(), active.end(), [&](int64_t a, int64_t b) {
    double sa = score(a), sb = score(b);
    if (std::isnan(sa) != std::isnan(sb))
      return std::isnan(sb);
    return key.descending ? sa > sb : sa < sb;
  });
  size_t keep = (active.size() + 1) / 2;
  for (size_t i = keep; i < active.size(); ++i)
    stop(active[i], "successive halving: in the worse half of " +
                        std::to_string(active.size()) + " on validation " +
                        manifest.outputs[key.output]);
}

std::string
Trainer::metricsLines(int64_t epoch, const std::string &split,
                      const std::vector<std::vector<double>> &means) const {
  std::string lines;
  for (int64_t model = 0; model < m; ++model)
    lines += formatMetricsLine(epoch, stepCount, model, split, manifest.outputs,
                               means[model]);
  return lines;
}

void Trainer::publish(const std::string &metricsPath,
                      const Leaderboard &board) const {
  if (options.outDir.empty())
    return;
  writeFileAtomically(options.outDir + "/leaderboard.json",
                      leaderboardToJson(board));
  std::string title = "mbt: " + std::to_string(m) + " models of '" +
                      manifest.model + "' (" + options.outDir + ")";
  writeFileAtomically(options.outDir + "/report.html",
                      renderReport(title, manifest.outputs,
                                   parseMetricsLog(readFileBytes(metricsPath)),
                                   board));
}

} // namespace runtime
} // namespace mbt
