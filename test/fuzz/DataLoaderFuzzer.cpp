//===- DataLoaderFuzzer.cpp - libFuzzer target for the runtime's readers --===//
//
// Every file the runtime reads from outside: idx images and labels (plain
// or gzipped, through loadIdxClassification, as a data set is loaded), a
// run checkpoint, an artifact's manifest (which must also come back the
// same when written and read again), sequence data (JSONL, .mbtseq, a
// fortunes file), and the user's own data: .npy, .npz, .safetensors, CSV
// and PNG or JPEG images, and a warm start's weights (.safetensors, or a
// .pt file as torch.save writes it: a zip archive holding a pickle).
// The first byte picks the reader; the rest is the file.
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
#include "mbt/runtime/InitCheckpoint.h"
#include "mbt/runtime/LengthBatching.h"
#include "mbt/runtime/Manifest.h"
#include "mbt/runtime/ModelStatus.h"
#include "mbt/runtime/SequenceFiles.h"
#include "mbt/runtime/data/Arrays.h"
#include "mbt/runtime/data/Csv.h"
#include "mbt/runtime/data/ImageFolder.h"
#include "mbt/runtime/data/Numpy.h"
#include "mbt/runtime/data/Safetensors.h"
#include "mbt/runtime/data/TorchCheckpoint.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

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

/// Converts every element of `array`, then (up to 4096 samples) loads it
/// as a data set would: as the input against zero labels, or with `asTargets`
/// as the regression targets of a zero input.
void useArray(const mbt::runtime::ArrayView &array, bool asTargets) {
  using namespace mbt::runtime;
  float chunk[1024];
  auto *bytes = static_cast<const unsigned char *>(array.data);
  int64_t total = array.elements();
  for (int64_t done = 0; done < total; done += 1024)
    convertToFloat(array.type, bytes + done * elementSize(array.type),
                   size_t(std::min<int64_t>(1024, total - done)), chunk);
  if (array.shape.empty() || array.shape[0] > 4096)
    return;
  int64_t n = array.shape[0];
  std::vector<float> zeros(n, 0.0f);
  ArrayView other;
  other.origin = "'other'";
  other.shape = {n};
  other.data = zeros.data();
  SampleLayout layout;
  if (asTargets && array.shape.size() <= 2) {
    other.type = ElementType::F32;
    layout.inputShape = {1};
    layout.target = SampleLayout::Target::Values;
    layout.targetWidth = array.shape.size() == 2 ? array.shape[1] : 1;
    datasetFromArrays(other, array, layout, "fuzz");
    return;
  }
  other.type = ElementType::I32; // zeros are zeros in either type
  layout.inputShape.assign(array.shape.begin() + 1, array.shape.end());
  layout.classes = 1;
  datasetFromArrays(array, other, layout, "fuzz");
}

/// Reads and uses every array `read` finds under `names` (at most 8), each
/// on its own: one bad array must not hide the others from the fuzzer.
template <typename Read>
void useEach(const std::vector<std::string> &names, bool asTargets, Read read) {
  for (size_t i = 0; i < names.size() && i < 8; ++i) {
    try {
      useArray(read(names[i]), asTargets);
    } catch (const mbt::runtime::RuntimeError &) {
    }
  }
}

/// Reads a table with 2 features and 3 classes (or one regression target);
/// the first byte's bits pick the header, the delimiter, the target (the
/// index "0" or the name "y"), whether NaN is allowed and the target kind.
/// Read again as the test split against its own class names, an accepted
/// file must give the same labels.
void checkCsv(const uint8_t *data, size_t size) {
  using namespace mbt::runtime;
  if (size == 0)
    return;
  uint8_t mode = data[0];
  std::string path = scratch("table.csv");
  writeFile(path, data + 1, size - 1);
  CsvOptions options;
  options.header = mode & 1;
  options.delimiter = mode & 2 ? '\t' : ',';
  options.target = options.header && mode & 4 ? "y" : "0";
  options.missing =
      mode & 8 ? CsvOptions::Missing::Mean : CsvOptions::Missing::Error;
  SampleLayout layout;
  layout.inputShape = {2};
  layout.classes = 3;
  if (mode & 16) {
    layout.target = SampleLayout::Target::Values;
    layout.targetWidth = 1;
  }
  Dataset train = readCsvDataset(path, options, layout, nullptr, "fuzz");
  bool labelsOk = std::all_of(train.y.begin(), train.y.end(),
                              [](int32_t y) { return y >= 0 && y < 3; });
  if (train.x.size() != size_t(train.count) * 2 || !labelsOk ||
      train.y.size() + train.targets.size() != size_t(train.count))
    __builtin_trap();
  Dataset test;
  try {
    test = readCsvDataset(path, options, layout, &train.classNames, "test");
  } catch (const RuntimeError &error) {
    std::fprintf(stderr,
                 "mbt-data-fuzzer: a CSV file read as a training "
                 "split fails as its own test split: %s\n",
                 error.what());
    std::abort();
  }
  if (test.y != train.y)
    __builtin_trap();
  if (options.missing != CsvOptions::Missing::Error) {
    // Filled, no feature is missing any more (a feature with no value at
    // all is an error, not a NaN left behind).
    Imputation fill;
    try {
      fill = fitImputation(train, options.missing);
    } catch (const RuntimeError &) {
      return;
    }
    fillMissing(fill, train);
    if (std::any_of(train.x.begin(), train.x.end(),
                    [](float v) { return std::isnan(v); }))
      __builtin_trap();
  }
  applyStandardization(fitStandardization(train), train);
}

/// The file as the warm start of two models with w [2, 2] (stored
/// transposed) and b [2]; partial, so a file of any names is taken.
void checkInitCheckpoint(const std::string &path, bool f64) {
  using namespace mbt::runtime;
  Manifest m;
  m.model = "fuzz";
  m.models = 2;
  m.params = {{"w", {2, 2}, 0, 4, {}}, {"b", {2}, 4, 2, {}}};
  m.paramCount = 6;
  mbt::InitCheckpointSpec init;
  init.files = {path};
  init.transpose = {"w"};
  init.partial = true;
  m.initCheckpoint = init;
  mbt::DType type = f64 ? mbt::DType::F64 : mbt::DType::F32;
  FloatBuffer params(type, 12, "params"), buffers(type, 0, "buffers");
  loadInitCheckpoint(m, params, buffers);
  for (int64_t i = 0; i < 12; ++i)
    if (!std::isfinite(params.get(i)))
      __builtin_trap(); // a loaded value is checked finite
}

/// The bytes as the one image of a one-class image folder, read as 8x8
/// gray: decoded (PNG or JPEG by the magic), converted, resized, cropped.
/// `smallLimits` keeps the odd run fast; the others keep the real limits.
void checkImage(const uint8_t *data, size_t size, bool smallLimits) {
  using namespace mbt::runtime;
  static const std::string dir = scratch("images");
  static const std::string path = [] {
    std::string classDir = dir + "/cls";
    mkdir(dir.c_str(), 0700);
    mkdir(classDir.c_str(), 0700);
    return classDir + "/image.png";
  }();
  writeFile(path, data, size);
  ImageFolderOptions options;
  options.threads = 1;
  if (smallLimits)
    options.limits = {1024, int64_t(1) << 20};
  SampleLayout layout;
  layout.inputShape = {1, 8, 8};
  layout.classes = 2;
  Dataset images = readImageFolder(dir, options, layout, nullptr, "fuzz");
  if (images.count != 1 || images.x.size() != 64)
    __builtin_trap();
}

/// Bytes another rank of a run sent as its models' status
/// (ModelStatus::toBytes); what parses writes back to the same bytes.
void checkModelStatus(const uint8_t *data, size_t size) {
  std::string bytes(reinterpret_cast<const char *>(data), size);
  mbt::runtime::ModelStatus status =
      mbt::runtime::ModelStatus::fromBytes(bytes);
  if (mbt::runtime::ModelStatus::fromBytes(status.toBytes()).toBytes() !=
      status.toBytes())
    __builtin_trap();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  using namespace mbt::runtime;
  uint8_t which = data[0] % 14;
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
    // Readers of the user's own data (runtime/include/mbt/runtime/data/).
    case 8: { // .npy; the first byte's other bits pick input or targets
      std::string path = scratch("data.npy");
      writeFile(path, file, n);
      useArray(readNpy(path), data[0] / 14 % 2);
      break;
    }
    case 9: { // every array of an .npz
      std::string path = scratch("data.npz");
      writeFile(path, file, n);
      useEach(
          npzArrayNames(path), data[0] / 14 % 2,
          [&](const std::string &name) { return readNpzArray(path, name); });
      break;
    }
    case 10: { // every tensor of a .safetensors or .pt file (told apart
               // as a warm start tells them), then as a warm start
      std::string path = scratch("data.checkpoint");
      writeFile(path, file, n);
      try {
        if (isTorchFile(path)) {
          StateDict tensors = readTorchStateDict(path);
          for (size_t i = 0; i < tensors.size() && i < 8; ++i)
            useArray(tensors[i].second, data[0] / 14 % 2);
        } else {
          useEach(safetensorNames(path), data[0] / 14 % 2,
                  [&](const std::string &name) {
                    return readSafetensor(path, name);
                  });
        }
      } catch (const RuntimeError &) {
      }
      checkInitCheckpoint(path, data[0] / 14 % 2);
      break;
    }
    case 11:
      checkCsv(file, n);
      break;
    case 12: // a PNG or JPEG image
      checkImage(file, n, data[0] / 14 % 2);
      break;
    case 13: // a model status another rank sent: read back as written
      checkModelStatus(file, n);
      break;
    }
  } catch (const RuntimeError &) {
  }
  return 0;
}
