//===- TrainerSequences.cpp - the trainer on token sequences --------------===//
//
// An artifact whose input is token ids (ABI version 8) trains on a
// SequenceDataset. Each epoch's steps come from the manifest's batching
// (LengthBatching.h: dynamic, fixed, group-by-length or fixed-shape), keyed
// by the shuffle seed and the epoch, so a checkpoint's cursor (epoch, step)
// finds its place again. A step's x is one [B, T] block of token ids padded
// with the pad token 0, which every model reads (stride 0 along the model
// dimension); T is the step's padded length, so both B and T change from
// step to step, and the workspace grows to what the largest step needs.
//
// A language model (a next-token target, ABI version 9) reads samples
// framed as [begin, tokens..., end] (frameForNextTokens): each row of x is
// a sample without its last token and the same row of y the sample
// without its first, so position t predicts token t + 1; a row is one
// token shorter than its sample, and a step's outputs weigh as many as its
// real target tokens.
//
//===----------------------------------------------------------------------===//
#include "mbt/runtime/Trainer.h"

#include "mbt/runtime/ByteTokenizer.h"
#include "mbt/runtime/Error.h"
#include "mbt/runtime/StepPlan.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <limits>

namespace mbt {
namespace runtime {

Trainer::Trainer(const Artifact &artifact, const SequenceDataset &train,
                 const SequenceDataset &test, TrainOptions options)
    : artifact(artifact), manifest(artifact.manifest()), trainSeq(&train),
      testSeq(&test), options(std::move(options)),
      routing(artifact.manifest(), train.count()) {
  if (manifest.inputKind != Manifest::InputKind::Tokens)
    throw RuntimeError(fmt::format("artifact '{}' takes {} float features "
                                   "per sample, not the token sequences of "
                                   "'{}'",
                                   artifact.path(), manifest.features,
                                   train.name));
  checkSequences(train);
  checkSequences(test);
  if (train.count() < 1)
    throw RuntimeError(fmt::format("training set '{}' is empty", train.name));
  trainLengths = rowLengths(train);
  setUp();
}

void Trainer::checkSequences(const SequenceDataset &data) const {
  data.validate();
  if (data.vocabSize > manifest.vocab)
    throw RuntimeError(fmt::format("data set '{}' has token ids up to {} but "
                                   "input '{}' of artifact '{}' has a "
                                   "vocabulary of {}",
                                   data.name, data.vocabSize - 1,
                                   manifest.inputName, artifact.path(),
                                   manifest.vocab));
  if (nextTokens()) {
    // Each sample gives a row one token shorter: at least one target.
    for (int64_t i = 0; i < data.count(); ++i)
      if (data.length(i) < 2)
        throw RuntimeError(fmt::format(
            "data set '{}': sample {} has {} token(s); a language model's "
            "sample needs at least 2 (it reads all but the last and "
            "predicts all but the first; frameForNextTokens adds the begin "
            "and end tokens)",
            data.name, i, data.length(i)));
    return;
  }
  if (!data.hasLabels() && data.count() > 0)
    throw RuntimeError(fmt::format("data set '{}' has no labels for target "
                                   "'{}'",
                                   data.name, manifest.targetName));
  for (int64_t i = 0; i < data.count(); ++i)
    if (data.labels[i] >= manifest.classes)
      throw RuntimeError(fmt::format("data set '{}': label {} of sample {} "
                                     "is outside the {} classes of target "
                                     "'{}'",
                                     data.name, data.labels[i], i,
                                     manifest.classes, manifest.targetName));
}

bool Trainer::nextTokens() const {
  return manifest.targetKind == Manifest::TargetKind::NextTokens;
}

std::vector<int64_t> Trainer::rowLengths(const SequenceDataset &data) const {
  std::vector<int64_t> lengths = data.lengths();
  if (nextTokens())
    for (int64_t &length : lengths)
      --length;
  return lengths;
}

BatchingOptions Trainer::batchingOptions(uint64_t seed) const {
  const DataSpec::SequenceBatching &spec = manifest.data.batching;
  BatchingOptions options;
  if (!parseBatchingStrategy(spec.strategy, options.strategy))
    throw RuntimeError(fmt::format("unknown batching '{}'", spec.strategy));
  options.tokenBudget = spec.tokenBudget;
  options.window = spec.window;
  options.batchSize = manifest.data.batch;
  options.seed = seed;
  return options;
}

/// The steps of `plan` as EpochBatches: samples in step order, each step
/// padded to its planned length.
static std::unique_ptr<EpochBatches>
toEpochBatches(const std::vector<LengthGroup> &plan) {
  std::vector<int64_t> order, offsets{0}, widths;
  for (const LengthGroup &step : plan) {
    order.insert(order.end(), step.samples.begin(), step.samples.end());
    offsets.push_back(static_cast<int64_t>(order.size()));
    widths.push_back(step.paddedLength);
  }
  return std::make_unique<EpochBatches>(std::move(order), std::move(offsets),
                                        std::move(widths));
}

void Trainer::useStepPlan(std::vector<LengthGroup> steps) {
  if (!trainSeq)
    throw RuntimeError(fmt::format("a plan of steps is for token sequences; "
                                   "artifact '{}' takes float features",
                                   artifact.path()));
  if (stepCount > 0 || epochBatches)
    throw RuntimeError("a plan of steps must be given before training starts");
  checkStepPlan(steps, trainLengths, trainSeq->name);
  stepPlan = std::move(steps);
}

std::unique_ptr<EpochBatches> Trainer::makeEpochBatches(uint32_t epoch) const {
  if (!trainSeq)
    return std::make_unique<EpochBatches>(routing.trainSize(), batch,
                                          manifest.data.shuffleSeed, epoch);
  if (!stepPlan.empty())
    return toEpochBatches(stepPlan);
  return toEpochBatches(planEpoch(
      trainLengths, batchingOptions(manifest.data.shuffleSeed), epoch));
}

int64_t Trainer::stepsPerEpoch() const {
  if (!trainSeq)
    return (routing.trainSize() + batch - 1) / batch;
  if (epochBatches)
    return epochBatches->numBatches();
  return makeEpochBatches(0)->numBatches();
}

int64_t Trainer::testCount() const {
  return testSeq ? testSeq->count() : testData->count;
}

std::vector<std::vector<double>> Trainer::evaluateTest() {
  if (!testSeq)
    return evaluate(*testData);
  // The test split was checked by the constructor; its plan depends on the
  // data and the manifest only, so it is made once.
  if (!testPlan)
    testPlan = planEvaluation(*testSeq);
  return evaluatePlanned(*testSeq, *testPlan);
}

/// Row j of a [rows, width] block: `length` tokens from `tokens`, then
/// padding.
static void putRow(int32_t *block, int64_t j, int64_t width,
                   const int32_t *tokens, int64_t length) {
  std::memcpy(block + j * width, tokens,
              sizeof(int32_t) * static_cast<size_t>(length));
  std::fill(block + j * width + length, block + (j + 1) * width, kPadToken);
}

void Trainer::loadTokenBatch(const SequenceDataset &data,
                             const int64_t *indices, int64_t b, int64_t width) {
  // A language model's row is its sample but the last token (shift 1).
  int64_t shift = nextTokens() ? 1 : 0;
  for (int64_t j = 0; j < b; ++j)
    width = std::max(width, data.length(indices[j]) - shift);
  int32_t *x = steps->tokenBlock(b, width);
  int64_t yPerModel = nextTokens() ? b * width : b;
  int32_t *y0 = steps->labels(yPerModel);
  loadedWeight = nextTokens() ? 0 : b;
  for (int64_t j = 0; j < b; ++j) {
    const int32_t *sample = data.sample(indices[j]);
    int64_t length = data.length(indices[j]) - shift;
    putRow(x, j, width, sample, length);
    if (nextTokens()) {
      putRow(y0, j, width, sample + 1, length);
      // Targets that are the pad token add nothing to the loss.
      loadedWeight +=
          length - std::count(sample + 1, sample + 1 + length, kPadToken);
    } else {
      y0[j] = data.labels[indices[j]];
    }
  }
  for (int64_t model = 1; model < m; ++model)
    std::memcpy(y0 + model * yPerModel, y0,
                sizeof(int32_t) * static_cast<size_t>(yPerModel));
  steps->setXShared(true);
}

int64_t Trainer::stepWeight(const int64_t *indices, int64_t b) const {
  if (!trainSeq || !nextTokens())
    return b;
  // As loadTokenBatch counts them: the targets that are not padding.
  int64_t weight = 0;
  for (int64_t j = 0; j < b; ++j) {
    const int32_t *sample = trainSeq->sample(indices[j]);
    int64_t length = trainSeq->length(indices[j]) - 1;
    weight += length - std::count(sample + 1, sample + 1 + length, kPadToken);
  }
  return weight;
}

std::vector<std::vector<double>>
Trainer::evaluate(const SequenceDataset &data) {
  if (!trainSeq)
    throw RuntimeError(fmt::format("artifact '{}' takes float features; it "
                                   "cannot evaluate the token sequences of "
                                   "'{}'",
                                   artifact.path(), data.name));
  checkSequences(data);
  return evaluatePlanned(data, *planEvaluation(data));
}

std::unique_ptr<EpochBatches>
Trainer::planEvaluation(const SequenceDataset &data) const {
  // Evaluation groups the samples as training does, in a fixed order; the
  // means weigh each step by its samples (or real target tokens), so the
  // grouping does not matter.
  return toEpochBatches(planEpoch(rowLengths(data), batchingOptions(0), 0));
}

std::vector<std::vector<double>>
Trainer::evaluatePlanned(const SequenceDataset &data,
                         const EpochBatches &plan) {
  return evaluateBatches(
      plan, [&](int64_t step, const int64_t *indices, int64_t b) {
        loadTokenBatch(data, indices, b, plan.batchWidth(step));
      });
}

} // namespace runtime
} // namespace mbt
