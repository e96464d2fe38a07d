//===- TrainerDataShares.cpp - A train step whose samples span the ranks --===//
//
// With its data across ranks (docs/distributed.md) every rank holds every
// model and loads its share of each step's samples (SweepRanks::shareOf).
// The step is the artifact's grad step on the share, one sum over the
// ranks, and the optimizer step on that sum:
//
//   grads = sum_r (w_r / W) g_r,   W = sum_r w_r,
//
// where g_r is the gradient of the mean loss over rank r's share and w_r
// its weight (its samples, or its real target tokens for a language
// model): the gradient of the mean loss over the whole step, normalized by
// the step's global count, as one process computes it (up to the order of
// the sums). Every rank knows W (the step's samples are in every rank's
// plan), so the shares are weighted before the sum: nothing grows past
// the means (a mean near the float's largest, times w_r, would overflow),
// and on one rank the step is the train step, bit for bit. The outputs
// are summed with the same weights. The buffers
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
/// Where each part lies in what the ranks sum on the host: [M * P_t]
/// weighted gradients, [M * K] weighted outputs, [M * Q] buffers; the
/// gradients and buffers are left out where the device sums them.
struct ShareSumLayout {
  int64_t grads, outputs, buffers, size;
  ShareSumLayout(int64_t gradCount, int64_t outputCount, int64_t bufferCount)
      : grads(0), outputs(gradCount), buffers(gradCount + outputCount),
        size(gradCount + outputCount + bufferCount) {}
  int64_t gradCount() const { return outputs - grads; }
  int64_t bufferCount() const { return size - buffers; }
};
} // namespace

void Trainer::joinDeviceSums() {
  if (!sweepRanks->sharesData() || manifest.device != Manifest::Device::CUDA)
    return;
  std::string why;
  deviceSums = options.openDeviceSums ? options.openDeviceSums()
                                      : sweepRanks->joinDeviceCollectives(why);
  if (deviceSums)
    steps->keepSumsOnDevice(deviceSums.get());
  else if (options.progress && sweepRanks->leader())
    *options.progress << "mbt: warning: no NCCL (" << why
                      << "): the gradients are summed through the host\n";
}

void Trainer::trainOnShare(int64_t count, int64_t stepSamples,
                           int64_t stepWeight) {
  startStep();
  // A model that diverges on any rank's share keeps the buffers it had.
  if (q > 0)
    buffersBefore = steps->mutableBuffers().load(0, m * q);
  // A share without weight (fewer samples than ranks, or only padding)
  // adds nothing: its mean would be 0 / 0.
  bool computed = count > 0;
  if (computed)
    steps->gradStep(count);
  // This share's part of the step's mean.
  double fraction =
      computed && stepWeight > 0
          ? static_cast<double>(loadedWeight) / static_cast<double>(stepWeight)
          : 0.0;
  if (dtype() == DType::F64)
    sumShareAcrossRanks<double>(fraction);
  else
    sumShareAcrossRanks<float>(fraction);
  recordSummedOutputs(summed.data(), static_cast<double>(stepWeight));
  steps->optimizerStep();
  runningWeight += stepWeight;
  totalSamples += stepSamples;
}

template <typename T> void Trainer::sumShareAcrossRanks(double fraction) {
  bool onDevice = steps->sumsOnDevice();
  ShareSumLayout at(onDevice ? 0 : m * manifest.trainableCount, m * k,
                    onDevice ? 0 : m * q);
  if (shareSums.size() != at.size)
    shareSums = FloatBuffer(dtype(), at.size, "the step's sums");
  T *sums = shareSums.as<T>();
  T *grads = steps->grads().as<T>();
  // Every part is written: this share's values, or zeros (a share that
  // adds nothing may hold no gradients at all).
  if (fraction > 0) {
    // Each product rounded once: a fraction rounded to T first would
    // scale every step's gradient by the same wrong factor.
    for (int64_t i = 0; i < at.gradCount(); ++i)
      sums[at.grads + i] =
          static_cast<T>(static_cast<double>(grads[i]) * fraction);
    std::vector<double> row(k);
    for (int64_t model = 0; model < m; ++model) {
      for (int64_t col = 0; col < k; ++col)
        row[col] = steps->outputs().get(model * k + col);
      columns->toSummable(row.data());
      for (int64_t col = 0; col < k; ++col)
        sums[at.outputs + model * k + col] =
            static_cast<T>(row[col] * fraction);
    }
  } else {
    std::fill(sums, sums + at.buffers, T(0));
  }
  T *buffers = steps->mutableBuffers().as<T>();
  if (sweepRanks->leader())
    std::copy(buffers, buffers + at.bufferCount(), sums + at.buffers);
  else
    std::fill(sums + at.buffers, sums + at.size, T(0));
  std::string what = fmt::format("the gradients of step {}", stepCount);
  sweepRanks->sumAcrossRanks(sums, static_cast<size_t>(at.size), what);
  std::copy(sums + at.grads, sums + at.grads + at.gradCount(), grads);
  std::copy(sums + at.buffers, sums + at.size, buffers);
  summed.assign(sums + at.outputs, sums + at.outputs + m * k);
  if (onDevice)
    steps->sumOnDevice(fraction, what);
}

void Trainer::recordSummedOutputs(const double *means, double weight) {
  AlignedBuffer<double> &stepNumbers = steps->stepNumbers();
  newlyDiverged.clear();
  for (int64_t model = 0; model < m; ++model) {
    bool stepped = stepNumbers[model] != 0.0;
    const double *row = means + model * k;
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
      lastTrainOut[model * k + col] = value;
      runningSums[model * k + col] += value * weight;
    }
  }
}

} // namespace runtime
} // namespace mbt
