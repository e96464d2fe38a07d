//===- Sampler.cpp - Fisher-Yates over Philox -----------------------------===//

#include "mbt/runtime/Sampler.h"

#include "mbt/runtime/Error.h"
#include "mbt/runtime/Philox.h"

#include <algorithm>
#include <numeric>
#include <utility>

namespace mbt {
namespace runtime {

std::vector<int64_t> epochPermutation(int64_t n, uint64_t shuffleSeed,
                                      uint32_t epoch) {
  if (n < 0 || n > int64_t(UINT32_MAX))
    throw RuntimeError("cannot shuffle " + std::to_string(n) +
                       " samples: the sampler supports up to 2^32 - 1");
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t(0));
  PhiloxStream stream(makePhiloxKey(shuffleSeed), epoch, kShuffleDomain);
  for (int64_t i = n - 1; i > 0; --i) {
    int64_t j = stream.nextBelow(static_cast<uint32_t>(i + 1));
    std::swap(order[i], order[j]);
  }
  return order;
}

EpochBatches::EpochBatches(int64_t n, int64_t batchSize, uint64_t shuffleSeed,
                           uint32_t epoch)
    : batchSize(batchSize),
      permutation(epochPermutation(n, shuffleSeed, epoch)) {
  if (batchSize < 1)
    throw RuntimeError("batch size must be at least 1, got " +
                       std::to_string(batchSize));
}

int64_t EpochBatches::numBatches() const {
  int64_t n = static_cast<int64_t>(permutation.size());
  return (n + batchSize - 1) / batchSize;
}

const int64_t *EpochBatches::batch(int64_t b) const {
  return permutation.data() + b * batchSize;
}

int64_t EpochBatches::batchLength(int64_t b) const {
  int64_t n = static_cast<int64_t>(permutation.size());
  return std::min(batchSize, n - b * batchSize);
}

} // namespace runtime
} // namespace mbt
