//===- DataRouting.cpp - which samples each model trains on ---------------===//
#include "mbt/runtime/DataRouting.h"

#include "mbt/common/Philox.h"
#include "mbt/runtime/Error.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

namespace mbt {
namespace runtime {

namespace {
/// 0, 1, ..., n-1 shuffled by Fisher-Yates on a Philox stream.
std::vector<int64_t> permutation(int64_t n, uint64_t seed, uint32_t domain) {
  std::vector<int64_t> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  PhiloxStream stream(makePhiloxKey(seed), 0, domain);
  for (int64_t i = n - 1; i > 0; --i)
    std::swap(perm[i], perm[stream.nextBelow(static_cast<uint32_t>(i + 1))]);
  return perm;
}
} // namespace

DataRouting::DataRouting(const Manifest &manifest, int64_t n) {
  const DataSpec &data = manifest.data;
  trainCount = n;
  if (data.validation > 0 && data.routing != DataSpec::Routing::KFold) {
    if (n > int64_t(UINT32_MAX))
      throw RuntimeError("a validation split supports at most 2^32 samples");
    int64_t held = static_cast<int64_t>(std::llround(data.validation * n));
    if (held < 1 || held >= n)
      throw RuntimeError(
          fmt::format("a validation fraction of {:f} of {} training samples "
                      "leaves no validation or no training samples",
                      data.validation, n));
    std::vector<int64_t> perm =
        permutation(n, data.shuffleSeed, kValidationDomain);
    heldOut.assign(perm.begin(), perm.begin() + held);
    pool.assign(perm.begin() + held, perm.end());
    std::sort(pool.begin(), pool.end());
    trainCount = n - held;
    validationCount = held;
  }
  switch (data.routing) {
  case DataSpec::Routing::Shared:
    return;
  case DataSpec::Routing::Bootstrap: {
    if (n > int64_t(UINT32_MAX))
      throw RuntimeError("bootstrap routing supports at most 2^32 samples");
    // Draws from the training samples (all of them, or those a validation
    // split left).
    for (int64_t model = 0; model < manifest.models; ++model) {
      PhiloxStream stream(makePhiloxKey(manifest.seeds[model]), 0,
                          kBootstrapDomain);
      std::vector<int64_t> set(trainCount);
      for (int64_t &sample : set)
        sample =
            sharedSample(stream.nextBelow(static_cast<uint32_t>(trainCount)));
      setOf.push_back(static_cast<int64_t>(trainSets.size()));
      trainSets.push_back(std::move(set));
    }
    return;
  }
  case DataSpec::Routing::KFold: {
    int64_t k = data.folds, foldSize = n / k;
    if (foldSize < 1)
      throw RuntimeError(fmt::format(
          "k-fold routing: {} training samples cannot make {} folds", n, k));
    // A Fisher-Yates permutation keyed by the shuffle seed; fold f holds
    // positions [f * foldSize, (f + 1) * foldSize). The n mod k samples
    // past the last fold always train.
    std::vector<int64_t> perm = permutation(n, data.shuffleSeed, kFoldDomain);
    for (int64_t f = 0; f < k; ++f) {
      auto begin = perm.begin() + f * foldSize, end = begin + foldSize;
      validationSets.emplace_back(begin, end);
      std::vector<int64_t> train(perm.begin(), begin);
      train.insert(train.end(), end, perm.end());
      trainSets.push_back(std::move(train));
    }
    setOf = data.fold;
    trainCount = n - foldSize;
    validationCount = foldSize;
    return;
  }
  }
}

} // namespace runtime
} // namespace mbt
