//===- LengthBatching.cpp - Batches of variable-length samples ------------===//

#include "mbt/runtime/LengthBatching.h"

#include "mbt/runtime/Error.h"
#include "mbt/runtime/Sampler.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

namespace mbt {
namespace runtime {

namespace {

LengthGroup makeStep(const int64_t *samples, int64_t count,
                     const std::vector<int64_t> &lengths, int64_t padTo) {
  LengthGroup step;
  step.samples.assign(samples, samples + count);
  for (int64_t sample : step.samples) {
    step.paddedLength = std::max(step.paddedLength, lengths[sample]);
    step.realTokens += lengths[sample];
  }
  step.paddedLength = std::max(step.paddedLength, padTo);
  return step;
}

/// Fisher-Yates over `steps[begin, end)` with draws from `stream`.
void shuffleSteps(std::vector<LengthGroup> &steps, size_t begin, size_t end,
                  PhiloxStream &stream) {
  for (size_t i = end - begin; i > 1; --i) {
    size_t j = stream.nextBelow(static_cast<uint32_t>(i));
    std::swap(steps[begin + i - 1], steps[begin + j]);
  }
}

void checkSettings(int64_t budget, int64_t window) {
  if (budget < 1)
    throw RuntimeError(
        fmt::format("the token budget must be at least 1, got {}", budget));
  if (window < 1)
    throw RuntimeError(fmt::format(
        "the batching window must be at least 1 sample, got {}", window));
}

/// A sample fits a step when it has between 1 and `budget` tokens.
void checkLength(int64_t sample, int64_t length, int64_t budget) {
  if (length < 1)
    throw RuntimeError(fmt::format(
        "sample {} has no tokens: every sample needs at least one", sample));
  if (length > budget)
    throw RuntimeError(
        fmt::format("sample {} has {} tokens, more than the token budget {} of "
                    "a step: raise the budget or cut long samples (max_length)",
                    sample, length, budget));
}

} // namespace

bool parseBatchingStrategy(const std::string &name, BatchingStrategy &out) {
  for (BatchingStrategy s :
       {BatchingStrategy::Fixed, BatchingStrategy::FixedShape,
        BatchingStrategy::GroupByLength, BatchingStrategy::Dynamic})
    if (name == batchingStrategyName(s)) {
      out = s;
      return true;
    }
  return false;
}

const char *batchingStrategyName(BatchingStrategy strategy) {
  switch (strategy) {
  case BatchingStrategy::Fixed:
    return "fixed";
  case BatchingStrategy::FixedShape:
    return "fixed-shape";
  case BatchingStrategy::GroupByLength:
    return "group-by-length";
  case BatchingStrategy::Dynamic:
    return "dynamic";
  }
  return "?";
}

DynamicBatcher::DynamicBatcher(int64_t tokenBudget, int64_t window,
                               int64_t stepCost, uint64_t seed, uint32_t epoch)
    : tokenBudget(tokenBudget), window(window), stepCost(stepCost),
      order(makePhiloxKey(seed), epoch, kBatchingDomain) {
  checkSettings(tokenBudget, window);
  if (stepCost < 0)
    throw RuntimeError(fmt::format(
        "the step cost must be at least 0 tokens, got {}", stepCost));
  // A cost above every padded-token total a window can have only asks for
  // the fewest steps; capping it keeps the DP's sums far from overflow.
  this->stepCost = std::min<int64_t>(stepCost, int64_t(1) << 40);
}

void DynamicBatcher::push(int64_t sample, int64_t length) {
  checkLength(sample, length, tokenBudget);
  held.emplace_back(length, sample);
  // The held-over short step does not count toward the window: W new
  // samples arrive between two groupings, as in ODB.
  if (static_cast<int64_t>(held.size()) - carried >= window)
    groupWindow(/*final=*/false);
}

void DynamicBatcher::finish() { groupWindow(/*final=*/true); }

LengthGroup DynamicBatcher::popStep() {
  LengthGroup step = std::move(ready[next++]);
  if (next == ready.size()) {
    ready.clear();
    next = 0;
  }
  return step;
}

void DynamicBatcher::groupWindow(bool final) {
  // Longest first; ties by sample index so the grouping is deterministic.
  std::sort(held.begin(), held.end(), [](const auto &a, const auto &b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  // Some optimal grouping cuts the sorted window into runs of neighbours (a
  // step costs count x its longest, so swapping a short sample of a long
  // step with a long one of a shorter step never costs more). cost[i] is
  // the least cost of held[i:], take[i] the size of its first step.
  size_t n = held.size();
  std::vector<int64_t> cost(n + 1, 0);
  std::vector<size_t> take(n + 1, 0);
  for (size_t i = n; i-- > 0;) {
    int64_t longest = held[i].first;
    size_t most = std::min(static_cast<size_t>(tokenBudget / longest), n - i);
    cost[i] = INT64_MAX;
    for (size_t k = 1; k <= most; ++k) {
      int64_t c = static_cast<int64_t>(k) * longest + stepCost + cost[i + k];
      if (c <= cost[i]) { // ties: the larger step
        cost[i] = c;
        take[i] = k;
      }
    }
  }
  size_t firstNew = ready.size();
  size_t i = 0;
  while (i < n) {
    size_t count = take[i];
    bool last = i + count == n;
    if (last && !final &&
        count < static_cast<size_t>(tokenBudget / held[i].first))
      break; // the shortest step is not full: hold it for the next window
    LengthGroup step;
    step.paddedLength = held[i].first;
    for (size_t k = i; k < i + count; ++k) {
      step.samples.push_back(held[k].second);
      step.realTokens += held[k].first;
    }
    ready.push_back(std::move(step));
    i += count;
  }
  held.erase(held.begin(), held.begin() + static_cast<std::ptrdiff_t>(i));
  carried = static_cast<int64_t>(held.size());
  shuffleSteps(ready, firstNew, ready.size(), order);
}

std::vector<LengthGroup> planEpoch(const std::vector<int64_t> &lengths,
                                   const BatchingOptions &options,
                                   uint32_t epoch) {
  checkSettings(options.tokenBudget, options.window);
  for (size_t i = 0; i < lengths.size(); ++i)
    checkLength(static_cast<int64_t>(i), lengths[i], options.tokenBudget);
  int64_t n = static_cast<int64_t>(lengths.size());
  std::vector<int64_t> order = epochPermutation(n, options.seed, epoch);
  std::vector<LengthGroup> steps;

  if (options.strategy == BatchingStrategy::Dynamic) {
    DynamicBatcher batcher(options.tokenBudget, options.window,
                           options.resolvedStepCost(), options.seed, epoch);
    auto drain = [&] {
      while (batcher.hasStep())
        steps.push_back(batcher.popStep());
    };
    for (int64_t sample : order) {
      batcher.push(sample, lengths[sample]);
      drain();
    }
    batcher.finish();
    drain();
    return steps;
  }

  int64_t longest = 0;
  for (int64_t length : lengths)
    longest = std::max(longest, length);
  int64_t batchSize = options.batchSize;
  if (batchSize == 0)
    batchSize = longest ? options.tokenBudget / longest : 1;
  if (batchSize < 1)
    throw RuntimeError(
        fmt::format("the batch size must be at least 1, got {}", batchSize));
  if (longest > 0 && batchSize > options.tokenBudget / longest)
    throw RuntimeError(fmt::format("a batch of {} samples of the longest "
                                   "length {} exceeds the token budget {}",
                                   batchSize, longest, options.tokenBudget));

  if (options.strategy == BatchingStrategy::GroupByLength) {
    PhiloxStream stream(makePhiloxKey(options.seed), epoch, kBatchingDomain);
    for (int64_t begin = 0; begin < n; begin += options.window) {
      int64_t end = std::min(n, begin + options.window);
      std::vector<int64_t> window(order.begin() + begin, order.begin() + end);
      std::stable_sort(window.begin(), window.end(), [&](int64_t a, int64_t b) {
        return lengths[a] > lengths[b];
      });
      size_t first = steps.size();
      for (int64_t k = 0; k < end - begin; k += batchSize)
        steps.push_back(makeStep(window.data() + k,
                                 std::min(batchSize, end - begin - k), lengths,
                                 0));
      shuffleSteps(steps, first, steps.size(), stream);
    }
    return steps;
  }

  int64_t padTo =
      options.strategy == BatchingStrategy::FixedShape ? longest : 0;
  for (int64_t k = 0; k < n; k += batchSize)
    steps.push_back(
        makeStep(order.data() + k, std::min(batchSize, n - k), lengths, padTo));
  return steps;
}

BatchingStats summarizeSteps(const std::vector<LengthGroup> &steps) {
  BatchingStats stats;
  stats.steps = static_cast<int64_t>(steps.size());
  if (!steps.empty())
    stats.minStepSamples = static_cast<int64_t>(steps.front().samples.size());
  for (const LengthGroup &step : steps) {
    int64_t size = static_cast<int64_t>(step.samples.size());
    stats.samples += size;
    stats.realTokens += step.realTokens;
    stats.paddedTokens += step.paddedTokens();
    stats.maxStepTokens = std::max(stats.maxStepTokens, step.paddedTokens());
    stats.minStepSamples = std::min(stats.minStepSamples, size);
    stats.maxStepSamples = std::max(stats.maxStepSamples, size);
  }
  return stats;
}

} // namespace runtime
} // namespace mbt
