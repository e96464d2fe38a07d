//===- ImageFolder.cpp - A folder of class folders of images --------------===//
//
// The walk copies torchvision's make_dataset: `sorted(os.walk(...))` orders
// directories by their whole path (so "a-b" comes before "a/x"), which is
// why the walk first collects every directory and then sorts, instead of
// recursing in sorted order.
//
// The resampling is PIL's Resample.c for 8-bit images, step for step:
// double-precision triangle-filter weights whose support grows with the
// shrink factor (precompute_coeffs), turned into 22-bit fixed point
// (normalize_coeffs_8bpc), a horizontal pass rounded to 8 bits, then a
// vertical one. Matching its integer rounding, not merely its formula, is
// what makes our pixels equal to those torchvision trains on.
//
//===----------------------------------------------------------------------===//

#include "mbt/runtime/data/ImageFolder.h"

#include "mbt/runtime/Error.h"
#include "mbt/runtime/FileUtil.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <system_error>
#include <thread>

namespace mbt {
namespace runtime {

namespace fs = std::filesystem;

namespace {

//===--- The walk -----------------------------------------------------===//

/// torchvision's IMG_EXTENSIONS, less the formats we cannot decode.
bool isImageName(const std::string &name) {
  std::string lower = name;
  for (char &c : lower)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char *extension : {".png", ".jpg", ".jpeg"}) {
    size_t n = std::strlen(extension);
    if (lower.size() >= n && lower.compare(lower.size() - n, n, extension) == 0)
      return true;
  }
  return false;
}

/// A directory's sub-directories and other entries (files, broken links),
/// by name, following links as os.scandir's is_dir() does.
void listDirectory(const fs::path &dir, std::vector<std::string> &subdirs,
                   std::vector<std::string> &files) {
  std::error_code error;
  fs::directory_iterator it(dir, error);
  for (; !error && it != fs::directory_iterator(); it.increment(error)) {
    std::error_code statError;
    std::string name = it->path().filename().string();
    if (it->is_directory(statError))
      subdirs.push_back(name);
    else
      files.push_back(name);
  }
  if (error)
    throw RuntimeError(
        fmt::format("'{}': cannot list: {}", dir.string(), error.message()));
}

struct WalkedDir {
  std::string root;
  std::vector<std::string> files;
};

/// os.walk(dir, followlinks=True), except that a link back to a directory
/// being walked is an error instead of an endless walk.
void walk(const fs::path &dir, std::vector<fs::path> &chain,
          std::vector<WalkedDir> &out) {
  for (const fs::path &ancestor : chain) {
    std::error_code error;
    if (fs::equivalent(dir, ancestor, error))
      throw RuntimeError(fmt::format("'{}': a symbolic link loops back to '{}'",
                                     dir.string(), ancestor.string()));
  }
  std::vector<std::string> subdirs;
  WalkedDir walked{dir.string(), {}};
  listDirectory(dir, subdirs, walked.files);
  out.push_back(std::move(walked));
  chain.push_back(dir);
  for (const std::string &subdir : subdirs)
    walk(dir / subdir, chain, out);
  chain.pop_back();
}

//===--- Resampling ---------------------------------------------------===//

/// PIL's PRECISION_BITS for 8-bit images.
constexpr int kPrecisionBits = 32 - 8 - 2;

/// For each output pixel: the first input pixel, how many follow, and
/// their fixed-point weights (kernelSize slots each).
struct Coefficients {
  int64_t kernelSize = 0;
  std::vector<int64_t> first, count;
  std::vector<int32_t> weights;
};

double triangle(double x) {
  x = std::fabs(x);
  return x < 1.0 ? 1.0 - x : 0.0;
}

/// PIL's precompute_coeffs + normalize_coeffs_8bpc for outputs
/// [begin, begin + n) of an inSize -> outSize resize.
Coefficients precompute(int64_t inSize, int64_t outSize, int64_t begin,
                        int64_t n) {
  double scale = double(inSize) / double(outSize);
  double filterScale = std::max(scale, 1.0);
  double support = 1.0 * filterScale; // the triangle's support is 1
  Coefficients c;
  c.kernelSize = int64_t(std::ceil(support)) * 2 + 1;
  c.first.resize(n);
  c.count.resize(n);
  c.weights.assign(size_t(n * c.kernelSize), 0);
  std::vector<double> k(size_t(c.kernelSize));
  for (int64_t i = 0; i < n; ++i) {
    double center = (double(begin + i) + 0.5) * scale;
    double ss = 1.0 / filterScale, total = 0.0;
    // PIL's (int) casts truncate toward zero.
    int64_t xmin = std::max<int64_t>(int64_t(center - support + 0.5), 0);
    int64_t xmax = std::min<int64_t>(int64_t(center + support + 0.5), inSize);
    int64_t span = std::clamp<int64_t>(xmax - xmin, 0, c.kernelSize);
    for (int64_t x = 0; x < span; ++x) {
      k[x] = triangle((double(x + xmin) - center + 0.5) * ss);
      total += k[x];
    }
    for (int64_t x = 0; x < span; ++x) {
      double w = total != 0.0 ? k[x] / total : k[x];
      double fixed = w * (1 << kPrecisionBits);
      c.weights[i * c.kernelSize + x] =
          int32_t(w < 0 ? -0.5 + fixed : 0.5 + fixed);
    }
    c.first[i] = xmin;
    c.count[i] = span;
  }
  return c;
}

/// PIL's clip8: the fixed-point sum, which started at one half, to 8 bits.
uint8_t clip8(int32_t sum) {
  if (sum >= (1 << kPrecisionBits << 8))
    return 255;
  if (sum <= 0)
    return 0;
  return uint8_t(sum >> kPrecisionBits);
}

/// Rows [rowBegin, rowEnd) of `in`, resampled along x by `c`, whose
/// first pixels count from column `columnOffset` of the full image.
Image resampleRows(const Image &in, int64_t rowBegin, int64_t rowEnd,
                   const Coefficients &c, int64_t columnOffset) {
  int64_t channels = in.channels, width = int64_t(c.first.size());
  Image out{width, rowEnd - rowBegin, channels, {}};
  out.pixels.resize(size_t(out.width * out.height * channels));
  for (int64_t y = rowBegin; y < rowEnd; ++y) {
    const uint8_t *row = in.pixels.data() + y * in.width * channels;
    uint8_t *dst = out.pixels.data() + (y - rowBegin) * width * channels;
    for (int64_t x = 0; x < width; ++x) {
      const int32_t *k = c.weights.data() + x * c.kernelSize;
      const uint8_t *src = row + (c.first[x] - columnOffset) * channels;
      for (int64_t ch = 0; ch < channels; ++ch) {
        int32_t sum = 1 << (kPrecisionBits - 1);
        for (int64_t i = 0; i < c.count[x]; ++i)
          sum += int32_t(src[i * channels + ch]) * k[i];
        dst[x * channels + ch] = clip8(sum);
      }
    }
  }
  return out;
}

/// Columns [columnBegin, columnEnd) of `in`, resampled along y by `c`,
/// whose first rows count from row `rowOffset` of the full image.
Image resampleColumns(const Image &in, int64_t columnBegin, int64_t columnEnd,
                      const Coefficients &c, int64_t rowOffset) {
  int64_t channels = in.channels, rowSize = in.width * channels;
  int64_t outRowSize = (columnEnd - columnBegin) * channels;
  Image out{columnEnd - columnBegin, int64_t(c.first.size()), channels, {}};
  out.pixels.resize(size_t(out.height * outRowSize));
  for (int64_t y = 0; y < out.height; ++y) {
    const int32_t *k = c.weights.data() + y * c.kernelSize;
    const uint8_t *src = in.pixels.data() + (c.first[y] - rowOffset) * rowSize +
                         columnBegin * channels;
    uint8_t *dst = out.pixels.data() + y * outRowSize;
    for (int64_t x = 0; x < outRowSize; ++x) {
      int32_t sum = 1 << (kPrecisionBits - 1);
      for (int64_t i = 0; i < c.count[y]; ++i)
        sum += int32_t(src[i * rowSize + x]) * k[i];
      dst[x] = clip8(sum);
    }
  }
  return out;
}

/// The width x height box of `in` at (left, top).
Image cropImage(const Image &in, int64_t left, int64_t top, int64_t width,
                int64_t height) {
  int64_t channels = in.channels;
  Image out{width, height, channels, {}};
  out.pixels.resize(size_t(width * height * channels));
  for (int64_t y = 0; y < height; ++y)
    std::copy_n(in.pixels.data() + ((top + y) * in.width + left) * channels,
                width * channels, out.pixels.data() + y * width * channels);
  return out;
}

/// The input span [begin, end) that outputs `c` read.
std::pair<int64_t, int64_t> spanOf(const Coefficients &c) {
  return {c.first.front(), c.first.back() + c.count.back()};
}

/// Python's round() of d / 2 (half to even), as CenterCrop computes it.
int64_t halfRoundedToEven(int64_t d) {
  int64_t half = d / 2;
  return d % 2 == 0 || half % 2 == 0 ? half : half + 1;
}

//===--- Samples ------------------------------------------------------===//

struct Geometry {
  int64_t channels = 1, height = 0, width = 0;
};

Geometry geometryOf(const SampleLayout &layout, const std::string &dir) {
  const std::vector<int64_t> &shape = layout.inputShape;
  Geometry g;
  if (shape.size() == 3)
    g = {shape[0], shape[1], shape[2]};
  else if (shape.size() == 2)
    g = {1, shape[0], shape[1]};
  // Samples beyond the decoder's limit would be resized from nothing.
  int64_t maxSide = ImageLimits().maxSide;
  if (shape.size() < 2 || shape.size() > 3 ||
      (g.channels != 1 && g.channels != 3) || g.height < 1 || g.width < 1 ||
      g.height > maxSide || g.width > maxSide)
    throw RuntimeError(fmt::format(
        "'{}': an image folder needs an input of shape [C, H, W] (C 1 or 3) "
        "or [H, W], H and W at most {}, not [{}]",
        dir, maxSide, fmt::join(shape, ", ")));
  return g;
}

void checkNormalization(const ImageFolderOptions &options, int64_t channels,
                        const std::string &dir) {
  if (options.mean.empty() && options.std.empty())
    return;
  if (int64_t(options.mean.size()) != channels ||
      int64_t(options.std.size()) != channels)
    throw RuntimeError(
        fmt::format("'{}': mean and std need {} values each (one per "
                    "channel), not {} and {}",
                    dir, channels, options.mean.size(), options.std.size()));
  for (float s : options.std)
    if (s == 0.0f)
      throw RuntimeError(fmt::format("'{}': std must not be 0", dir));
}

struct Sample {
  std::string path;
  int32_t label;
};

/// Decodes one image into its row of x, channel-major as ToTensor makes it.
void loadSample(const std::string &path, const Geometry &g,
                const ImageFolderOptions &options, float *row) {
  std::string bytes = readInputFile(path);
  Image image = decodeImage(reinterpret_cast<const uint8_t *>(bytes.data()),
                            bytes.size(), path, options.limits);
  Image fitted = fitImage(image, g.channels, g.height, g.width);
  int64_t plane = g.height * g.width;
  bool normalize = !options.mean.empty();
  for (int64_t c = 0; c < g.channels; ++c)
    for (int64_t p = 0; p < plane; ++p) {
      float value =
          static_cast<float>(fitted.pixels[p * g.channels + c]) / 255.0f;
      if (normalize)
        value = (value - options.mean[c]) / options.std[c];
      row[c * plane + p] = value;
    }
}

/// Loads every sample on `threads` threads (the caller's among them);
/// throws the error of the first failing sample by sample order.
void loadSamples(const std::vector<Sample> &samples, const Geometry &g,
                 const ImageFolderOptions &options, int64_t threads, float *x) {
  int64_t n = int64_t(samples.size()),
          features = g.channels * g.height * g.width;
  std::atomic<int64_t> next{0}, firstError{n};
  std::mutex mutex;
  std::string message;
  auto work = [&] {
    for (int64_t i = next++; i < n && i < firstError; i = next++) {
      try {
        loadSample(samples[i].path, g, options, x + i * features);
      } catch (const std::exception &error) {
        std::lock_guard<std::mutex> lock(mutex);
        if (i < firstError) {
          firstError = i;
          message =
              dynamic_cast<const RuntimeError *>(&error)
                  ? error.what()
                  : fmt::format("'{}': {}", samples[i].path, error.what());
        }
      }
    }
  };
  std::vector<std::thread> pool;
  try {
    for (int64_t t = 1; t < threads; ++t)
      pool.emplace_back(work);
  } catch (const std::system_error &) {
    // Fewer threads than asked: the ones we have do all the work.
  }
  work();
  for (std::thread &thread : pool)
    thread.join();
  if (firstError < n)
    throw RuntimeError(message);
}

/// DIR's class folders, sorted (torchvision's find_classes).
std::vector<std::string> listClasses(const std::string &dir) {
  std::error_code error;
  if (!fs::is_directory(dir, error))
    throw RuntimeError(fmt::format("'{}': no such directory (an image folder "
                                   "is DIR/<class>/<image>)",
                                   dir));
  std::vector<std::string> classes, files;
  listDirectory(dir, classes, files);
  if (classes.empty())
    throw RuntimeError(fmt::format("'{}': no class folders (an image folder "
                                   "is DIR/<class>/<image>)",
                                   dir));
  std::sort(classes.begin(), classes.end());
  return classes;
}

/// Each class folder's label: its index among `classes`, or, for a test
/// split, among the training split's.
std::vector<int32_t> labelsOf(const std::vector<std::string> &classes,
                              const std::vector<std::string> *trainClassNames,
                              const SampleLayout &layout,
                              const std::string &dir) {
  const std::vector<std::string> &known =
      trainClassNames ? *trainClassNames : classes;
  if (int64_t(known.size()) > layout.classes)
    throw RuntimeError(fmt::format("'{}': {} class folders, but the model has "
                                   "{} classes",
                                   dir, known.size(), layout.classes));
  std::vector<int32_t> labels;
  for (const std::string &name : classes) {
    auto found = std::find(known.begin(), known.end(), name);
    if (found == known.end())
      throw RuntimeError(fmt::format(
          "'{}': class '{}' is not among the training split's classes ({})",
          (fs::path(dir) / name).string(), name, fmt::join(known, ", ")));
    labels.push_back(int32_t(found - known.begin()));
  }
  return labels;
}

} // namespace

std::vector<std::string> listClassImages(const std::string &classDir) {
  std::vector<WalkedDir> dirs;
  std::vector<fs::path> chain;
  walk(classDir, chain, dirs);
  std::sort(
      dirs.begin(), dirs.end(),
      [](const WalkedDir &a, const WalkedDir &b) { return a.root < b.root; });
  std::vector<std::string> images;
  for (WalkedDir &dir : dirs) {
    std::sort(dir.files.begin(), dir.files.end());
    for (const std::string &file : dir.files)
      if (isImageName(file))
        images.push_back((fs::path(dir.root) / file).string());
  }
  return images;
}

Image convertChannels(const Image &image, int64_t channels) {
  if (image.channels == channels)
    return image;
  int64_t pixels = image.width * image.height;
  Image out{image.width, image.height, channels, {}};
  out.pixels.resize(size_t(pixels * channels));
  const uint8_t *in = image.pixels.data();
  if (channels == 1) {
    for (int64_t p = 0; p < pixels; ++p) {
      const uint8_t *rgb = in + 3 * p;
      out.pixels[p] = uint8_t(
          (rgb[0] * 19595u + rgb[1] * 38470u + rgb[2] * 7471u + 0x8000u) >> 16);
    }
  } else {
    for (int64_t p = 0; p < pixels; ++p)
      std::fill_n(out.pixels.data() + 3 * p, 3, in[p]);
  }
  return out;
}

Image resizeAndCrop(const Image &image, int64_t width, int64_t height,
                    int64_t left, int64_t top, int64_t cropWidth,
                    int64_t cropHeight) {
  if (width < 1 || height < 1 || left < 0 || top < 0 || cropWidth < 1 ||
      cropHeight < 1 || left + cropWidth > width || top + cropHeight > height)
    throw RuntimeError(fmt::format(
        "cannot crop {}x{} at ({}, {}) from an image resized to {}x{}",
        cropWidth, cropHeight, left, top, width, height));
  bool alongX = width != image.width, alongY = height != image.height;
  Coefficients horizontal, vertical;
  if (alongX)
    horizontal = precompute(image.width, width, left, cropWidth);
  if (alongY)
    vertical = precompute(image.height, height, top, cropHeight);
  // Pillow 13 runs the vertical pass first when the height shrinks by more
  // than twice as many pixels as the width (to make the second pass
  // cheaper); the 8-bit rounding between the passes makes the order show.
  // Pillow 12 and older always went horizontal first.
  int64_t shrinkY = image.height - height, shrinkX = image.width - width;
  if (!(shrinkY > 0 && shrinkY > 2 * shrinkX)) {
    auto [rowBegin, rowEnd] =
        alongY ? spanOf(vertical) : std::make_pair(top, top + cropHeight);
    Image rows =
        alongX ? resampleRows(image, rowBegin, rowEnd, horizontal, 0)
               : cropImage(image, left, rowBegin, cropWidth, rowEnd - rowBegin);
    return alongY ? resampleColumns(rows, 0, cropWidth, vertical, rowBegin)
                  : rows;
  }
  auto [columnBegin, columnEnd] =
      alongX ? spanOf(horizontal) : std::make_pair(left, left + cropWidth);
  Image columns = resampleColumns(image, columnBegin, columnEnd, vertical, 0);
  return alongX ? resampleRows(columns, 0, cropHeight, horizontal, columnBegin)
                : columns;
}

Image fitImage(const Image &image, int64_t channels, int64_t height,
               int64_t width) {
  if (image.width < 1 || image.height < 1)
    throw RuntimeError(fmt::format("cannot resize an empty {}x{} image",
                                   image.width, image.height));
  // Gray is resized before it is replicated: the same pixels, a third of
  // the work.
  if (image.channels == 1 && channels == 3)
    return convertChannels(fitImage(image, 1, height, width), 3);
  Image converted = convertChannels(image, channels);
  // The edge that needs the larger scale gets the target size exactly; the
  // other is floored, as torchvision's Resize(int) sizes the longer edge.
  int64_t newHeight = height, newWidth = width;
  if (height * image.width >= width * image.height)
    newWidth = height * image.width / image.height;
  else
    newHeight = width * image.height / image.width;
  return resizeAndCrop(converted, newWidth, newHeight,
                       halfRoundedToEven(newWidth - width),
                       halfRoundedToEven(newHeight - height), width, height);
}

Dataset readImageFolder(const std::string &dir,
                        const ImageFolderOptions &options,
                        const SampleLayout &layout,
                        const std::vector<std::string> *trainClassNames,
                        const std::string &name) {
  if (layout.target != SampleLayout::Target::Classes)
    throw RuntimeError(fmt::format("'{}': an image folder gives class labels; "
                                   "the model's target must be classes",
                                   dir));
  Geometry g = geometryOf(layout, dir);
  checkNormalization(options, g.channels, dir);
  std::vector<std::string> classes = listClasses(dir);
  std::vector<int32_t> labels = labelsOf(classes, trainClassNames, layout, dir);
  std::vector<Sample> samples;
  for (size_t c = 0; c < classes.size(); ++c) {
    std::string classDir = (fs::path(dir) / classes[c]).string();
    std::vector<std::string> images = listClassImages(classDir);
    if (images.empty())
      throw RuntimeError(fmt::format(
          "'{}': class folder without any .png, .jpg or .jpeg image",
          classDir));
    for (std::string &image : images)
      samples.push_back({std::move(image), labels[c]});
  }
  Dataset data;
  data.name = name;
  data.count = int64_t(samples.size());
  data.numFeatures = g.channels * g.height * g.width;
  data.numClasses = layout.classes;
  data.classNames = trainClassNames ? *trainClassNames : classes;
  data.y.resize(samples.size());
  for (size_t i = 0; i < samples.size(); ++i)
    data.y[i] = samples[i].label;
  data.x.resize(size_t(data.count * data.numFeatures));
  int64_t threads = options.threads > 0
                        ? options.threads
                        : int64_t(std::thread::hardware_concurrency());
  threads = std::clamp<int64_t>(threads, 1, std::max<int64_t>(data.count, 1));
  loadSamples(samples, g, options, threads, data.x.data());
  return data;
}

} // namespace runtime
} // namespace mbt
