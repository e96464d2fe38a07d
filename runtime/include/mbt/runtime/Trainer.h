//===- Trainer.h - Train and evaluate a model batch -------------*- C++ -*-===//
//
// Owns every buffer of docs/abi.md and drives an Artifact's train and eval
// steps over a Dataset. All models see the same batches (shared data order
// from Sampler.h). run() is the full job (epochs, evaluation, metrics.jsonl,
// leaderboard); runSteps() trains an exact number of steps with no I/O, for
// equivalence tests that compare parameters. A --target=cuda artifact's
// buffers are mirrored on the GPU (DeviceMemory.h): each step uploads the
// batch and downloads the outputs; parameters come back when read.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_TRAINER_H
#define MBT_RUNTIME_TRAINER_H

#include "mbt/runtime/AlignedBuffer.h"
#include "mbt/runtime/Artifact.h"
#include "mbt/runtime/Checkpoint.h"
#include "mbt/runtime/DataRouting.h"
#include "mbt/runtime/Dataset.h"
#include "mbt/runtime/DeviceMemory.h"
#include "mbt/runtime/FloatBuffer.h"
#include "mbt/runtime/Leaderboard.h"
#include "mbt/runtime/LengthBatching.h"
#include "mbt/runtime/MetricsLog.h"
#include "mbt/runtime/ModelStatus.h"
#include "mbt/runtime/Progress.h"
#include "mbt/runtime/Sampler.h"
#include "mbt/runtime/SequenceDataset.h"
#include "mbt/runtime/TrainOptions.h"
#include "mbt/runtime/Workspace.h"

#include <functional>
#include <iostream>
#include <map>
#include <memory>
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
  DType dtype() const { return paramsBuf.dtype(); }
  /// params [M, P] and optimizer state [S, M, P], row-major, as T (float
  /// for an f32 artifact, double for f64; RuntimeError otherwise).
  template <typename T = float> const T *params() const {
    syncFromDevice();
    return paramsBuf.as<T>();
  }
  template <typename T = float> T *params() {
    syncFromDevice();
    return paramsBuf.as<T>();
  }
  template <typename T = float> const T *state() const {
    syncFromDevice();
    return stateBuf.as<T>();
  }
  /// buffers [M, Q] (running statistics), row-major, as T.
  template <typename T = float> const T *buffers() const {
    syncFromDevice();
    return buffersBuf.as<T>();
  }
  /// Where the steps run: "cpu", or the GPU's name.
  std::string deviceName() const;
  /// Copy of model `model`'s params row (exact for either dtype).
  std::vector<double> modelParams(int64_t model) const;
  /// Copy of model `model`'s buffers row.
  std::vector<double> modelBuffers(int64_t model) const;
  /// Model `model`'s parameters as a PyTorch state dict file (the bytes of
  /// a .pt: TorchStateDict.h), each under its spec name and shape.
  std::string modelStateDict(int64_t model) const;
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
  /// The buffers and the initial parameters; the constructors' shared part
  /// (after the data are checked).
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
  /// Whether successive halving stops models at this step.
  bool halvingDue() const;
  /// The lowest running train loss of the models that did not diverge.
  double bestRunningLoss() const;
  /// Applies early stopping and, when `halve`, successive halving to the
  /// validation means `held` ([M][K]); reports each stopped model.
  void applyStopping(const std::vector<std::vector<double>> &held, bool halve,
                     ProgressMeter &progress);
  /// Writes `board` as outDir/leaderboard.json and renders report.html:
  /// at the end, after every epoch and at every --eval-every evaluation,
  /// so both files follow the run while it trains.
  void publish(const std::string &metricsPath, const Leaderboard &board) const;
  /// metrics.jsonl lines of every model's `split` means at this step.
  std::string metricsLines(int64_t epoch, const std::string &split,
                           const std::vector<std::vector<double>> &means) const;
  /// Takes the next batch of the data order and runs one train step.
  void trainNextBatch();
  /// Copies samples `indices[0, b)` of `data` into every model's x, y slice.
  void loadBatch(const Dataset &data, const int64_t *indices, int64_t b);
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
  void trainOnLoadedBatch(int64_t b);
  /// The descriptor of x for a loaded batch of `b` samples: dense, or with
  /// stride 0 along the model dimension when every model shares the batch.
  template <typename T> MemRef<T, 3> xDescriptor(T *base, int64_t b);
  /// x of a loaded batch of token ids: [M, b, xWidth], stride 0 over M.
  MemRef<int32_t, 3> tokenDescriptor(int32_t *base, int64_t b);
  /// x's descriptor for element type X (T, or int32_t for token ids).
  template <typename T, typename X> MemRef<X, 3> xFor(int64_t b);
  /// Sizes the workspace for the train and eval steps at the largest batch.
  template <typename T> void reserveWorkspace();
  /// For a CUDA artifact: the device copies of every buffer (the workspace
  /// of onDevice.workspaceBytes), and the initial upload.
  void mirrorOnDevice();
  /// Uploads what a step reads that changed (the batch; the step numbers
  /// when `train`).
  void uploadStepInputs(int64_t b, bool train);
  /// Runs `issue` (a train step's device work) directly, or captured as a
  /// graph and replayed (deviceGraphs): a batch shape's first step runs
  /// directly (it loads the kernels), its second is captured, later ones
  /// replay that graph. A failed capture turns graphs off, with a warning.
  void runOnDevice(const std::function<void()> &issue, int64_t b);
  /// Brings params and state back from the device, if they changed there.
  void syncFromDevice() const;
  /// The workspace descriptor the steps get: the host's, or the device's.
  WorkspaceRef stepWorkspace();
  /// The artifact's train step on the loaded batch, with buffers of T:
  /// the device's uploads and download around issueTrainStep.
  /// X is x's element type, YRank y's rank (3 for next tokens).
  template <typename T, typename X, int YRank> void callTrainStep(int64_t b);
  /// The call itself, on the buffers (the host's or the device's).
  template <typename T, typename X, int YRank> void issueTrainStep(int64_t b);
  /// The artifact's eval step on the loaded batch, with buffers of T.
  template <typename T, typename X, int YRank> void callEvalStep(int64_t b);
  /// Runs the train (eval) step with the element types of this artifact.
  void dispatchTrainStep(int64_t b);
  void dispatchEvalStep(int64_t b);
  /// For token ids: grows the workspace to what this step's shape needs.
  template <typename T, int YRank>
  void reserveTokenWorkspace(MemRef<int32_t, 3> &x, int64_t b, bool train);
  /// y's descriptor for a loaded batch of b samples: [M, b] class indices,
  /// or [M, b, xWidth] next tokens (YRank 3).
  template <int YRank> MemRef<int32_t, YRank> yFor(int64_t b);
  /// Per-model means of every output over the samples of `plan`, each
  /// step loaded by `load(positions, b)`: [M][K].
  std::vector<std::vector<double>>
  evaluateBatches(const EpochBatches &plan,
                  const std::function<void(const int64_t *, int64_t)> &load);
  /// Throws if a kernel reported a malformed call during the last step.
  void checkKernels(const char *stepName);
  /// Running means of the current epoch: [M][K].
  std::vector<std::vector<double>> runningMeans() const;
  Leaderboard buildLeaderboard(
      const std::vector<std::vector<double>> &trainMeans,
      const std::vector<std::vector<double>> &testMeans,
      const std::vector<std::vector<double>> &validationMeans) const;

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
  int64_t m, p, q, s, h, k, f, batch;

  // Of the model's float type (docs/abi.md).
  // params and state are refreshed from the device by const readers.
  mutable FloatBuffer paramsBuf, buffersBuf, stateBuf;
  FloatBuffer xBuf, outBuf;
  // Per-model scalars are double, as torch::optim computes them.
  AlignedBuffer<double> hyperBuf, stepBuf;
  AlignedBuffer<int32_t> yBuf;
  /// Token ids of the loaded batch, [b, xWidth] (sequences; grown as
  /// steps need).
  AlignedBuffer<int32_t> tokenBuf;
  int64_t xWidth = 0;
  /// The steps' temporaries (docs/abi.md, "The workspace"): allocated once,
  /// for the largest batch, shared by train and eval steps.
  Workspace workspace;
  /// A CUDA artifact's device copies (null pointers for a CPU artifact).
  struct DevicePointers {
    void *params = nullptr, *buffers = nullptr, *state = nullptr,
         *hyper = nullptr, *step = nullptr, *x = nullptr, *y = nullptr,
         *out = nullptr, *workspace = nullptr;
    int64_t workspaceBytes = 0;
  };
  std::unique_ptr<DeviceMemory> device;
  DevicePointers onDevice;
  /// Captured train steps by batch shape (size, x shared).
  struct StepGraph {
    int64_t uses = 0;
    void *graph = nullptr;
  };
  std::map<std::pair<int64_t, bool>, StepGraph> trainGraphs;
  bool useGraphs = false;
  /// Whether params and state changed on the device since the last sync.
  mutable bool hostStale = false;
  /// Whether the loaded batch is one batch every model shares (x holds
  /// model 0's slice only).
  bool xShared = false;

  // Data-order cursor: epoch (0-based) and next batch within it.
  std::unique_ptr<EpochBatches> epochBatches;
  uint32_t epochIndex = 0;
  int64_t batchIndex = 0;
  /// One augmented image (loadAugmentedBatch).
  std::vector<float> augmentScratch;
  int64_t stepCount = 0;
  int64_t totalSamples = 0;

  /// Per step, without allocating: which models are frozen (their
  /// matmuls are skipped) and the samples of a shared batch.
  std::vector<uint8_t> idleModels;
  std::vector<int64_t> batchSamples;
  /// [M*K]: each step's outputs weighted by loadedWeight, and the sum of
  /// the weights.
  std::vector<double> runningSums;
  int64_t runningWeight = 0;
  /// What the loaded step's outputs (means over it) weigh in the means of
  /// an epoch or an evaluation: its samples, or its real target tokens for
  /// next-token targets (a per-token loss stays per token over the epoch).
  int64_t loadedWeight = 0;
  std::vector<double> lastTrainOut; // [M*K], copied since eval reuses out
  /// Which models still train: divergence and the stopping policies.
  ModelStatus status;
  /// Models that diverged in the last train step, for run() to report.
  std::vector<int64_t> newlyDiverged;
};

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_TRAINER_H
