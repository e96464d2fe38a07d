//===- SequenceBatch.h - One step's samples as a padded block ---*- C++ -*-===//
//
// What a training step over sequences reads: the step's samples (a
// LengthGroup) gathered into a [B, T] block of tokens, each row padded with
// kPadToken after its sample, with each row's length (the mask a model
// builds its padding and causal masks from) and label.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_SEQUENCEBATCH_H
#define MBT_RUNTIME_SEQUENCEBATCH_H

#include "mbt/runtime/LengthBatching.h"
#include "mbt/runtime/SequenceDataset.h"

#include <cstdint>
#include <vector>

namespace mbt {
namespace runtime {

struct SequenceBatch {
  int64_t rows = 0;             // B
  int64_t width = 0;            // T: the step's padded length
  std::vector<int32_t> tokens;  // [B, T] row-major, padded with kPadToken
  std::vector<int32_t> lengths; // [B] real tokens per row
  std::vector<int32_t> labels;  // [B], empty when the data has no labels
  /// The real tokens of the step: what a per-token loss divides by.
  int64_t realTokens() const;
};

/// Gathers `step`'s samples of `data`, in the step's order, padded to
/// step.paddedLength. Throws RuntimeError if a sample index is out of range
/// or a sample is longer than the step's padded length.
SequenceBatch gatherSequenceBatch(const SequenceDataset &data,
                                  const LengthGroup &step);

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_SEQUENCEBATCH_H
