//===- TrainLoop.cpp - Epochs, progress, metrics and leaderboard ----------===//
//
// Trainer::run(): the user-facing job on top of the steps (Trainer.cpp,
// StepRunner.cpp). A diverged model (a NaN/inf loss or gradient) is frozen by
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
    row.divergedStep = status.divergedSteps()[model];
    row.stoppedStep = status.stoppedSteps()[model];
    row.stopReason = status.stopReasons()[model];
    if (const auto &scale = manifest.lossScale) {
      // The loss scale's state is in the buffers, which may be on the GPU.
      const FloatBuffer &buffers = steps->buffers();
      auto buffer = [&](int64_t k) {
        return buffers.get(model * manifest.bufferCount +
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

/// What the parts of run() share.
struct Trainer::RunContext {
  int64_t epochs;
  /// Curve points every this many steps (0: epoch ends only).
  int64_t logEvery;
  MetricsLog &metrics;
  ProgressMeter &progress;
};

Leaderboard Trainer::run() {
  int64_t epochs = options.epochs >= 0 ? options.epochs : manifest.epochs;
  if ((options.earlyStopPatience > 0 || options.halveEvery > 0) &&
      !routing.hasValidation())
    throw RuntimeError("early stopping and successive halving rank the "
                       "models on a validation split: give the data one "
                       "(fashion_mnist(validation = 0.1), or folds)");
  MetricsLog metrics = startRun();
  bool tty = options.progressTty >= 0
                 ? options.progressTty != 0
                 : options.progress == &std::cerr && stderrIsTty();
  ProgressMeter progress(options.progress, tty, options.quiet);
  // For the curve's spacing: the first epoch's steps.
  int64_t logEvery = options.logEvery >= 0
                         ? options.logEvery
                         : std::max<int64_t>(1, (stepsPerEpoch() + 19) / 20);
  RunContext run{epochs, logEvery, metrics, progress};

  // A resumed run goes on inside the epoch it stopped in; one stopped
  // after its last epoch only reports.
  int64_t firstEpoch = completedEpochs() + 1;
  int64_t firstStep = atEpochBoundary() ? 1 : batchIndex + 1;
  EpochMeans means;
  means.train.assign(
      m, std::vector<double>(k, std::numeric_limits<double>::quiet_NaN()));
  if (firstEpoch > 1 && firstStep == 1)
    means.train = runningMeans();
  for (int64_t epoch = firstEpoch; epoch <= epochs; ++epoch) {
    trainEpoch(run, epoch, epoch == firstEpoch ? firstStep : 1);
    means = finishEpoch(run, epoch);
  }
  if (means.test.empty()) { // no epoch trained here: still report the models
    means.test = evaluateTest();
    means.validation = evaluateValidation();
  }

  Leaderboard board =
      buildLeaderboard(means.train, means.test, means.validation);
  publish(metrics.path(), board);
  if (options.report)
    *options.report << (options.reportJson ? leaderboardToJson(board)
                                           : formatLeaderboard(board))
                    << std::flush;
  return board;
}

MetricsLog Trainer::startRun() {
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
  return metrics;
}

bool Trainer::halvingDue() const {
  return options.halveEvery > 0 && stepCount % options.halveEvery == 0;
}

void Trainer::trainEpoch(const RunContext &run, int64_t epoch,
                         int64_t firstStep) {
  run.progress.beginEpoch();
  auto start = std::chrono::steady_clock::now();
  // This epoch's steps (a sequence data set's plan changes a little
  // from epoch to epoch).
  startEpochIfDue();
  int64_t steps = epochBatches->numBatches();
  int64_t samplesBefore = totalSamples;
  for (int64_t step = firstStep; step <= steps; ++step) {
    trainNextBatch();
    for (int64_t model : newlyDiverged)
      run.progress.note("mbt: warning: model " + std::to_string(model) +
                        " diverged at step " + std::to_string(stepCount) +
                        " (its loss or gradients are not finite); it is "
                        "frozen at its parameters of the step before, and "
                        "the other models go on");
    if (step < steps)
      afterStepWithinEpoch(run, epoch, step);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    ProgressSample sample;
    sample.epoch = epoch;
    sample.epochs = run.epochs;
    sample.step = step;
    sample.stepsInEpoch = steps;
    sample.bestLoss = bestRunningLoss();
    sample.samplesPerSecond =
        seconds > 0
            ? static_cast<double>(totalSamples - samplesBefore) / seconds
            : 0.0;
    sample.models = m;
    run.progress.update(sample, step == steps);
  }
}

/// Within the epoch: curve points, evaluations, stopping, checkpoints.
void Trainer::afterStepWithinEpoch(const RunContext &run, int64_t epoch,
                                   int64_t step) {
  bool halveNow = halvingDue();
  std::string lines;
  if (run.logEvery > 0 && step % run.logEvery == 0)
    lines += metricsLines(epoch, "train", runningMeans());
  bool evalNow = options.evalEvery > 0 && stepCount % options.evalEvery == 0;
  std::vector<std::vector<double>> tested, held;
  if (evalNow) {
    tested = evaluateTest();
    lines += metricsLines(epoch, "test", tested);
  }
  if (evalNow || halveNow) {
    held = evaluateValidation();
    if (!held.empty()) {
      lines += metricsLines(epoch, "validation", held);
      applyStopping(held, halveNow, run.progress);
    }
  }
  if (!lines.empty())
    run.metrics.append(lines);
  // A live leaderboard: each evaluation republishes it.
  if (evalNow)
    publish(run.metrics.path(), buildLeaderboard(runningMeans(), tested, held));
  if (options.checkpointEvery > 0 && stepCount % options.checkpointEvery == 0)
    writeCheckpoint(run.metrics.path());
}

double Trainer::bestRunningLoss() const {
  double best = std::numeric_limits<double>::quiet_NaN();
  for (int64_t model = 0; model < m; ++model) {
    double loss = runningSums[model * k] / runningWeight;
    if (!diverged(model) && std::isfinite(loss) &&
        (std::isnan(best) || loss < best))
      best = loss;
  }
  return best;
}

/// The epoch's means, stopping, metrics, state dicts, leaderboard and
/// checkpoint.
Trainer::EpochMeans Trainer::finishEpoch(const RunContext &run, int64_t epoch) {
  EpochMeans means;
  means.train = runningMeans();
  means.test = evaluateTest();
  means.validation = evaluateValidation();
  if (!means.validation.empty())
    applyStopping(means.validation, halvingDue(), run.progress);
  std::string lines;
  for (int64_t model = 0; model < m; ++model) {
    lines += formatMetricsLine(epoch, stepCount, model, "train",
                               manifest.outputs, means.train[model]);
    lines += formatMetricsLine(epoch, stepCount, model, "test",
                               manifest.outputs, means.test[model]);
    if (!means.validation.empty())
      lines += formatMetricsLine(epoch, stepCount, model, "validation",
                                 manifest.outputs, means.validation[model]);
  }
  run.metrics.append(lines);
  writeStateDicts();
  publish(run.metrics.path(),
          buildLeaderboard(means.train, means.test, means.validation));
  // After the epoch's metrics: a run killed from here on resumes after
  // this epoch without logging it twice.
  writeCheckpoint(run.metrics.path());
  return means;
}

void Trainer::applyStopping(const std::vector<std::vector<double>> &held,
                            bool halve, ProgressMeter &progress) {
  for (const StoppedModel &stopped : status.applyStopping(
           held, options.earlyStopPatience, halve, manifest.outputs, stepCount))
    progress.note("mbt: model " + std::to_string(stopped.model) +
                  " stopped at step " + std::to_string(stepCount) + " (" +
                  stopped.reason + ")");
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
