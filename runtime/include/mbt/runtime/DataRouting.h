//===- DataRouting.h - which samples each model trains on ------*- C++ -*-===//
//
// A sweep's models may see different data:
//   shared     every model trains on every sample (in one shared order);
//   kfold      the training set is cut into `folds` equal folds (of a
//              permutation keyed by the shuffle seed); model m trains on
//              all but fold `fold[m]` and is validated on that fold;
//   bootstrap  model m trains on n draws with replacement keyed by its
//              seed.
// With a validation fraction v (shared or bootstrap), round(v n) samples
// of a permutation keyed by the shuffle seed are held out, the same for
// every model, and the models train on the others (in their order).
// Every model's training set has the same size, so one step takes the same
// batch positions for every model; position p of model m's set is a sample
// that depends only on m's own settings (seed, fold), never on the other
// models, which keeps a model in a batch equal to the model alone.
//
//===----------------------------------------------------------------------===//
#ifndef MBT_RUNTIME_DATAROUTING_H
#define MBT_RUNTIME_DATAROUTING_H

#include "mbt/runtime/Manifest.h"

#include <cstdint>
#include <vector>

namespace mbt {
namespace runtime {

/// Domain words (Philox counter word 3) of the routing's random streams.
constexpr uint32_t kFoldDomain = 0x464F4C44;       // "FOLD"
constexpr uint32_t kBootstrapDomain = 0x424F4F54;  // "BOOT"
constexpr uint32_t kValidationDomain = 0x56414C44; // "VALD"

class DataRouting {
public:
  /// Routes a training split of `numSamples` samples as the manifest says.
  DataRouting(const Manifest &manifest, int64_t numSamples);

  /// Whether every model trains on the same samples.
  bool shared() const { return trainSets.empty(); }
  /// The size of every model's training set.
  int64_t trainSize() const { return trainCount; }
  /// The sample at position `pos` of model `model`'s training set.
  int64_t trainSample(int64_t model, int64_t pos) const {
    return shared() ? sharedSample(pos) : trainSets[setOf[model]][pos];
  }
  /// Under shared routing: the sample at position `pos` of every model's
  /// training set (`pos` itself unless a validation split was carved).
  int64_t sharedSample(int64_t pos) const {
    return pool.empty() ? pos : pool[pos];
  }

  /// Whether the models have validation sets (k-fold's held-out folds, or
  /// the carved validation split).
  bool hasValidation() const {
    return !validationSets.empty() || !heldOut.empty();
  }
  /// The size of every model's validation set.
  int64_t validationSize() const { return validationCount; }
  int64_t validationSample(int64_t model, int64_t pos) const {
    return heldOut.empty() ? validationSets[setOf[model]][pos] : heldOut[pos];
  }

private:
  int64_t trainCount = 0, validationCount = 0;
  /// Distinct sets (one per fold, or one per model), and each model's set.
  std::vector<std::vector<int64_t>> trainSets, validationSets;
  std::vector<int64_t> setOf;
  /// With a validation split: the samples the models train on (ascending)
  /// and the held-out ones.
  std::vector<int64_t> pool, heldOut;
};

} // namespace runtime
} // namespace mbt

#endif
