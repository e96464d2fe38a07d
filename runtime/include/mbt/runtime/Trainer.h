//===- Trainer.h - Train and evaluate a model batch -------------*- C++ -*-===//
//
// Drives an Artifact's train and eval steps (StepRunner.h, which owns the
// buffers of docs/abi.md and their device copies) over a Dataset. All
// models see the same batches (shared data order from Sampler.h). run() is
// the full job (epochs, evaluation, metrics.jsonl, leaderboard: the last
// two made by RunResults.h); runSteps() trains an exact number of steps
// with no I/O, for equivalence tests that compare parameters.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_TRAINER_H
#define MBT_RUNTIME_TRAINER_H

#include "mbt/runtime/Artifact.h"
#include "mbt/runtime/Checkpoint.h"
#include "mbt/runtime/DataRouting.h"
#include "mbt/runtime/Dataset.h"
#include "mbt/runtime/Leaderboard.h"
#include "mbt/runtime/LengthBatching.h"
#include "mbt/runtime/MetricsLog.h"
#include "mbt/runtime/ModelStatus.h"
#include "mbt/runtime/OutputColumns.h"
#include "mbt/runtime/Progress.h"
#include "mbt/runtime/Sampler.h"
#include "mbt/runtime/SequenceDataset.h"
#include "mbt/runtime/StepRunner.h"
#include "mbt/runtime/TorchStateDict.h"
#include "mbt/runtime/TrainOptions.h"
#include "mbt/runtime/distributed/SweepRanks.h"

#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <vector>

namespace mbt {
namespace runtime {

class Trainer {
public:
  /// Allocates and initializes every buffer. The artifact and both data sets
  /// must outlive the Trainer. Throws RuntimeError if the data does not fit
  /// the manifest (feature count, label range, empty training set).
  Trainer(const Artifact &artifact, const Dataset &train, const Dataset &test,
          TrainOptions options = {});
  /// For an artifact whose input is token ids: the data are sequences,
  /// grouped into steps by the manifest's batching (LengthBatching.h), each
  /// step's x an int32 [B, T] block padded with the pad token 0
  /// (TrainerSequences.cpp). Throws RuntimeError if a token lies outside
  /// the input's vocabulary, a label outside the target's classes, or a
  /// sample exceeds the token budget.
  Trainer(const Artifact &artifact, const SequenceDataset &train,
          const SequenceDataset &test, TrainOptions options = {});
  ~Trainer();

  /// Trains every epoch from where the data order stands (the start, or a
  /// restored checkpoint's step), evaluates after each one, writes the
  /// results directory, prints and returns the ranked leaderboard.
  Leaderboard run();

  /// The run's full state (Checkpoint.h), with `metricsBytes` as the length
  /// of metrics.jsonl.
  RunCheckpoint checkpoint(int64_t metricsBytes = 0) const;
  /// Continues from `checkpoint`: parameters, optimizer state, data order,
  /// step, the epoch's running sums, the diverged models. Throws
  /// RuntimeError if another artifact wrote it or its sizes differ.
  void restore(const RunCheckpoint &checkpoint);

  /// Trains every epoch on `steps` (StepPlan.h: another batcher's plan,
  /// for benchmarks) instead of the manifest's batching: the same steps,
  /// in order, each epoch. Token sequences only, before the first step;
  /// throws RuntimeError unless the plan takes every training sample once.
  void useStepPlan(std::vector<LengthGroup> steps);

  /// Trains exactly `n` more steps, continuing the data order across epoch
  /// boundaries. No evaluation, no output.
  void runSteps(int64_t n);

  /// Per-model, sample-weighted means of every output over `data`
  /// (in order, batches of the manifest's batch size): [M][K].
  std::vector<std::vector<double>> evaluate(const Dataset &data);
  /// The same for token sequences, in the steps the manifest's batching
  /// plans for them (a fixed plan: shuffle seed 0, epoch 0).
  std::vector<std::vector<double>> evaluate(const SequenceDataset &data);

  /// Under k-fold routing, each model's means on its held-out fold of the
  /// training split: [M][K]; empty for other routings.
  std::vector<std::vector<double>> evaluateValidation();

  int64_t numModels() const { return m; }
  int64_t paramCount() const { return p; }
  /// Q: the elements of one model's buffers (running statistics).
  int64_t bufferCount() const { return q; }
  /// Train steps taken so far.
  int64_t globalStep() const { return stepCount; }
  /// Samples (rows) the train steps took so far, over every epoch.
  int64_t samplesTrained() const { return totalSamples; }
  /// Whether x holds token ids (the sequence path).
  bool takesTokens() const { return trainSeq != nullptr; }
  /// The model's float type (the artifact's dtype).
  DType dtype() const { return steps->dtype(); }
  /// params [M, P] and optimizer state [S, M, P], row-major, as T (float
  /// for an f32 artifact, double for f64; RuntimeError otherwise).
  template <typename T = float> const T *params() const {
    return steps->params().as<T>();
  }
  template <typename T = float> T *params() { return steps->params().as<T>(); }
  template <typename T = float> const T *state() const {
    return steps->state().as<T>();
  }
  /// buffers [M, Q] (running statistics), row-major, as T.
  template <typename T = float> const T *buffers() const {
    return steps->buffers().as<T>();
  }
  /// Where the steps run: "cpu", or the GPU's name.
  std::string deviceName() const { return steps->deviceName(); }
  /// Copy of model `model`'s params row (exact for either dtype).
  std::vector<double> modelParams(int64_t model) const;
  /// Copy of model `model`'s buffers row.
  std::vector<double> modelBuffers(int64_t model) const;
  /// Model `model`'s state dict: its parameters and buffers (not a loss
  /// scale's), each under its spec name and shape, pointing into the
  /// trainer's buffers (valid until the next step).
  std::vector<NamedTensor> modelStateDict(int64_t model) const;
  /// `out` of the last train step: [M][K] (NaN before the first step).
  std::vector<std::vector<double>> lastTrainOutputs() const;
  /// Whether model `model`'s loss or gradients were ever NaN/inf.
  bool diverged(int64_t model) const { return status.diverged(model); }
  /// Per model, the train step (1-based) whose loss or gradients were not
  /// finite, or 0. From that step on the model is frozen: the steps leave
  /// its parameters and state as they were after the step before, and the
  /// other models train on unchanged (docs/abi.md, version 6).
  const std::vector<int64_t> &divergedSteps() const {
    return status.divergedSteps();
  }
  /// Per model, the step at which run()'s early stopping or successive
  /// halving stopped it, or 0. A stopped model is frozen like a diverged
  /// one; stopReasons() says which policy stopped it.
  const std::vector<int64_t> &stoppedSteps() const {
    return status.stoppedSteps();
  }
  const std::vector<std::string> &stopReasons() const {
    return status.stopReasons();
  }

private:
  /// The steps' buffers and the running state; the constructors' shared
  /// part (after the data are checked).
  void setUp();
  /// The steps of epoch `epoch`: batches of a permutation, or for token
  /// sequences the manifest's length batching.
  std::unique_ptr<EpochBatches> makeEpochBatches(uint32_t epoch) const;
  /// Steps of an epoch, for the progress meter (the current epoch's, for
  /// sequences, whose step count changes a little between epochs).
  int64_t stepsPerEpoch() const;
  /// The test split's size and means (either kind of data).
  int64_t testCount() const;
  std::vector<std::vector<double>> evaluateTest();
  /// The manifest's batching with `seed` as its shuffle seed.
  BatchingOptions batchingOptions(uint64_t seed) const;
  /// Copies samples `indices[0, b)` of `data` into x as a [b, T] block of
  /// token ids that every model shares (T the longest row, or `width`
  /// if larger: a fixed-shape plan's; shorter rows padded with 0), and
  /// their labels into every model's y; for next-token targets, x's rows
  /// are the samples but their last token and y [M, b, T] the samples but
  /// their first.
  void loadTokenBatch(const SequenceDataset &data, const int64_t *indices,
                      int64_t b, int64_t width);
  /// Throws unless `data` fits the manifest (TrainerSequences.cpp).
  void checkSequences(const SequenceDataset &data) const;
  /// The steps an evaluation of `data` takes (the manifest's batching, a
  /// fixed order), and the evaluation on such a plan.
  std::unique_ptr<EpochBatches>
  planEvaluation(const SequenceDataset &data) const;
  std::vector<std::vector<double>> evaluatePlanned(const SequenceDataset &data,
                                                   const EpochBatches &plan);
  /// Whether the target is the input's next tokens (a language model).
  bool nextTokens() const;
  /// The length of the row of x each sample gives: its length, one less
  /// for a language model (which reads all of a sample but the last).
  std::vector<int64_t> rowLengths(const SequenceDataset &data) const;
  /// At an epoch boundary, moves the cursor to the next epoch's first
  /// step (its batches made, the running sums reset).
  void startEpochIfDue();
  /// Whether the data-order cursor sits between two epochs.
  bool atEpochBoundary() const;
  /// Epochs whose every batch has been taken.
  int64_t completedEpochs() const;
  /// Writes checkpoint() to outDir, with the current length of `metrics`.
  void writeCheckpoint(const std::string &metricsPath) const;
  /// Writes every model's parameters as outDir/models/model-<i>.pt.
  void writeStateDicts() const;
  /// Whether `model` takes part in train steps (not diverged or stopped).
  bool training(int64_t model) const { return status.training(model); }
  // The parts of run() (TrainLoop.cpp).
  struct RunContext;
  struct EpochMeans {
    std::vector<std::vector<double>> train, test, validation;
  };
  /// Opens metrics.jsonl: resumes the checkpointed run, or starts anew.
  MetricsLog startRun();
  void trainEpoch(const RunContext &run, int64_t epoch, int64_t firstStep);
  void afterStepWithinEpoch(const RunContext &run, int64_t epoch, int64_t step);
  EpochMeans finishEpoch(const RunContext &run, int64_t epoch);
  /// Whether a model of the sweep still trains (the run goes on).
  bool sweepStillTrains() const;
  /// Whether successive halving stops models at this step.
  bool halvingDue() const;
  /// Whether the run has taken options.maxSteps steps.
  bool stepLimitReached() const;
  /// The lowest running train loss of the models that did not diverge.
  double bestRunningLoss() const;
  /// The whole sweep's status (every rank's models'), `what` naming the
  /// moment for the error if a rank is lost; notes whether any model of
  /// the sweep still trains.
  ModelStatus sweepStatus(const std::string &what);
  /// The leaderboard of the whole sweep on these sweep-wide means.
  Leaderboard sweepLeaderboard(const RunContext &run,
                               const std::vector<std::vector<double>> &train,
                               const std::vector<std::vector<double>> &test,
                               const std::vector<std::vector<double>> &held);
  /// The checkpoint a resumed run starts from: outDir's, or across ranks
  /// the newest step that every rank has a checkpoint of.
  RunCheckpoint readResumeCheckpoint();
  /// The path of this rank's checkpoint in `dir`.
  std::string checkpointPath(const std::string &dir) const;
  /// Applies early stopping and, when `halve`, successive halving to the
  /// validation means `held` ([N][K], the whole sweep's); reports each
  /// stopped model.
  void applyStopping(const std::vector<std::vector<double>> &held, bool halve,
                     ProgressMeter &progress);
  /// Hands an evaluation to options.onEvaluation and stops the models it
  /// names; reports each.
  void reportEvaluation(Evaluation evaluation, ProgressMeter &progress);
  /// After a step: when options.interrupted says so, writes the checkpoint
  /// and throws RunInterrupted.
  void stopIfInterrupted(const RunContext &run);
  /// Takes the next batch of the data order and runs one train step.
  void trainNextBatch();
  /// Copies samples `indices[0, b)` of `data` into every model's x, y slice.
  void loadBatch(const Dataset &data, const int64_t *indices, int64_t b);
  /// Sample `sample`'s target into row `row` ([M * b]) of the loaded y: its
  /// class index, or its targetWidth values.
  void storeTarget(const Dataset &data, int64_t sample, int64_t row);
  /// Each model's training samples at `positions` (the batch starting at
  /// position `first` of this epoch), each image augmented with the
  /// model's own draw (Augment.h).
  void loadAugmentedBatch(const Dataset &data, const int64_t *positions,
                          int64_t b, int64_t first);
  /// Copies, for every model, the samples `sampleOf(model, positions[j])`
  /// of `data` into its x, y slice (routed data: each model its own).
  template <typename SampleOf>
  void loadRoutedBatch(const Dataset &data, const int64_t *positions, int64_t b,
                       SampleOf sampleOf);
  /// Runs one train step on the loaded batch of `b` samples (each model's
  /// step number, or 0 if it is frozen) and records its outputs.
  void trainOnLoadedBatch(int64_t b);
  /// Counts the next train step and sets each model's step number for it
  /// (0 for a frozen model, which the step leaves as it is).
  AlignedBuffer<double> &startStep();
  /// Across ranks of data (TrainerDataShares.cpp): one train step of a
  /// step of `stepSamples` samples weighing `stepWeight` (samples, or real
  /// target tokens), of which this rank loaded `count`.
  void trainOnShare(int64_t count, int64_t stepSamples, int64_t stepWeight);
  /// Sums this rank's part of the step (its gradients and outputs times
  /// `fraction`, its share of the step's weight; rank 0's buffers) with
  /// the other ranks': the gradients become the step's mean.
  template <typename T> void sumShareAcrossRanks(double fraction);
  /// After the sum: each model's outputs (the step's means) and
  /// divergence, as trainOnLoadedBatch records them.
  void recordSummedOutputs(const double *means, double weight);
  /// What a step of samples `indices[0, b)` weighs in the means: b, or
  /// for next-token targets its real target tokens.
  int64_t stepWeight(const int64_t *indices, int64_t b) const;
  /// Across ranks of data with a --target=cuda artifact: the sums on the
  /// GPUs (NCCL), or a warning that they go through the host.
  void joinDeviceSums();
  /// Per-model means of every output over the samples of `plan`, each
  /// step loaded by `load(step, positions, b)`: [M][K]. Across ranks of
  /// data, the ranks share the steps and sum what they found.
  std::vector<std::vector<double>> evaluateBatches(
      const EpochBatches &plan,
      const std::function<void(int64_t, const int64_t *, int64_t)> &load);
  /// Running means of the current epoch: [M][outputs].
  std::vector<std::vector<double>> runningMeans() const;
  /// The reported outputs of each model ([M][outputs]) from [M*K] sums of
  /// summable columns (OutputColumns) weighing `weight` in all.
  std::vector<std::vector<double>> reportMeans(const std::vector<double> &sums,
                                               int64_t weight) const;

  const Artifact &artifact;
  const Manifest &manifest;
  /// The data: float features, or token sequences (one pair is null).
  const Dataset *trainData = nullptr;
  const Dataset *testData = nullptr;
  const SequenceDataset *trainSeq = nullptr;
  const SequenceDataset *testSeq = nullptr;
  /// The training sequences' lengths, which the batching plans with.
  std::vector<int64_t> trainLengths;
  /// A given plan of every epoch's steps (useStepPlan); empty: plan each
  /// epoch with the manifest's batching.
  std::vector<LengthGroup> stepPlan;
  /// The test split's evaluation plan, made at its first evaluation.
  std::unique_ptr<EpochBatches> testPlan;
  TrainOptions options;
  /// Which training samples each model sees (shared, k-fold, bootstrap).
  DataRouting routing;
  int64_t m, p, q, s, k, f, batch;
  /// The buffers and the artifact's steps on them (made by setUp).
  std::optional<StepRunner> steps;

  // Data-order cursor: epoch (0-based) and next batch within it.
  std::unique_ptr<EpochBatches> epochBatches;
  uint32_t epochIndex = 0;
  int64_t batchIndex = 0;
  /// One augmented image (loadAugmentedBatch).
  std::vector<float> augmentScratch;
  int64_t stepCount = 0;
  int64_t totalSamples = 0;

  /// Per step, without allocating: the samples of a shared batch.
  std::vector<int64_t> batchSamples;
  /// [M*K]: each step's outputs weighted by loadedWeight, and the sum of
  /// the weights.
  std::vector<double> runningSums;
  int64_t runningWeight = 0;
  /// How the K columns of `out` make the reported outputs.
  std::optional<OutputColumns> columns;
  /// What the loaded step's outputs (means over it) weigh in the means of
  /// an epoch or an evaluation: its samples, or its real target tokens for
  /// next-token targets (a per-token loss stays per token over the epoch).
  int64_t loadedWeight = 0;
  std::vector<double> lastTrainOut; // [M*K], copied since eval reuses out
  /// Which models still train: divergence and the stopping policies.
  ModelStatus status;
  /// The sweep these models belong to: the identity in one process, the
  /// other ranks' models across processes.
  std::shared_ptr<SweepRanks> sweepRanks;
  /// Whether a model of the whole sweep still trains, as of the last
  /// gathered status (every rank sees the same).
  bool sweepTraining = true;
  /// Models that diverged in the last train step, for run() to report.
  std::vector<int64_t> newlyDiverged;
  /// Across ranks of data, per step without allocating: what the ranks
  /// sum, the step's sums widened to double, and the buffers before it.
  FloatBuffer shareSums;
  std::vector<double> summed, buffersBefore;
  /// Across ranks of data on GPUs: the sums there (null: on the host).
  std::unique_ptr<DeviceCollectives> deviceSums;
};

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_TRAINER_H
