//===- FashionMnist.cpp - Fashion-MNIST loader ----------------------------===//
//
// Pairs an images file with a labels file and checks that they agree, then
// converts pixels to floats once, up front, so the training loop only copies.
//
//===----------------------------------------------------------------------===//

#include "mbt/runtime/FashionMnist.h"

#include "mbt/runtime/Error.h"
#include "mbt/runtime/IdxReader.h"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>

namespace mbt {
namespace runtime {

namespace {
constexpr const char *kSystemDir = "/usr/share/datasets/fashion-mnist";
constexpr int32_t kFashionMnistClasses = 10;

/// DIR/NAME.gz, or DIR/NAME when only the uncompressed file is there. The
/// .gz name is returned when neither exists so the error names what Debian
/// ships.
std::string locate(const std::string &dir, const std::string &name) {
  namespace fs = std::filesystem;
  fs::path gz = fs::path(dir) / (name + ".gz");
  fs::path plain = fs::path(dir) / name;
  std::error_code error;
  if (!fs::exists(gz, error) && fs::exists(plain, error))
    return plain.string();
  return gz.string();
}

/// Adds the install hint to "cannot open" errors only: other errors (bad
/// magic, truncation) mean the file is there but broken.
[[noreturn]] void rethrowWithHint(const RuntimeError &error) {
  std::string message = error.what();
  if (message.rfind("cannot open", 0) == 0)
    message += " (install Debian's dataset-fashion-mnist package, or point "
               "--data-dir / MBT_DATA_DIR at a directory holding the "
               "Fashion-MNIST idx files)";
  throw RuntimeError(message);
}
} // namespace

std::string defaultFashionMnistDir() {
  const char *env = std::getenv("MBT_DATA_DIR");
  if (env && *env)
    return env;
  return kSystemDir;
}

Dataset loadIdxClassification(const std::string &imagesPath,
                              const std::string &labelsPath,
                              const std::string &name) {
  IdxArray images = readIdxFile(imagesPath, kIdxImagesMagic);
  IdxArray labels = readIdxFile(labelsPath, kIdxLabelsMagic);
  if (images.dims[1] == 0 || images.dims[2] == 0)
    throw RuntimeError(fmt::format("'{}' has empty images ({}x{})", imagesPath,
                                   images.dims[1], images.dims[2]));
  if (images.dims[0] != labels.dims[0])
    throw RuntimeError(
        fmt::format("'{}' holds {} images but '{}' holds {} labels", imagesPath,
                    images.dims[0], labelsPath, labels.dims[0]));
  Dataset data;
  data.name = name;
  data.count = images.dims[0];
  data.numFeatures = int64_t(images.dims[1]) * images.dims[2];
  data.numClasses = kFashionMnistClasses;
  data.y.resize(data.count);
  for (int64_t i = 0; i < data.count; ++i) {
    if (labels.data[i] >= kFashionMnistClasses)
      throw RuntimeError(
          fmt::format("'{}': label {} of sample {} is out of range [0, {})",
                      labelsPath, labels.data[i], i, kFashionMnistClasses));
    data.y[i] = labels.data[i];
  }
  data.x.resize(images.data.size());
  for (size_t i = 0; i < images.data.size(); ++i)
    data.x[i] = static_cast<float>(images.data[i]) / 255.0f;
  return data;
}

Dataset loadFashionMnist(Split split, const std::string &dataDir) {
  std::string dir = dataDir.empty() ? defaultFashionMnistDir() : dataDir;
  std::string prefix = split == Split::Train ? "train" : "t10k";
  std::string images = locate(dir, prefix + "-images-idx3-ubyte");
  std::string labels = locate(dir, prefix + "-labels-idx1-ubyte");
  try {
    return loadIdxClassification(
        images, labels,
        std::string("fashion_mnist/") +
            (split == Split::Train ? "train" : "test"));
  } catch (const RuntimeError &error) {
    rethrowWithHint(error);
  }
}

DataSplits loadDataSplits(const std::string &dataName,
                          const std::string &dataDir) {
  if (dataName != "fashion_mnist")
    throw RuntimeError("unsupported data set '" + dataName +
                       "' (this runtime knows: fashion_mnist)");
  DataSplits splits;
  splits.train = loadFashionMnist(Split::Train, dataDir);
  splits.test = loadFashionMnist(Split::Test, dataDir);
  return splits;
}

} // namespace runtime
} // namespace mbt
