//===- LengthBatching.h - Batches of variable-length samples ----*- C++ -*-===//
//
// How the samples of an epoch of variable-length sequences are cut into
// training steps. Every strategy pads each step to its longest sample; they
// differ in how many samples share a step and which:
//
//   fixed            B samples per step in data order (B from the token
//                    budget: budget // the longest sample in the data set)
//   fixed-shape      the same steps, every one padded to that longest
//                    sample: the static shape a step without dynamic shapes
//                    needs
//   group-by-length  windows of W samples sorted by length, cut into steps
//                    of B (Hugging Face's group_by_length, megabatch = W)
//   dynamic          online dynamic batching: a window of W samples, sorted
//                    by length, cut into runs of neighbours, each a step of
//                    at most budget // its longest samples. Where to cut is
//                    chosen exactly (dynamic programming over the sorted
//                    window) to minimize padded tokens + stepCost x steps,
//                    so it pads less than ODB's greedy "as many as fit"
//                    cut at the same step count (docs/benchmarks.md); the
//                    shortest, unfilled step is held over into the next
//                    window. Steps never exceed the token budget; their
//                    order within a window is shuffled.
//
// All orders are seeded (Philox), so a run and its resumption, and a model
// trained alone, see the same steps.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_LENGTHBATCHING_H
#define MBT_RUNTIME_LENGTHBATCHING_H

#include "mbt/common/Philox.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mbt {
namespace runtime {

/// Domain word (Philox counter word 3) of the order of dynamic and
/// group-by-length steps within a window.
constexpr uint32_t kBatchingDomain = 0x42415443; // "BATC"

/// One training step: which samples, padded to which length.
struct LengthGroup {
  std::vector<int64_t> samples; // data set indices
  int64_t paddedLength = 0;     // every sample is padded to this
  int64_t realTokens = 0;       // sum of the samples' lengths
  int64_t paddedTokens() const {
    return paddedLength * static_cast<int64_t>(samples.size());
  }
};

enum class BatchingStrategy { Fixed, FixedShape, GroupByLength, Dynamic };

/// "fixed", "fixed-shape", "group-by-length", "dynamic"; false if unknown.
bool parseBatchingStrategy(const std::string &name, BatchingStrategy &out);
const char *batchingStrategyName(BatchingStrategy strategy);

struct BatchingOptions {
  BatchingStrategy strategy = BatchingStrategy::Dynamic;
  int64_t tokenBudget = 8192; // padded tokens a step may hold
  int64_t window = 1024;      // samples grouped together (dynamic, by length)
  int64_t batchSize = 0;      // fixed and by-length; 0: budget // longest
  uint64_t seed = 0;          // shuffles the data order and the step order
  /// Dynamic: what one more step costs, in padded tokens (the fixed work
  /// of a step, such as the optimizer update, over the work per token).
  /// 0 minimizes padding alone; a huge value minimizes steps. -1: the
  /// default, tokenBudget / 8.
  int64_t stepCost = -1;

  int64_t resolvedStepCost() const {
    return stepCost == -1 ? tokenBudget / 8 : stepCost;
  }
};

/// The steps of one epoch of samples with these lengths. Throws
/// RuntimeError if a sample is empty or longer than the token budget, or
/// an option is out of range.
std::vector<LengthGroup> planEpoch(const std::vector<int64_t> &lengths,
                                   const BatchingOptions &options,
                                   uint32_t epoch);

/// Online dynamic batching over a stream of samples whose lengths are known
/// only once they are processed (planEpoch feeds it the shuffled epoch).
class DynamicBatcher {
public:
  DynamicBatcher(int64_t tokenBudget, int64_t window, int64_t stepCost,
                 uint64_t seed, uint32_t epoch);

  /// Adds one sample; a full window is grouped into ready steps.
  void push(int64_t sample, int64_t length);
  /// Groups everything still held (the end of the epoch).
  void finish();
  bool hasStep() const { return next < ready.size(); }
  /// The next ready step; requires hasStep().
  LengthGroup popStep();

private:
  void groupWindow(bool final);

  int64_t tokenBudget, window, stepCost;
  PhiloxStream order;
  std::vector<std::pair<int64_t, int64_t>> held; // (length, sample)
  int64_t carried = 0; // held over from the last window
  std::vector<LengthGroup> ready;
  size_t next = 0;
};

struct BatchingStats {
  int64_t steps = 0;
  int64_t samples = 0;
  int64_t realTokens = 0;
  int64_t paddedTokens = 0;
  int64_t maxStepTokens = 0; // the largest padded step
  int64_t minStepSamples = 0, maxStepSamples = 0;
  /// The share of padded tokens that are padding.
  double paddingRatio() const {
    return paddedTokens ? 1.0 - double(realTokens) / double(paddedTokens) : 0;
  }
};
BatchingStats summarizeSteps(const std::vector<LengthGroup> &steps);

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_LENGTHBATCHING_H
