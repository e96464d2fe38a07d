//===- DataLoaderFuzzer.cpp - libFuzzer target for the runtime's readers --===//
//
// Every file the runtime reads from outside: idx images and labels (plain
// or gzipped, through loadIdxClassification, as a data set is loaded), a
// run checkpoint, an artifact's manifest (which must also come back the
// same when written and read again), sequence data (JSONL, .mbtseq, a
// fortunes file). The first byte picks the reader; the rest is the file.
// One more case checks the batcher's promises on arbitrary lengths and
// settings: every sample in exactly one step, no step over the budget. A reader
// must accept the bytes or throw mbt::runtime::RuntimeError; a crash, a
// sanitizer report, a leak, another exception or a huge allocation (an idx
// header that claims more than the file holds) is a finding.
//
//===----------------------------------------------------------------------===//
#include "mbt/runtime/Checkpoint.h"
#include "mbt/runtime/Error.h"
#include "mbt/runtime/FashionMnist.h"
#include "mbt/runtime/Fortunes.h"
#include "mbt/runtime/IdxReader.h"
#include "mbt/runtime/LengthBatching.h"
#include "mbt/runtime/Manifest.h"
#include "mbt/runtime/SequenceFiles.h"

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

/// A file per process for the readers that take a path.
std::string scratch(const char *name) {
  static const std::string dir = [] {
    char pattern[] = "/tmp/mbt-data-fuzz-XXXXXX";
    const char *made = mkdtemp(pattern);
    return std::string(made ? made : "/tmp");
  }();
  return dir + "/" + name;
}

void writeFile(const std::string &path, const uint8_t *data, size_t size) {
  FILE *f = std::fopen(path.c_str(), "wb");
  if (!f)
    return;
  if (size)
    std::fwrite(data, 1, size, f);
  std::fclose(f);
}

/// Labels for `n` images: n zeros, as a valid idx labels file.
void writeLabels(const std::string &path, uint32_t n) {
  std::string bytes = {0, 0, 8, 1};
  for (int i = 3; i >= 0; --i)
    bytes.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  bytes.append(n, '\0');
  writeFile(path, reinterpret_cast<const uint8_t *>(bytes.data()),
            bytes.size());
}

/// Plans an epoch of lengths 1..256 read from the bytes, with a window,
/// budget and step cost from the first three, and traps unless every
/// sample lands in exactly one step that fits the budget.
void checkBatching(const uint8_t *data, size_t size) {
  using namespace mbt::runtime;
  if (size < 3)
    return;
  mbt::runtime::BatchingOptions options;
  options.strategy = static_cast<BatchingStrategy>(data[0] % 4);
  options.window = 1 + data[0] / 4;
  options.tokenBudget = 256 + 16 * int64_t(data[1]);
  options.stepCost = 8 * int64_t(data[2]);
  options.seed = data[1];
  std::vector<int64_t> lengths;
  for (size_t i = 3; i < size; ++i)
    lengths.push_back(1 + data[i]);
  std::vector<int> seen(lengths.size(), 0);
  for (const LengthGroup &step : planEpoch(lengths, options, 0)) {
    if (step.samples.empty() || step.paddedTokens() > options.tokenBudget)
      __builtin_trap();
    for (int64_t sample : step.samples)
      if (lengths[sample] > step.paddedLength || ++seen[sample] != 1)
        __builtin_trap();
  }
  for (int count : seen)
    if (count != 1)
      __builtin_trap();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  using namespace mbt::runtime;
  uint8_t which = data[0] % 8;
  const uint8_t *file = data + 1;
  size_t n = size - 1;
  try {
    switch (which) {
    case 0: { // an images file, with labels that fit up to 64 images
      std::string images = scratch("images"), labels = scratch("labels");
      writeFile(images, file, n);
      uint32_t count =
          n >= 8 ? (uint32_t(file[4]) << 24 | uint32_t(file[5]) << 16 |
                    uint32_t(file[6]) << 8 | file[7])
                 : 0;
      writeLabels(labels, count < 64 ? count : 64);
      loadIdxClassification(images, labels, "fuzz");
      break;
    }
    case 1: { // a labels file, read on its own
      std::string labels = scratch("labels-only");
      writeFile(labels, file, n);
      readIdxFile(labels, kIdxLabelsMagic);
      break;
    }
    case 2:
      parseCheckpoint(std::string(reinterpret_cast<const char *>(file), n),
                      "fuzz");
      break;
    case 3: {
      // A manifest the reader accepts must survive writing and reading
      // back (the compiler writes what the runtime reads, one schema).
      Manifest manifest = parseManifest(
          std::string(reinterpret_cast<const char *>(file), n), "fuzz");
      std::string written = mbt::writeManifest(manifest);
      if (mbt::writeManifest(parseManifest(written, "fuzz")) != written) {
        std::fprintf(stderr,
                     "mbt-data-fuzzer: a manifest changed when "
                     "written and read back:\n%s\n",
                     written.c_str());
        std::abort();
      }
      break;
    }
    case 4: {
      std::string path = scratch("data.jsonl");
      writeFile(path, file, n);
      loadJsonlSequences(path);
      break;
    }
    case 5: {
      std::string path = scratch("data.mbtseq");
      writeFile(path, file, n);
      readSequenceFile(path);
      break;
    }
    case 6:
      splitFortunes(std::string(reinterpret_cast<const char *>(file), n));
      break;
    case 7:
      checkBatching(file, n);
      break;
    }
  } catch (const RuntimeError &) {
  }
  return 0;
}
