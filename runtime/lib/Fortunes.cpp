//===- Fortunes.cpp - The embedded default text task ----------------------===//

#include "mbt/runtime/Fortunes.h"

#include "mbt/runtime/ByteTokenizer.h"
#include "mbt/runtime/Error.h"
#include "mbt/runtime/FileUtil.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

namespace mbt {
namespace runtime {

namespace {
constexpr const char *kSystemDir = "/usr/share/games/fortunes";

/// The category files of `dir`, sorted: regular files (or links to them)
/// whose names have no dot.
std::vector<std::string> categoryNames(const std::string &dir) {
  namespace fs = std::filesystem;
  std::error_code error;
  fs::directory_iterator entry(dir, error);
  if (error)
    throw RuntimeError(fmt::format(
        "cannot open the fortunes directory '{}': {} (install it with "
        "'apt-get install fortunes', or set MBT_FORTUNES_DIR)",
        dir, error.message()));
  std::vector<std::string> names;
  // (increment with an error_code: a failing readdir ends the listing.)
  for (; !error && entry != fs::directory_iterator(); entry.increment(error)) {
    std::string name = entry->path().filename().string();
    if (name.empty() || name.find('.') != std::string::npos)
      continue;
    std::error_code statError; // an entry that cannot be stat'ed is skipped
    if (entry->is_regular_file(statError))
      names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  if (names.empty())
    throw RuntimeError(fmt::format(
        "the fortunes directory '{}' holds no fortune files (install them "
        "with 'apt-get install fortunes')",
        dir));
  return names;
}
} // namespace

std::string defaultFortunesDir() {
  const char *env = std::getenv("MBT_FORTUNES_DIR");
  if (env && *env)
    return env;
  return kSystemDir;
}

std::vector<std::string> splitFortunes(const std::string &contents) {
  std::vector<std::string> texts;
  std::string current;
  size_t start = 0;
  auto finish = [&] {
    if (current.find_first_not_of(" \t\n") != std::string::npos)
      texts.push_back(current);
    current.clear();
  };
  while (start < contents.size()) {
    size_t end = contents.find('\n', start);
    size_t next = end == std::string::npos ? contents.size() : end + 1;
    std::string_view line(contents.data() + start,
                          (end == std::string::npos ? contents.size() : end) -
                              start);
    if (line == "%")
      finish();
    else
      current.append(contents, start, next - start);
    start = next;
  }
  finish();
  return texts;
}

SequenceSplits loadFortunes(const std::string &dirIn, int64_t maxLength) {
  std::string dir = dirIn.empty() ? defaultFortunesDir() : dirIn;
  SequenceSplits splits;
  splits.train.name = "fortunes/train";
  splits.test.name = "fortunes/test";
  std::vector<std::string> categories = categoryNames(dir);
  for (size_t label = 0; label < categories.size(); ++label) {
    std::vector<std::string> texts = splitFortunes(readInputFile(
        (std::filesystem::path(dir) / categories[label]).string()));
    for (size_t i = 0; i < texts.size(); ++i) {
      std::vector<int32_t> tokens = encodeBytes(texts[i]);
      int64_t length = static_cast<int64_t>(tokens.size());
      if (maxLength > 0)
        length = std::min(length, maxLength);
      SequenceDataset &split = i % 10 == 9 ? splits.test : splits.train;
      split.append(tokens.data(), length, static_cast<int32_t>(label));
    }
  }
  for (SequenceDataset *split : {&splits.train, &splits.test}) {
    split->vocabSize = kByteVocabSize;
    split->labelNames = categories;
  }
  return splits;
}

SequenceSplits loadSequenceSplits(const std::string &name, int64_t maxLength) {
  if (name != "fortunes")
    throw RuntimeError("unsupported sequence data set '" + name +
                       "' (this runtime knows: fortunes)");
  return loadFortunes("", maxLength);
}

} // namespace runtime
} // namespace mbt
