//===- SequenceDataset.h - Variable-length token sequences ------*- C++ -*-===//
//
// The in-memory form of every sequence data set (JSONL, .mbtseq, the
// embedded fortunes task): all samples' tokens concatenated, with offsets,
// so a data set of 15k samples is three flat vectors rather than 15k heap
// blocks, and a batch is gathered with one pass over the offsets.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_SEQUENCEDATASET_H
#define MBT_RUNTIME_SEQUENCEDATASET_H

#include <cstdint>
#include <string>
#include <vector>

namespace mbt {
namespace runtime {

struct SequenceDataset {
  std::string name;      // for messages, e.g. "fortunes/train"
  int32_t vocabSize = 0; // every token lies in [0, vocabSize)
  std::vector<int32_t> tokens;
  /// Sample i is tokens[offsets[i], offsets[i + 1]); offsets[0] == 0.
  std::vector<int64_t> offsets{0};
  /// One class label per sample, or empty when the data set has none.
  std::vector<int32_t> labels;
  /// Class names by label, where the source names them (fortunes
  /// categories, string labels in JSONL); may be empty.
  std::vector<std::string> labelNames;

  int64_t count() const { return static_cast<int64_t>(offsets.size()) - 1; }
  int64_t length(int64_t i) const { return offsets[i + 1] - offsets[i]; }
  const int32_t *sample(int64_t i) const { return tokens.data() + offsets[i]; }
  bool hasLabels() const { return !labels.empty(); }
  int32_t numClasses() const;

  /// The length of every sample, in order.
  std::vector<int64_t> lengths() const;

  /// Appends one sample (and its label when the set is labelled).
  void append(const int32_t *sampleTokens, int64_t length);
  void append(const int32_t *sampleTokens, int64_t length, int32_t label);

  /// Throws RuntimeError naming `name` unless the offsets, tokens and labels
  /// are consistent (monotonic offsets covering `tokens`, tokens within the
  /// vocabulary, one non-negative label per sample or none).
  void validate() const;
};

/// A language model's samples: each sample of `data` framed as [begin,
/// tokens..., end] (ByteTokenizer.h's ids 1 and 2), then cut to
/// maxLength + 1 tokens when maxLength > 0. The model reads all of a
/// framed sample but its last token (at most maxLength) and predicts all
/// but its first, so it learns where a text starts and ends, and a cut
/// sample's last target is its true next token, not an end. Labels are
/// kept.
SequenceDataset frameForNextTokens(const SequenceDataset &data,
                                   int64_t maxLength);

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_SEQUENCEDATASET_H
