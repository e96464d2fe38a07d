//===- DataSources.cpp - the data a manifest names, loaded ----------------===//
#include "mbt/runtime/data/DataSources.h"

#include "mbt/runtime/Error.h"
#include "mbt/runtime/data/Arrays.h"
#include "mbt/runtime/data/Csv.h"
#include "mbt/runtime/data/ImageFolder.h"
#include "mbt/runtime/data/Numpy.h"
#include "mbt/runtime/data/Safetensors.h"

#include <fmt/format.h>

#include <filesystem>
#include <functional>

namespace mbt {
namespace runtime {

SampleLayout sampleLayout(const Manifest &manifest) {
  SampleLayout layout;
  layout.inputShape = manifest.inputShape;
  layout.classes = manifest.classes;
  if (manifest.targetKind == Manifest::TargetKind::Values) {
    layout.target = SampleLayout::Target::Values;
    layout.targetWidth = manifest.targetWidth;
  }
  return layout;
}

Dataset emptySplit(const SampleLayout &layout, const std::string &name) {
  Dataset data;
  data.name = name;
  data.numFeatures = layout.features();
  data.numClasses = layout.classes;
  if (layout.target == SampleLayout::Target::Values)
    data.targetWidth = layout.targetWidth;
  return data;
}

namespace {

/// A runtime configured without one reader (MBT_WITH_IMAGES or
/// MBT_WITH_NPZ off, for a host without its library) refuses that data.
[[maybe_unused]] RuntimeError builtWithout(const std::string &kind,
                                           const char *option) {
  return RuntimeError(fmt::format(
      "this runtime was built without {} data (configured with -D{}=OFF); "
      "rebuild it with -D{}=ON",
      kind, option, option));
}

std::string fileName(const std::string &path) {
  return std::filesystem::path(path).filename().string();
}

/// npz, npy and safetensors: an input array and a target array per split,
/// found by `read(file, array)`.
DataSplits loadArrays(
    const DataSource &s, const SampleLayout &layout,
    const std::function<ArrayView(const std::string &, const std::string &)>
        &read) {
  DataSplits splits;
  splits.train = datasetFromArrays(read(s.train, s.x), read(s.train, s.y),
                                   layout, fileName(s.train));
  splits.test = s.test.empty()
                    ? emptySplit(layout, fileName(s.train) + "/test")
                    : datasetFromArrays(read(s.test, s.x), read(s.test, s.y),
                                        layout, fileName(s.test));
  return splits;
}

DataSplits loadNpy(const DataSource &s, const SampleLayout &layout) {
  DataSplits splits;
  splits.train = datasetFromArrays(readNpy(s.trainX), readNpy(s.trainY), layout,
                                   fileName(s.trainX));
  splits.test = s.testX.empty()
                    ? emptySplit(layout, fileName(s.trainX) + "/test")
                    : datasetFromArrays(readNpy(s.testX), readNpy(s.testY),
                                        layout, fileName(s.testX));
  return splits;
}

DataSplits loadCsv(const DataSource &s, const SampleLayout &layout) {
  CsvOptions options;
  options.target = s.target;
  options.columns = s.columns;
  options.header = s.header;
  options.skipRows = s.skipRows;
  options.delimiter = s.delimiter.empty() ? 0 : s.delimiter[0];
  options.missing = s.missing == "mean"   ? CsvOptions::Missing::Mean
                    : s.missing == "zero" ? CsvOptions::Missing::Zero
                                          : CsvOptions::Missing::Error;
  DataSplits splits;
  splits.train =
      readCsvDataset(s.train, options, layout, nullptr, fileName(s.train));
  splits.test = s.test.empty() ? emptySplit(layout, fileName(s.train) + "/test")
                               : readCsvDataset(s.test, options, layout,
                                                &splits.train.classNames,
                                                fileName(s.test));
  if (options.missing != CsvOptions::Missing::Error) {
    // As a pipeline of SimpleImputer then StandardScaler: the training
    // split's means fill both splits, and standardization sees them.
    Imputation imputation = fitImputation(splits.train, options.missing);
    fillMissing(imputation, splits.train);
    fillMissing(imputation, splits.test);
  }
  if (s.standardize) {
    // The training split's statistics scale both: the test split must not
    // leak into what the models see.
    Standardization scale = fitStandardization(splits.train);
    applyStandardization(scale, splits.train);
    applyStandardization(scale, splits.test);
  }
  return splits;
}

DataSplits loadImageFolder([[maybe_unused]] const DataSource &s,
                           [[maybe_unused]] const SampleLayout &layout) {
#ifndef MBT_HAVE_IMAGES
  throw builtWithout("image_folder", "MBT_WITH_IMAGES");
#else
  // One value stands for every channel; none is mean 0, std 1.
  int64_t channels = layout.inputShape.size() == 3 ? layout.inputShape[0] : 1;
  auto perChannel = [&](const std::vector<double> &values, float unset) {
    if (values.size() > 1)
      return std::vector<float>(values.begin(), values.end());
    return std::vector<float>(channels,
                              values.empty() ? unset : float(values[0]));
  };
  ImageFolderOptions options;
  if (!s.mean.empty() || !s.stddev.empty()) {
    options.mean = perChannel(s.mean, 0.0f);
    options.std = perChannel(s.stddev, 1.0f);
  }
  DataSplits splits;
  splits.train =
      readImageFolder(s.train, options, layout, nullptr, fileName(s.train));
  splits.test = s.test.empty() ? emptySplit(layout, fileName(s.train) + "/test")
                               : readImageFolder(s.test, options, layout,
                                                 &splits.train.classNames,
                                                 fileName(s.test));
  return splits;
#endif
}

DataSplits loadNpz([[maybe_unused]] const DataSource &s,
                   [[maybe_unused]] const SampleLayout &layout) {
#ifndef MBT_HAVE_NPZ
  throw builtWithout("npz", "MBT_WITH_NPZ");
#else
  return loadArrays(s, layout, readNpzArray);
#endif
}

} // namespace

DataSplits loadDataSource(const Manifest &manifest,
                          const std::string &dataDir) {
  const DataSpec &data = manifest.data;
  if (!isFileDataSet(data.name))
    return loadDataSplits(data.name, dataDir);
  SampleLayout layout = sampleLayout(manifest);
  const DataSource &s = data.source;
  if (data.name == "npy")
    return loadNpy(s, layout);
  if (data.name == "npz")
    return loadNpz(s, layout);
  if (data.name == "safetensors")
    return loadArrays(s, layout, readSafetensor);
  if (data.name == "csv")
    return loadCsv(s, layout);
  return loadImageFolder(s, layout);
}

namespace {
/// The shape of the input array of one split, from its file's header.
std::vector<int64_t> inputArrayShape(const std::string &kind,
                                     const std::string &file,
                                     const std::string &array,
                                     std::string &origin) {
  if (kind == "npy") {
    ArrayView x = readNpy(file); // mapped: its data is not read
    origin = x.origin;
    return x.shape;
  }
  if (kind == "npz") {
#ifndef MBT_HAVE_NPZ
    throw builtWithout("npz", "MBT_WITH_NPZ");
#else
    origin = fmt::format("'{}': array '{}'", file, array);
    return readNpzArrayHeader(file, array).shape;
#endif
  }
  ArrayView x = readSafetensor(file, array); // mapped as well
  origin = x.origin;
  return x.shape;
}
} // namespace

std::string checkArrayHeaders(const std::string &manifestJson) noexcept {
  try {
    Manifest manifest = parseManifest(manifestJson, "the artifact");
    const std::string &kind = manifest.data.name;
    const DataSource &s = manifest.data.source;
    std::vector<std::pair<std::string, std::string>> inputs;
    if (kind == "npy")
      inputs = {{s.trainX, ""}, {s.testX, ""}};
    else if (kind == "npz" || kind == "safetensors")
      inputs = {{s.train, s.x}, {s.test, s.x}};
    SampleLayout layout = sampleLayout(manifest);
    for (const auto &[file, array] : inputs) {
      std::error_code missing;
      if (file.empty() || !std::filesystem::is_regular_file(file, missing))
        continue;
      std::string origin;
      std::vector<int64_t> shape = inputArrayShape(kind, file, array, origin);
      checkSampleShape(origin, shape, layout);
    }
  } catch (const std::exception &error) {
    return error.what();
  }
  return "";
}

} // namespace runtime
} // namespace mbt
