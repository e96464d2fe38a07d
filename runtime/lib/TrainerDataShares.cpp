//===- TrainerDataShares.cpp - A train step whose samples span the ranks --===//
//
// With its data across ranks (docs/distributed.md) every rank holds every
// model and loads its share of each step's samples (SweepRanks::shareOf).
// The step is the artifact's grad step on the share, one sum over the
// ranks, and the optimizer step on that sum:
//
//   grads = sum_r w_r g_r / W,   W = sum_r w_r,
//
// where g_r is the gradient of the mean loss over rank r's share and w_r
// its weight (its samples, or its real target tokens for a language
// model): the gradient of the mean loss over the whole step, normalized by
// the step's global count, as one process computes it (up to the order of
// the sums). The outputs are summed with the same weights. The buffers
// (batch norm's running statistics, computed on each rank's share, as DDP
// without SyncBatchNorm computes them) become rank 0's, as DDP's
// broadcast_buffers makes them. One all-reduce carries the three, so
// every rank ends the step with the same models.
//
//===----------------------------------------------------------------------===//

#include "mbt/runtime/Trainer.h"

#include "mbt/runtime/Error.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace mbt {
namespace runtime {

namespace {
/// Where each part lies in what the ranks sum: [M * P_t] weighted
/// gradients, [M * K] weighted outputs, the weight, [M * Q] buffers.
struct ShareSumLayout {
  int64_t grads, outputs, weight, buffers, size;
  ShareSumLayout(int64_t m, int64_t pt, int64_t k, int64_t q)
      : grads(0), outputs(m * pt), weight(m * pt + m * k),
        buffers(m * pt + m * k + 1), size(m * pt + m * k + 1 + m * q) {}
};
} // namespace

void Trainer::trainOnShare(int64_t count, int64_t stepSamples) {
  ++stepCount;
  AlignedBuffer<double> &stepNumbers = steps->stepNumbers();
  // A frozen model gets step 0: the step leaves it as it is.
  for (int64_t model = 0; model < m; ++model)
    stepNumbers[model] = training(model) ? static_cast<double>(stepCount) : 0.0;
  // A model that diverges on any rank's share keeps the buffers it had.
  if (q > 0)
    buffersBefore = steps->buffers().load(0, m * q);
  // A share without weight (fewer samples than ranks, or only padding)
  // adds nothing: its mean would be 0 / 0.
  bool computed = count > 0;
  if (computed)
    steps->gradStep(count);
  computed = computed && loadedWeight > 0;
  double weight = dtype() == DType::F64 ? sumShareAcrossRanks<double>(computed)
                                        : sumShareAcrossRanks<float>(computed);
  recordSummedOutputs(summed.data(), weight);
  steps->optimizerStep();
  runningWeight += static_cast<int64_t>(weight);
  totalSamples += stepSamples;
}

template <typename T> double Trainer::sumShareAcrossRanks(bool computed) {
  int64_t pt = manifest.trainableCount;
  ShareSumLayout at(m, pt, k, q);
  if (shareSums.size() != at.size)
    shareSums = FloatBuffer(dtype(), at.size, "the step's sums");
  T *sums = shareSums.as<T>();
  T *grads = steps->grads().as<T>();
  T weight = computed ? static_cast<T>(loadedWeight) : T(0);
  // Every part is written: this rank's values, or zeros.
  std::fill(sums + at.weight, sums + at.size, T(0));
  if (!computed)
    std::fill(sums, sums + at.weight, T(0));
  if (computed) {
    for (int64_t i = 0; i < m * pt; ++i)
      sums[at.grads + i] = grads[i] * weight;
    std::vector<double> row(k);
    for (int64_t model = 0; model < m; ++model) {
      for (int64_t col = 0; col < k; ++col)
        row[col] = steps->outputs().get(model * k + col);
      columns->toSummable(row.data());
      for (int64_t col = 0; col < k; ++col)
        sums[at.outputs + model * k + col] = static_cast<T>(row[col]) * weight;
    }
  }
  sums[at.weight] = weight;
  if (sweepRanks->leader() && q > 0)
    std::memcpy(sums + at.buffers, steps->buffers().as<T>(),
                sizeof(T) * static_cast<size_t>(m * q));
  sweepRanks->sumAcrossRanks(
      sums, static_cast<size_t>(at.size),
      fmt::format("the gradients of step {}", stepCount));
  T total = sums[at.weight];
  for (int64_t i = 0; i < m * pt; ++i)
    grads[i] = sums[at.grads + i] / total;
  if (q > 0)
    std::memcpy(steps->mutableBuffers().as<T>(), sums + at.buffers,
                sizeof(T) * static_cast<size_t>(m * q));
  summed.assign(sums + at.outputs, sums + at.outputs + m * k);
  return static_cast<double>(total);
}

void Trainer::recordSummedOutputs(const double *sums, double weight) {
  AlignedBuffer<double> &stepNumbers = steps->stepNumbers();
  newlyDiverged.clear();
  for (int64_t model = 0; model < m; ++model) {
    bool stepped = stepNumbers[model] != 0.0;
    const double *row = sums + model * k;
    // A NaN loss on any rank's share: the model's loss or gradients were
    // not finite there. It does not step, on any rank.
    if (stepped && !std::isfinite(row[0])) {
      status.markDiverged(model, stepCount);
      newlyDiverged.push_back(model);
      stepNumbers[model] = 0.0;
      if (q > 0)
        steps->mutableBuffers().store(model * q, &buffersBefore[model * q], q);
    }
    for (int64_t col = 0; col < k; ++col) {
      // A frozen model's outputs are not its own: none are reported.
      double value =
          stepped ? row[col] : std::numeric_limits<double>::quiet_NaN();
      lastTrainOut[model * k + col] = value / weight;
      runningSums[model * k + col] += value;
    }
  }
}

} // namespace runtime
} // namespace mbt
