//===- SequenceDataset.cpp - Variable-length token sequences --------------===//

#include "mbt/runtime/SequenceDataset.h"

#include "mbt/runtime/ByteTokenizer.h"
#include "mbt/runtime/Error.h"

#include <fmt/format.h>

#include <algorithm>

namespace mbt {
namespace runtime {

int32_t SequenceDataset::numClasses() const {
  int32_t classes = static_cast<int32_t>(labelNames.size());
  for (int32_t label : labels)
    classes = std::max(classes, label + 1);
  return classes;
}

std::vector<int64_t> SequenceDataset::lengths() const {
  std::vector<int64_t> result(static_cast<size_t>(count()));
  for (int64_t i = 0; i < count(); ++i)
    result[i] = length(i);
  return result;
}

void SequenceDataset::append(const int32_t *sampleTokens, int64_t length) {
  tokens.insert(tokens.end(), sampleTokens, sampleTokens + length);
  offsets.push_back(static_cast<int64_t>(tokens.size()));
}

void SequenceDataset::append(const int32_t *sampleTokens, int64_t length,
                             int32_t label) {
  append(sampleTokens, length);
  labels.push_back(label);
}

void SequenceDataset::validate() const {
  auto fail = [&](const std::string &what) {
    throw RuntimeError(fmt::format("sequence data set '{}': {}", name, what));
  };
  if (offsets.empty() || offsets.front() != 0)
    fail("offsets must start at 0");
  for (size_t i = 1; i < offsets.size(); ++i)
    if (offsets[i] < offsets[i - 1])
      fail(fmt::format("offsets decrease at sample {}", i - 1));
  if (offsets.back() != static_cast<int64_t>(tokens.size()))
    fail(fmt::format("offsets cover {} tokens but {} are stored",
                     offsets.back(), tokens.size()));
  if (vocabSize < 1)
    fail(fmt::format("vocabulary size must be at least 1, got {}", vocabSize));
  for (int64_t i = 0; i < count(); ++i)
    for (int64_t t = offsets[i]; t < offsets[i + 1]; ++t)
      if (tokens[t] < 0 || tokens[t] >= vocabSize)
        fail(
            fmt::format("sample {} has token {} outside the vocabulary [0, {})",
                        i, tokens[t], vocabSize));
  if (!labels.empty() && static_cast<int64_t>(labels.size()) != count())
    fail(fmt::format("{} labels for {} samples", labels.size(), count()));
  for (size_t i = 0; i < labels.size(); ++i)
    if (labels[i] < 0)
      fail(fmt::format("sample {} has negative label {}", i, labels[i]));
}

SequenceDataset frameForNextTokens(const SequenceDataset &data,
                                   int64_t maxLength) {
  SequenceDataset framed;
  framed.name = data.name;
  framed.vocabSize = std::max(data.vocabSize, kEndToken + 1);
  framed.labelNames = data.labelNames;
  framed.tokens.reserve(data.tokens.size() + 2 * data.count());
  framed.offsets.reserve(data.offsets.size());
  framed.labels = data.labels;
  std::vector<int32_t> sample;
  for (int64_t i = 0; i < data.count(); ++i) {
    sample.assign(1, kBeginToken);
    sample.insert(sample.end(), data.sample(i),
                  data.sample(i) + data.length(i));
    sample.push_back(kEndToken);
    int64_t length = static_cast<int64_t>(sample.size());
    if (maxLength > 0)
      length = std::min(length, maxLength + 1);
    framed.append(sample.data(), length);
  }
  return framed;
}

} // namespace runtime
} // namespace mbt
