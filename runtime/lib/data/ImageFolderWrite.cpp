//===- ImageFolderWrite.cpp - A data set as a folder of PNGs --------------===//
//
// The inverse of readImageFolder for 8-bit images: a user who wants to try
// image_folder data, or to compare mbt's loader with torchvision's, gets a
// folder from the built-in data set without Python.
//
//===----------------------------------------------------------------------===//
#include "mbt/runtime/data/ImageFolder.h"

#include "mbt/runtime/Error.h"
#include "mbt/runtime/FileUtil.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

namespace mbt {
namespace runtime {

namespace {

/// Sample i's floats as 8-bit pixels in row-major [H, W, C] order (PNG's),
/// from [C, H, W]; a value that is not p / 255 for an integer p in
/// [0, 255] is an error.
Image samplePixels(const Dataset &data, int64_t i, int64_t channels,
                   int64_t height, int64_t width) {
  Image image;
  image.width = width;
  image.height = height;
  image.channels = channels;
  image.pixels.resize(channels * height * width);
  const float *x = data.sample(i);
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t p = 0; p < height * width; ++p) {
      float value = x[c * height * width + p] * 255.0f;
      float level = std::round(value);
      if (!(level >= 0 && level <= 255) || std::abs(value - level) > 1e-3f)
        throw RuntimeError(fmt::format(
            "{}: sample {} holds {} at feature {}, which is not an 8-bit "
            "pixel / 255",
            data.name, i, x[c * height * width + p], c * height * width + p));
      image.pixels[p * channels + c] = static_cast<uint8_t>(level);
    }
  return image;
}

void requireEmptyOrMissing(const std::string &dir) {
  std::error_code error;
  if (!std::filesystem::exists(dir, error))
    return;
  if (!std::filesystem::is_directory(dir, error) ||
      !std::filesystem::is_empty(dir, error))
    throw RuntimeError(fmt::format(
        "'{}' exists and is not an empty directory; give a new one (nothing "
        "was written)",
        dir));
}

} // namespace

int64_t writeImageFolder(const Dataset &data, int64_t channels, int64_t height,
                         int64_t width,
                         const std::vector<std::string> &classNames,
                         const std::string &dir, int64_t perClass) {
  if (data.numFeatures != channels * height * width)
    throw RuntimeError(fmt::format("{}: samples of {} features are not "
                                   "images of {} x {} x {}",
                                   data.name, data.numFeatures, channels,
                                   height, width));
  if (static_cast<int64_t>(classNames.size()) < data.numClasses)
    throw RuntimeError(fmt::format("{}: {} classes but {} class names",
                                   data.name, data.numClasses,
                                   classNames.size()));
  requireEmptyOrMissing(dir);
  for (int64_t c = 0; c < data.numClasses; ++c)
    createDirectories(dir + "/" + classNames[c]);
  int digits = std::max<int>(5, std::to_string(data.count).size());
  std::vector<int64_t> written(data.numClasses, 0);
  int64_t total = 0;
  for (int64_t i = 0; i < data.count; ++i) {
    int32_t label = data.y[i];
    if (perClass > 0 && written[label] >= perClass)
      continue;
    writePng(
        samplePixels(data, i, channels, height, width),
        fmt::format("{}/{}/{:0{}}.png", dir, classNames[label], i, digits));
    ++written[label];
    ++total;
  }
  return total;
}

} // namespace runtime
} // namespace mbt
