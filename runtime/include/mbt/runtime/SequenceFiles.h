//===- SequenceFiles.h - JSONL and binary token data sets -------*- C++ -*-===//
//
// Two on-disk forms of a SequenceDataset (docs/data.md has the details):
//
// - JSONL, one JSON object per line: {"text": "..."} (byte tokens, see
//   ByteTokenizer.h) or {"tokens": [3, 17, ...]}, with an optional "label",
//   an integer class or a class name. Errors name file:line:column.
// - .mbtseq, the binary form (little endian): a 32-byte header ("MBTSEQ01",
//   vocabulary size, flags, count, total tokens), uint64 offsets[count + 1],
//   int32 tokens, then int32 labels and the class names when present. It
//   loads with one read and no parsing.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_SEQUENCEFILES_H
#define MBT_RUNTIME_SEQUENCEFILES_H

#include "mbt/runtime/SequenceDataset.h"

#include <string>
#include <vector>

namespace mbt {
namespace runtime {

struct SequenceLoadOptions {
  /// Samples longer than this keep their first maxLength tokens; 0 keeps
  /// every token.
  int64_t maxLength = 0;
  /// The class names of string labels, in label order. Empty: the names
  /// found in the file, sorted. A test split passes the training split's
  /// names so that both number the classes alike.
  std::vector<std::string> labelNames;
};

/// Reads a JSONL file. Throws RuntimeError "PATH:LINE:COL: message" on a
/// line that is not an object with exactly one of "text" and "tokens", on
/// a bad label, or when some lines are labelled and others are not.
SequenceDataset loadJsonlSequences(const std::string &path,
                                   const SequenceLoadOptions &options = {});

/// Reads an .mbtseq file; a truncated or inconsistent file is a
/// RuntimeError naming the path and the byte offset at fault.
SequenceDataset readSequenceFile(const std::string &path,
                                 const SequenceLoadOptions &options = {});

/// Writes `dataset` as .mbtseq, atomically (a reader never sees half a file).
void writeSequenceFile(const std::string &path, const SequenceDataset &dataset);

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_SEQUENCEFILES_H
