//===- Sampler.h - Deterministic per-epoch data order -----------*- C++ -*-===//
//
// The data order is part of what "the same training run" means: a model
// trained alone must see the same batches as in a model batch, on any
// platform. So the permutation is our own Fisher-Yates over a Philox stream
// keyed by (shuffle_seed, epoch), not std::shuffle (whose algorithm, and so
// its output, is implementation-defined).
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_SAMPLER_H
#define MBT_RUNTIME_SAMPLER_H

#include <cstdint>
#include <vector>

namespace mbt {
namespace runtime {

/// Permutation of [0, n) for epoch `epoch` (0-based): Fisher-Yates from the
/// last position down, swapping position i with a uniform j in [0, i] drawn
/// from the Philox stream key = shuffleSeed, counter words 2-3 =
/// (epoch, kShuffleDomain). n must be below 2^32 (RuntimeError otherwise).
std::vector<int64_t> epochPermutation(int64_t n, uint64_t shuffleSeed,
                                      uint32_t epoch);

/// Walks one epoch's permutation in batches of `batchSize` sample indices,
/// in order; the last batch keeps the remainder (it may be smaller).
class EpochBatches {
public:
  EpochBatches(int64_t n, int64_t batchSize, uint64_t shuffleSeed,
               uint32_t epoch);
  /// Steps planned elsewhere (a sequence data set's length batching,
  /// LengthBatching.h): step b is `order[offsets[b], offsets[b + 1])`,
  /// padded to `widths[b]` tokens (`widths` may be empty: no padding).
  EpochBatches(std::vector<int64_t> order, std::vector<int64_t> offsets,
               std::vector<int64_t> widths = {});

  /// Number of batches: ceil(n / batchSize), or the planned steps.
  int64_t numBatches() const;
  /// Indices of batch `b` (0-based): a view into the permutation.
  const int64_t *batch(int64_t b) const;
  /// Size of batch `b`: batchSize, or the remainder for the last one.
  int64_t batchLength(int64_t b) const;
  const std::vector<int64_t> &order() const { return permutation; }
  /// The padded length of batch `b`'s sequences; 0 when not planned so.
  int64_t batchWidth(int64_t b) const { return widths.empty() ? 0 : widths[b]; }

private:
  std::vector<int64_t> permutation;
  /// Batch b is permutation[offsets[b], offsets[b + 1]).
  std::vector<int64_t> offsets;
  std::vector<int64_t> widths;
};

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_SAMPLER_H
