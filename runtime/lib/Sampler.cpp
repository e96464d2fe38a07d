//===- Sampler.cpp - Fisher-Yates over Philox -----------------------------===//

#include "mbt/runtime/Sampler.h"

#include "mbt/common/Philox.h"
#include "mbt/runtime/Error.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <utility>

namespace mbt {
namespace runtime {

std::vector<int64_t> epochPermutation(int64_t n, uint64_t shuffleSeed,
                                      uint32_t epoch) {
  if (n < 0 || n > int64_t(UINT32_MAX))
    throw RuntimeError(fmt::format(
        "cannot shuffle {} samples: the sampler supports up to 2^32 - 1", n));
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
    : permutation(epochPermutation(n, shuffleSeed, epoch)) {
  if (batchSize < 1)
    throw RuntimeError(
        fmt::format("batch size must be at least 1, got {}", batchSize));
  for (int64_t start = 0; start < n; start += batchSize)
    offsets.push_back(start);
  offsets.push_back(n);
}

EpochBatches::EpochBatches(std::vector<int64_t> order,
                           std::vector<int64_t> offsets,
                           std::vector<int64_t> widths)
    : permutation(std::move(order)), offsets(std::move(offsets)),
      widths(std::move(widths)) {
  bool ok = !this->offsets.empty() && this->offsets.front() == 0 &&
            this->offsets.back() == static_cast<int64_t>(permutation.size());
  for (size_t b = 1; ok && b < this->offsets.size(); ++b)
    ok = this->offsets[b] > this->offsets[b - 1];
  if (!this->widths.empty() && this->widths.size() + 1 != this->offsets.size())
    ok = false;
  if (!ok)
    throw RuntimeError("planned steps must cover the order in non-empty, "
                       "consecutive runs, with one width per step or none");
}

int64_t EpochBatches::numBatches() const {
  return static_cast<int64_t>(offsets.size()) - 1;
}

const int64_t *EpochBatches::batch(int64_t b) const {
  return permutation.data() + offsets[b];
}

int64_t EpochBatches::batchLength(int64_t b) const {
  return offsets[b + 1] - offsets[b];
}

} // namespace runtime
} // namespace mbt
