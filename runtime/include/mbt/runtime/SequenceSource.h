//===- SequenceSource.h - A sequence data set named by a string -*- C++ -*-===//
//
// How a user names sequence data (mbt-data, and later the spec's data
// setting): "fortunes" (the embedded default: its training split),
// "fortunes:train" or "fortunes:test", or a path ending in .jsonl or
// .mbtseq.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_SEQUENCESOURCE_H
#define MBT_RUNTIME_SEQUENCESOURCE_H

#include "mbt/runtime/SequenceFiles.h"

namespace mbt {
namespace runtime {

/// loadJsonlSequences for a path ending in .jsonl, readSequenceFile for one
/// ending in .mbtseq; any other name is a RuntimeError.
SequenceDataset loadSequenceFile(const std::string &path,
                                 const SequenceLoadOptions &options = {});

/// Loads the data set `source` names; fortunes come from `fortunesDir`
/// (empty: defaultFortunesDir()). Throws RuntimeError on an unknown name.
SequenceDataset loadSequenceSource(const std::string &source,
                                   const SequenceLoadOptions &options = {},
                                   const std::string &fortunesDir = "");

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_SEQUENCESOURCE_H
