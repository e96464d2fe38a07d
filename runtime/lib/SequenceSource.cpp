//===- SequenceSource.cpp - A sequence data set named by a string ---------===//

#include "mbt/runtime/SequenceSource.h"

#include "mbt/runtime/Error.h"
#include "mbt/runtime/Fortunes.h"

namespace mbt {
namespace runtime {

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
