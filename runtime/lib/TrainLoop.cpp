//===- TrainLoop.cpp - Epochs, progress, evaluations and checkpoints ------===//
//
// Trainer::run(): the user-facing job on top of the steps (Trainer.cpp,
// StepRunner.cpp); RunResults makes what it logs and publishes. A diverged
// model (a NaN/inf loss or gradient) is frozen by the train step itself
// (docs/abi.md, version 6), reported here with its step as it happens, and
// ranked last; the others keep training untouched because every model owns
// its own rows of every buffer.
//
//===----------------------------------------------------------------------===//

#include "mbt/runtime/Trainer.h"

#include "mbt/runtime/Checkpoint.h"
#include "mbt/runtime/Error.h"
#include "mbt/runtime/FileUtil.h"
#include "mbt/runtime/MetricsLog.h"
#include "mbt/runtime/Progress.h"
#include "mbt/runtime/RunResults.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <limits>

namespace mbt {
namespace runtime {

bool Trainer::atEpochBoundary() const {
  return !epochBatches || batchIndex == epochBatches->numBatches();
}

/// What the parts of run() share.
struct Trainer::RunContext {
  int64_t epochs;
  /// Curve points every this many steps (0: epoch ends only).
  int64_t logEvery;
  MetricsLog &metrics;
  ProgressMeter &progress;
  const RunResults &results;
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
  // Across ranks, rank 0 speaks for the run and writes its results.
  bool leader = sweepRanks->leader();
  ProgressMeter progress(options.progress, tty, options.quiet || !leader);
  // For the curve's spacing: the first epoch's steps.
  int64_t logEvery = options.logEvery >= 0
                         ? options.logEvery
                         : std::max<int64_t>(1, (stepsPerEpoch() + 19) / 20);
  RunResults results(sweepRanks->sweepManifest(),
                     leader ? options.outDir : std::string(), nextTokens(),
                     testCount() > 0);
  RunContext run{epochs, logEvery, metrics, progress, results};

  // A resumed run goes on inside the epoch it stopped in; one stopped
  // after its last epoch only reports.
  int64_t firstEpoch = completedEpochs() + 1;
  int64_t firstStep = atEpochBoundary() ? 1 : batchIndex + 1;
  EpochMeans means;
  means.train.assign(
      m, std::vector<double>(k, std::numeric_limits<double>::quiet_NaN()));
  if (firstEpoch > 1 && firstStep == 1)
    means.train = runningMeans();
  means.train = sweepRanks->gather(means.train, "the train means");
  sweepStatus("the start of the run");
  // The run ends early when no model trains any more (all stopped or
  // diverged): the rest of the epochs would change nothing.
  for (int64_t epoch = firstEpoch;
       epoch <= epochs && sweepStillTrains() && !stepLimitReached(); ++epoch) {
    trainEpoch(run, epoch, epoch == firstEpoch ? firstStep : 1);
    means = finishEpoch(run, epoch);
    if (epoch < epochs && !stepLimitReached())
      stopIfInterrupted(run);
  }
  if (means.test.empty()) { // no epoch trained here: still report the models
    means.test = sweepRanks->gather(evaluateTest(), "the test means");
    means.validation =
        sweepRanks->gather(evaluateValidation(), "the validation means");
  }

  Leaderboard board =
      sweepLeaderboard(run, means.train, means.test, means.validation);
  results.publish(metrics.path(), board);
  if (options.report && leader)
    *options.report << (options.reportJson ? leaderboardToJson(board)
                                           : formatLeaderboard(board))
                    << std::flush;
  return board;
}

MetricsLog Trainer::startRun() {
  if (!options.outDir.empty())
    createDirectories(options.outDir);
  MetricsLog metrics(sweepRanks->leader() ? options.outDir : std::string());
  if (options.resume) {
    if (options.outDir.empty())
      throw RuntimeError("resuming a run needs its results directory");
    RunCheckpoint saved = readResumeCheckpoint();
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

bool Trainer::sweepStillTrains() const {
  // Across ranks, only what every rank knows: the last gathered status.
  return sweepRanks->distributed() ? sweepTraining : status.anyTraining();
}

bool Trainer::stepLimitReached() const {
  return options.maxSteps > 0 && stepCount >= options.maxSteps;
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
    if (!sweepStillTrains()) {
      if (!options.quiet)
        run.progress.note(fmt::format(
            "mbt: no model trains after step {}; the run ends", stepCount));
      break;
    }
    trainNextBatch();
    // --max-steps ends the epoch, and the run, here.
    bool last = step == steps || stepLimitReached();
    for (int64_t model : newlyDiverged)
      run.progress.note(fmt::format(
          "mbt: warning: model {} diverged at step {} (its loss or gradients "
          "are not finite); it is frozen at its parameters of the step "
          "before, and the other models go on",
          sweepRanks->firstModel() + model, stepCount));
    if (!last) {
      afterStepWithinEpoch(run, epoch, step);
      stopIfInterrupted(run);
    }
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
    sample.models = sweepRanks->sweepManifest().models;
    run.progress.update(sample, last);
    if (last)
      break;
  }
}

/// Within the epoch: curve points, evaluations, stopping, checkpoints.
void Trainer::afterStepWithinEpoch(const RunContext &run, int64_t epoch,
                                   int64_t step) {
  bool halveNow = halvingDue();
  std::string lines;
  if (run.logEvery > 0 && step % run.logEvery == 0)
    lines += run.results.metricsLines(
        epoch, stepCount, "train",
        sweepRanks->gather(runningMeans(), "the train means"));
  bool evalNow = options.evalEvery > 0 && stepCount % options.evalEvery == 0;
  std::vector<std::vector<double>> tested, held;
  if (evalNow) {
    tested = sweepRanks->gather(evaluateTest(), "the test means");
    lines += run.results.metricsLines(epoch, stepCount, "test", tested);
  }
  if (evalNow || halveNow) {
    held = sweepRanks->gather(evaluateValidation(), "the validation means");
    if (!held.empty()) {
      lines += run.results.metricsLines(epoch, stepCount, "validation", held);
      applyStopping(held, halveNow, run.progress);
    }
  }
  if (evalNow)
    reportEvaluation({epoch, stepCount, tested, held}, run.progress);
  if (!lines.empty())
    run.metrics.append(lines);
  // A live leaderboard: each evaluation republishes it.
  if (evalNow)
    run.results.publish(
        run.metrics.path(),
        sweepLeaderboard(run,
                         sweepRanks->gather(runningMeans(), "the train means"),
                         tested, held));
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
  means.train = sweepRanks->gather(runningMeans(), "the train means");
  means.test = sweepRanks->gather(evaluateTest(), "the test means");
  means.validation =
      sweepRanks->gather(evaluateValidation(), "the validation means");
  if (!means.validation.empty())
    applyStopping(means.validation, halvingDue(), run.progress);
  reportEvaluation({epoch, stepCount, means.test, means.validation},
                   run.progress);
  run.metrics.append(run.results.epochMetricsLines(
      epoch, stepCount, means.train, means.test, means.validation));
  writeStateDicts();
  run.results.publish(
      run.metrics.path(),
      sweepLeaderboard(run, means.train, means.test, means.validation));
  // After the epoch's metrics: a run killed from here on resumes after
  // this epoch without logging it twice.
  writeCheckpoint(run.metrics.path());
  return means;
}

void Trainer::reportEvaluation(Evaluation evaluation, ProgressMeter &progress) {
  if (!options.onEvaluation)
    return;
  for (int64_t model : options.onEvaluation(evaluation)) {
    if (model < 0 || model >= m)
      throw RuntimeError(fmt::format("the evaluation callback stops model "
                                     "{}, which is not one of the run's {}",
                                     model, m));
    // The caller knows whom it stopped; a quiet run does not repeat it.
    if (status.stopModel(model, stepCount, "stopped by the caller") &&
        !options.quiet)
      progress.note(fmt::format("mbt: model {} stopped at step {} (by the "
                                "caller)",
                                model, stepCount));
  }
}

void Trainer::stopIfInterrupted(const RunContext &run) {
  if (!options.interrupted || !options.interrupted())
    return;
  writeCheckpoint(run.metrics.path());
  throw RunInterrupted(fmt::format(
      "interrupted at step {}; the checkpoint in '{}' resumes from there",
      stepCount, options.outDir));
}

ModelStatus Trainer::sweepStatus(const std::string &what) {
  ModelStatus all = sweepRanks->gather(status, what);
  sweepTraining = all.anyTraining();
  return all;
}

Leaderboard
Trainer::sweepLeaderboard(const RunContext &run,
                          const std::vector<std::vector<double>> &train,
                          const std::vector<std::vector<double>> &test,
                          const std::vector<std::vector<double>> &held) {
  ModelStatus all = sweepStatus("the models' status");
  std::vector<LossScaleReading> scales = sweepRanks->gather(
      RunResults::readLossScales(manifest, *steps), "the loss scales");
  return run.results.leaderboard(train, test, held, all, scales);
}

void Trainer::applyStopping(const std::vector<std::vector<double>> &held,
                            bool halve, ProgressMeter &progress) {
  // Every rank decides for every model on the same gathered values, so
  // the ranks agree without telling each other; each keeps its slice.
  ModelStatus all = sweepStatus("the models' status");
  std::vector<StoppedModel> stopped =
      all.applyStopping(held, options.earlyStopPatience, halve,
                        manifest.outputs, manifest.rankBy, stepCount);
  status.assign(0, all.slice(sweepRanks->firstModel(), m));
  sweepTraining = all.anyTraining();
  if (!sweepRanks->leader())
    return;
  for (const StoppedModel &model : stopped)
    progress.note(fmt::format("mbt: model {} stopped at step {} ({})",
                              model.model, stepCount, model.reason));
}

} // namespace runtime
} // namespace mbt
