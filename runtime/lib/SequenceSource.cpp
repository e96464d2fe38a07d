//===- SequenceSource.cpp - A sequence data set named by a string ---------===//

#include "mbt/runtime/SequenceSource.h"

#include "mbt/runtime/Error.h"
#include "mbt/runtime/Fortunes.h"

namespace mbt {
namespace runtime {

SequenceDataset loadSequenceFile(const std::string &path,
                                 const SequenceLoadOptions &options) {
  auto endsWith = [&](const std::string &suffix) {
    return path.size() >= suffix.size() &&
           path.compare(path.size() - suffix.size(), suffix.size(), suffix) ==
               0;
  };
  if (endsWith(".jsonl"))
    return loadJsonlSequences(path, options);
  if (endsWith(".mbtseq"))
    return readSequenceFile(path, options);
  throw RuntimeError("'" + path +
                     "': unknown sequence data format (expected a name "
                     "ending in .jsonl or .mbtseq)");
}

SequenceDataset loadSequenceSource(const std::string &source,
                                   const SequenceLoadOptions &options,
                                   const std::string &fortunesDir) {
  if (source == "fortunes" || source == "fortunes:train" ||
      source == "fortunes:test") {
    SequenceSplits splits = loadFortunes(fortunesDir, options.maxLength);
    return source == "fortunes:test" ? std::move(splits.test)
                                     : std::move(splits.train);
  }
  if (source.rfind("fortunes:", 0) == 0)
    throw RuntimeError("unknown fortunes split '" + source.substr(9) +
                       "' (expected fortunes:train or fortunes:test)");
  return loadSequenceFile(source, options);
}

} // namespace runtime
} // namespace mbt
