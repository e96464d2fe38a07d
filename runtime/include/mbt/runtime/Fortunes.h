//===- Fortunes.h - The embedded default text task --------------*- C++ -*-===//
//
// Debian's `fortunes` package: about 15k short texts (a few to 2.4k bytes)
// in 43 category files under /usr/share/games/fortunes, each text ending at
// a line holding only "%". mbt uses them as its default text task: byte
// tokens, the category as the class label (classification) and the text
// itself for language modelling.
//
// The split is fixed, so every run and every peer sees the same data: in
// each category, in file order, every tenth text (index % 10 == 9) is a test
// sample and the others train.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_FORTUNES_H
#define MBT_RUNTIME_FORTUNES_H

#include "mbt/runtime/SequenceDataset.h"

#include <string>

namespace mbt {
namespace runtime {

/// $MBT_FORTUNES_DIR if set and non-empty, else /usr/share/games/fortunes.
std::string defaultFortunesDir();

struct SequenceSplits {
  SequenceDataset train;
  SequenceDataset test;
};

/// Loads the fortunes in `dir` (empty: defaultFortunesDir()): every regular
/// file whose name has no dot is a category (the .dat indexes and .u8 links
/// are skipped), classes numbered in sorted name order. Texts longer than
/// maxLength bytes (if > 0) are cut. A missing directory is a RuntimeError
/// with an install hint.
SequenceSplits loadFortunes(const std::string &dir = "", int64_t maxLength = 0);

/// The texts of one fortune file's contents, in order (exposed for tests).
/// The splits of the sequence data set a manifest names ("fortunes",
/// from defaultFortunesDir()), each sample cut to `maxLength` tokens (0:
/// none). Throws RuntimeError for a name this runtime does not know.
SequenceSplits loadSequenceSplits(const std::string &name,
                                  int64_t maxLength = 0);

std::vector<std::string> splitFortunes(const std::string &contents);

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_FORTUNES_H
