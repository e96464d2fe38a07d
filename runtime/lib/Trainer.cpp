//===- Trainer.cpp - Batches, train steps and evaluation ------------------===//
//
// Loads each batch into the StepRunner's x and y (one batch every model
// shares, or each model its own: routed or augmented), runs the steps and
// keeps the running means. The epoch loop lives in TrainLoop.cpp, the
// metrics and leaderboard it writes in RunResults.cpp.
//
//===----------------------------------------------------------------------===//

#include "mbt/runtime/Trainer.h"
#include "mbt/runtime/Augment.h"

#include "mbt/runtime/Error.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace mbt {
namespace runtime {

namespace {
void checkData(const Dataset &data, const Manifest &manifest,
               const std::string &artifactPath) {
  if (data.numFeatures != manifest.features)
    throw RuntimeError(fmt::format(
        "data set '{}' has {} features per sample but artifact '{}' expects "
        "{} for input '{}'",
        data.name, data.numFeatures, artifactPath, manifest.features,
        manifest.inputName));
  bool values = manifest.targetKind == Manifest::TargetKind::Values;
  if (values && data.targetWidth != manifest.targetWidth)
    throw RuntimeError(fmt::format(
        "data set '{}' has {} target values per sample but artifact '{}' "
        "expects {} for target '{}'",
        data.name, data.targetWidth, artifactPath, manifest.targetWidth,
        manifest.targetName));
  if (!values && data.regression())
    throw RuntimeError(fmt::format(
        "data set '{}' has target values, but target '{}' of artifact '{}' "
        "takes class indices",
        data.name, manifest.targetName, artifactPath));
  int64_t targetCount =
      values ? static_cast<int64_t>(data.targets.size()) / manifest.targetWidth
             : static_cast<int64_t>(data.y.size());
  if (targetCount != data.count ||
      static_cast<int64_t>(data.storedFeatures()) !=
          checkedMul(data.count, data.numFeatures, "data set"))
    throw RuntimeError(fmt::format(
        "data set '{}' is inconsistent: its arrays do not hold {} samples",
        data.name, data.count));
  for (int64_t i = 0; i < data.count && !values; ++i)
    if (data.y[i] < 0 || data.y[i] >= manifest.classes)
      throw RuntimeError(fmt::format("data set '{}': label {} of sample {} "
                                     "is outside the {} classes of target "
                                     "'{}'",
                                     data.name, data.y[i], i, manifest.classes,
                                     manifest.targetName));
}
} // namespace

Trainer::Trainer(const Artifact &artifact, const Dataset &train,
                 const Dataset &test, TrainOptions options)
    : artifact(artifact), manifest(artifact.manifest()), trainData(&train),
      testData(&test), options(std::move(options)),
      routing(artifact.manifest(), train.count) {
  if (manifest.inputKind == Manifest::InputKind::Tokens)
    throw RuntimeError(fmt::format("artifact '{}' takes token ids: train it "
                                   "on token sequences, not on data set '{}'",
                                   artifact.path(), train.name));
  checkData(train, manifest, artifact.path());
  checkData(test, manifest, artifact.path());
  if (train.count < 1)
    throw RuntimeError(fmt::format("training set '{}' is empty", train.name));
  setUp();
}

void Trainer::setUp() {
  m = manifest.models;
  p = manifest.paramCount;
  q = manifest.bufferCount;
  s = manifest.numSlots();
  k = manifest.numColumns();
  f = manifest.features;
  batch = manifest.data.batch;
  steps.emplace(artifact, options);
  batchSamples.assign(trainSeq ? 0 : batch, 0);
  columns.emplace(manifest);
  runningSums.assign(m * k, 0.0);
  lastTrainOut.assign(m * k, std::numeric_limits<double>::quiet_NaN());
  status = ModelStatus(m);
  sweepRanks =
      options.ranks ? options.ranks : std::make_shared<SweepRanks>(manifest);
  if (sweepRanks->distributed() && options.onEvaluation)
    throw RuntimeError("an evaluation callback sees one process's models: "
                       "a run over several processes takes none");
  joinDeviceSums();
}

Trainer::~Trainer() = default;

void Trainer::loadBatch(const Dataset &data, const int64_t *indices,
                        int64_t b) {
  // Gather model 0's slice from the data; every model sees the same batch,
  // so x is passed with stride 0 along the model dimension (docs/abi.md)
  // and only y, which is small, is replicated.
  FloatBuffer &x = steps->x();
  for (int64_t j = 0; j < b; ++j)
    x.store(j * f, data.sample(indices[j]), f);
  for (int64_t model = 0; model < m; ++model)
    for (int64_t j = 0; j < b; ++j)
      storeTarget(data, indices[j], model * b + j);
  steps->setXShared(true);
  loadedWeight = b;
}

void Trainer::storeTarget(const Dataset &data, int64_t sample, int64_t row) {
  if (data.regression()) {
    int64_t width = data.targetWidth;
    steps->yValues().store(row * width, &data.targets[sample * width], width);
  } else {
    steps->y()[row] = data.y[sample];
  }
}

template <typename SampleOf>
void Trainer::loadRoutedBatch(const Dataset &data, const int64_t *positions,
                              int64_t b, SampleOf sampleOf) {
  FloatBuffer &x = steps->x();
  for (int64_t model = 0; model < m; ++model) {
    for (int64_t j = 0; j < b; ++j) {
      int64_t sample = sampleOf(model, positions[j]);
      x.store((model * b + j) * f, data.sample(sample), f);
      storeTarget(data, sample, model * b + j);
    }
  }
  steps->setXShared(false);
  loadedWeight = b;
}

void Trainer::loadAugmentedBatch(const Dataset &data, const int64_t *positions,
                                 int64_t b, int64_t first) {
  const std::vector<int64_t> &shape = manifest.inputShape;
  int64_t channels = shape.size() == 3 ? shape[0] : 1;
  int64_t height = shape[shape.size() - 2], width = shape.back();
  augmentScratch.resize(f);
  FloatBuffer &x = steps->x();
  for (int64_t model = 0; model < m; ++model) {
    for (int64_t j = 0; j < b; ++j) {
      int64_t sample = routing.trainSample(model, positions[j]);
      AugmentDraw draw =
          drawAugment(manifest.seeds[model], epochIndex, first + j,
                      manifest.data.crop, manifest.data.flip);
      augmentImage(data.sample(sample), augmentScratch.data(), channels, height,
                   width, manifest.data.crop, draw);
      x.store((model * b + j) * f, augmentScratch.data(), f);
      storeTarget(data, sample, model * b + j);
    }
  }
  steps->setXShared(false);
  loadedWeight = b;
}

void Trainer::trainOnLoadedBatch(int64_t b) {
  AlignedBuffer<double> &stepNumbers = startStep();
  steps->trainStep(b);
  const FloatBuffer &out = steps->outputs();

  newlyDiverged.clear();
  for (int64_t model = 0; model < m; ++model) {
    // A NaN loss says the model did not step: its loss or gradients were
    // not finite (or it was frozen already: diverged or stopped).
    if (stepNumbers[model] != 0.0 && !std::isfinite(out.get(model * k))) {
      status.markDiverged(model, stepCount);
      newlyDiverged.push_back(model);
    }
    double *row = &lastTrainOut[model * k];
    for (int64_t col = 0; col < k; ++col) {
      // A frozen model's outputs are not its own (its matmuls were
      // skipped): none are reported.
      row[col] = stepNumbers[model] != 0.0
                     ? out.get(model * k + col)
                     : std::numeric_limits<double>::quiet_NaN();
    }
    columns->toSummable(row);
    for (int64_t col = 0; col < k; ++col)
      runningSums[model * k + col] +=
          row[col] * static_cast<double>(loadedWeight);
  }
  runningWeight += loadedWeight;
  totalSamples += b;
}

AlignedBuffer<double> &Trainer::startStep() {
  ++stepCount;
  AlignedBuffer<double> &stepNumbers = steps->stepNumbers();
  // A frozen model gets step 0: the step leaves it as it is.
  for (int64_t model = 0; model < m; ++model)
    stepNumbers[model] = training(model) ? static_cast<double>(stepCount) : 0.0;
  return stepNumbers;
}

void Trainer::startEpochIfDue() {
  if (!atEpochBoundary())
    return;
  if (epochBatches)
    ++epochIndex;
  epochBatches = makeEpochBatches(epochIndex);
  batchIndex = 0;
  std::fill(runningSums.begin(), runningSums.end(), 0.0);
  runningWeight = 0;
}

void Trainer::trainNextBatch() {
  startEpochIfDue();
  int64_t b = epochBatches->batchLength(batchIndex);
  // Across ranks of data, this rank loads its share of the step.
  ModelSlice share = sweepRanks->shareOf(b);
  const int64_t *positions = epochBatches->batch(batchIndex) + share.first;
  int64_t n = share.count;
  if (trainSeq) {
    loadTokenBatch(*trainSeq, positions, n,
                   epochBatches->batchWidth(batchIndex));
  } else if (manifest.data.augments()) {
    loadAugmentedBatch(*trainData, positions, n,
                       batchIndex * batch + share.first);
  } else if (routing.shared()) {
    // Positions are samples, unless a validation split was carved out.
    for (int64_t j = 0; j < n; ++j)
      batchSamples[j] = routing.sharedSample(positions[j]);
    loadBatch(*trainData, batchSamples.data(), n);
  } else
    loadRoutedBatch(*trainData, positions, n, [&](int64_t model, int64_t pos) {
      return routing.trainSample(model, pos);
    });
  int64_t weight = sweepRanks->sharesData()
                       ? stepWeight(epochBatches->batch(batchIndex), b)
                       : 0;
  ++batchIndex;
  if (sweepRanks->sharesData())
    trainOnShare(n, b, weight);
  else
    trainOnLoadedBatch(b);
}

void Trainer::runSteps(int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    trainNextBatch();
}

std::vector<std::vector<double>> Trainer::evaluateBatches(
    const EpochBatches &plan,
    const std::function<void(int64_t, const int64_t *, int64_t)> &load) {
  // The weight of the samples seen last, after the sums.
  std::vector<double> sums(m * k + 1, 0.0), row(k);
  bool shared = sweepRanks->sharesData();
  int64_t first = shared ? sweepRanks->rank() : 0;
  int64_t stride = shared ? sweepRanks->ranks() : 1;
  for (int64_t step = first; step < plan.numBatches(); step += stride) {
    int64_t b = plan.batchLength(step);
    load(step, plan.batch(step), b);
    sums[m * k] += static_cast<double>(loadedWeight);
    steps->evalStep(b);
    for (int64_t model = 0; model < m; ++model) {
      for (int64_t col = 0; col < k; ++col)
        row[col] = steps->outputs().get(model * k + col);
      columns->toSummable(row.data());
      for (int64_t col = 0; col < k; ++col)
        sums[model * k + col] += row[col] * static_cast<double>(loadedWeight);
    }
  }
  if (shared)
    sweepRanks->sumAcrossRanks(sums.data(), sums.size(), "an evaluation");
  auto n = static_cast<int64_t>(sums[m * k]);
  sums.pop_back();
  return reportMeans(sums, n);
}

std::vector<std::vector<double>>
Trainer::reportMeans(const std::vector<double> &sums, int64_t weight) const {
  std::vector<std::vector<double>> reported(m);
  std::vector<double> means(k);
  for (int64_t model = 0; model < m; ++model) {
    for (int64_t col = 0; col < k; ++col)
      means[col] = weight ? sums[model * k + col] / static_cast<double>(weight)
                          : std::numeric_limits<double>::quiet_NaN();
    reported[model] = columns->report(means.data());
  }
  return reported;
}

/// Positions 0, 1, ..., n - 1 in batches of `batch`: the evaluation order.
static EpochBatches inOrder(int64_t n, int64_t batch) {
  std::vector<int64_t> order(n), offsets;
  for (int64_t i = 0; i < n; ++i)
    order[i] = i;
  for (int64_t start = 0; start < n; start += batch)
    offsets.push_back(start);
  offsets.push_back(n);
  return EpochBatches(std::move(order), std::move(offsets));
}

std::vector<std::vector<double>> Trainer::evaluate(const Dataset &data) {
  if (trainSeq)
    throw RuntimeError(fmt::format(
        "artifact '{}' takes token ids; it cannot evaluate data set '{}'",
        artifact.path(), data.name));
  checkData(data, manifest, artifact.path());
  return evaluateBatches(inOrder(data.count, batch),
                         [&](int64_t, const int64_t *indices, int64_t b) {
                           loadBatch(data, indices, b);
                         });
}

std::vector<std::vector<double>> Trainer::evaluateValidation() {
  if (!routing.hasValidation())
    return {};
  return evaluateBatches(inOrder(routing.validationSize(), batch),
                         [&](int64_t, const int64_t *positions, int64_t b) {
                           loadRoutedBatch(*trainData, positions, b,
                                           [&](int64_t model, int64_t pos) {
                                             return routing.validationSample(
                                                 model, pos);
                                           });
                         });
}

std::vector<std::vector<double>> Trainer::runningMeans() const {
  return reportMeans(runningSums, runningWeight);
}

namespace {
/// Row `model` of a [M, width] buffer, widened to double.
std::vector<double> rowOf(const FloatBuffer &buffer, int64_t model,
                          int64_t models, int64_t width) {
  if (model < 0 || model >= models)
    throw RuntimeError(
        fmt::format("model index {} out of range [0, {})", model, models));
  return buffer.load(model * width, width);
}
} // namespace

std::vector<double> Trainer::modelParams(int64_t model) const {
  return rowOf(steps->params(), model, m, p);
}

std::vector<double> Trainer::modelBuffers(int64_t model) const {
  return rowOf(steps->buffers(), model, m, q);
}

std::vector<std::vector<double>> Trainer::lastTrainOutputs() const {
  // One step's summable columns are its own means (weight 1).
  return reportMeans(lastTrainOut, 1);
}

} // namespace runtime
} // namespace mbt
