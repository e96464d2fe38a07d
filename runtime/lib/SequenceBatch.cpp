//===- SequenceBatch.cpp - One step's samples as a padded block -----------===//

#include "mbt/runtime/SequenceBatch.h"

#include "mbt/runtime/ByteTokenizer.h"
#include "mbt/runtime/Error.h"

#include <fmt/format.h>

#include <algorithm>

namespace mbt {
namespace runtime {

int64_t SequenceBatch::realTokens() const {
  int64_t total = 0;
  for (int32_t length : lengths)
    total += length;
  return total;
}

SequenceBatch gatherSequenceBatch(const SequenceDataset &data,
                                  const LengthGroup &step) {
  SequenceBatch batch;
  batch.rows = static_cast<int64_t>(step.samples.size());
  batch.width = step.paddedLength;
  batch.tokens.assign(static_cast<size_t>(batch.rows * batch.width), kPadToken);
  batch.lengths.reserve(static_cast<size_t>(batch.rows));
  for (int64_t r = 0; r < batch.rows; ++r) {
    int64_t sample = step.samples[r];
    if (sample < 0 || sample >= data.count())
      throw RuntimeError(
          fmt::format("step names sample {} of '{}', which has {}", sample,
                      data.name, data.count()));
    int64_t length = data.length(sample);
    if (length > batch.width)
      throw RuntimeError(fmt::format(
          "sample {} of '{}' has {} tokens, more than the step's padded "
          "length {}",
          sample, data.name, length, batch.width));
    std::copy_n(data.sample(sample), length,
                batch.tokens.begin() + r * batch.width);
    batch.lengths.push_back(static_cast<int32_t>(length));
    if (data.hasLabels())
      batch.labels.push_back(data.labels[sample]);
  }
  return batch;
}

} // namespace runtime
} // namespace mbt
