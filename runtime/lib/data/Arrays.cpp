//===- Arrays.cpp - Typed arrays to a Dataset -----------------------------===//
//
// Elements are loaded with memcpy because nothing aligns them: a stored
// .npz member or a safetensors tensor starts wherever the container put it.
// The conversion loop is instantiated per element type so that the type
// switch runs once per range, not once per element. Large conversions are
// cut into row ranges converted by threads; each range reports its first
// non-finite row and the smallest one is reported, so the result and the
// error are the same for any number of threads.
//
//===----------------------------------------------------------------------===//

#include "mbt/runtime/data/Arrays.h"

#include "mbt/runtime/Error.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fcntl.h>
#include <functional>
#include <sys/mman.h>
#include <sys/stat.h>
#include <system_error>
#include <thread>
#include <type_traits>
#include <unistd.h>

namespace mbt {
namespace runtime {

namespace {

/// Below this many elements a conversion runs on the calling thread:
/// starting threads would cost more than it saves.
constexpr int64_t kParallelElements = int64_t(1) << 20;
/// The least work worth a thread of its own.
constexpr int64_t kElementsPerThread = int64_t(1) << 18;

struct TypeInfo {
  const char *name;
  size_t size;
};

TypeInfo typeInfo(ElementType type) {
  switch (type) {
  case ElementType::Bool:
    return {"bool", 1};
  case ElementType::U8:
    return {"u8", 1};
  case ElementType::I8:
    return {"i8", 1};
  case ElementType::U16:
    return {"u16", 2};
  case ElementType::I16:
    return {"i16", 2};
  case ElementType::U32:
    return {"u32", 4};
  case ElementType::I32:
    return {"i32", 4};
  case ElementType::U64:
    return {"u64", 8};
  case ElementType::I64:
    return {"i64", 8};
  case ElementType::F16:
    return {"f16", 2};
  case ElementType::BF16:
    return {"bf16", 2};
  case ElementType::F32:
    return {"f32", 4};
  case ElementType::F64:
    return {"f64", 8};
  }
  return {"?", 1};
}

template <typename T> T load(const unsigned char *p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

float fromBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

/// IEEE binary16 -> binary32, exactly (every f16 is an f32).
float halfToFloat(uint16_t half) {
  uint32_t sign = uint32_t(half & 0x8000) << 16;
  uint32_t exponent = (half >> 10) & 0x1f;
  uint32_t mantissa = half & 0x3ff;
  if (exponent == 0x1f) // infinity or NaN (payload kept)
    return fromBits(sign | 0x7f800000 | (mantissa << 13));
  if (exponent != 0)
    return fromBits(sign | ((exponent + 112) << 23) | (mantissa << 13));
  // Zero or subnormal: mantissa * 2^-24, exact in f32's normal range.
  float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
  return sign ? -magnitude : magnitude;
}

template <typename T> float elementToFloat(const unsigned char *p) {
  if constexpr (std::is_same_v<T, bool>)
    return *p != 0 ? 1.0f : 0.0f;
  else
    return static_cast<float>(load<T>(p));
}

template <typename Convert>
void convertLoop(const unsigned char *in, size_t size, size_t count, float *out,
                 Convert convert) {
  for (size_t i = 0; i < count; ++i)
    out[i] = convert(in + i * size);
}

template <typename T>
void convertTyped(const unsigned char *in, size_t count, float *out) {
  convertLoop(in, sizeof(T), count, out, elementToFloat<T>);
}

std::vector<int64_t> withoutOnes(const std::vector<int64_t> &shape) {
  std::vector<int64_t> result;
  for (int64_t dim : shape)
    if (dim != 1)
      result.push_back(dim);
  return result;
}

bool isFloatType(ElementType type) {
  return type == ElementType::F16 || type == ElementType::BF16 ||
         type == ElementType::F32 || type == ElementType::F64;
}

/// Runs `body(begin, end)` over [0, rows), cut into ranges for several
/// threads when rows * width is large. Each call returns the first bad row
/// of its range or `rows`; the smallest is returned.
int64_t forRowRanges(int64_t rows, int64_t width,
                     const std::function<int64_t(int64_t, int64_t)> &body) {
  int64_t work = rows * width;
  int64_t parts = 1;
  if (work >= kParallelElements)
    parts = std::min<int64_t>({int64_t(std::thread::hardware_concurrency()),
                               rows, work / kElementsPerThread});
  if (parts <= 1)
    return body(0, rows);
  std::vector<int64_t> firstBad(parts, rows);
  auto bound = [&](int64_t part) { return rows * part / parts; };
  std::vector<std::thread> workers;
  for (int64_t part = 1; part < parts; ++part) {
    auto run = [&, part] {
      firstBad[part] = body(bound(part), bound(part + 1));
    };
    try {
      workers.emplace_back(run);
    } catch (const std::system_error &) {
      run(); // no thread to be had: do this range here
    }
  }
  firstBad[0] = body(0, bound(1));
  for (std::thread &worker : workers)
    worker.join();
  return *std::min_element(firstBad.begin(), firstBad.end());
}

/// Converts `array` ([rows, width] in effect) into `out`; returns the first
/// row holding a non-finite float, or `rows`.
int64_t convertRows(const ArrayView &array, int64_t rows, int64_t width,
                    float *out) {
  bool checkFinite = isFloatType(array.type);
  auto *bytes = static_cast<const unsigned char *>(array.data);
  size_t size = elementSize(array.type);
  return forRowRanges(rows, width, [&](int64_t begin, int64_t end) {
    size_t first = size_t(begin) * size_t(width);
    size_t count = size_t(end - begin) * size_t(width);
    convertToFloat(array.type, bytes + first * size, count, out + first);
    if (checkFinite)
      for (size_t i = 0; i < count; ++i)
        if (!std::isfinite(out[first + i]))
          return begin + int64_t(i / size_t(width));
    return rows;
  });
}

/// The error for the first non-finite element of `row`.
[[noreturn]] void throwNotFinite(const ArrayView &array, int64_t row,
                                 int64_t width, const float *out,
                                 const char *what) {
  int64_t column = 0;
  while (column + 1 < width && std::isfinite(out[row * width + column]))
    ++column;
  float value = out[row * width + column];
  std::string text = std::isnan(value) ? "NaN"
                     : value > 0       ? "infinity"
                                       : "-infinity";
  if (array.type == ElementType::F64) {
    double source =
        load<double>(static_cast<const unsigned char *>(array.data) +
                     8 * size_t(row * width + column));
    if (std::isfinite(source))
      text = fmt::format("{} (beyond f32's range)", source);
  }
  throw RuntimeError(fmt::format(
      "{}: {} of sample {} holds {} at element {}; mbt trains on finite "
      "values only",
      array.origin, what, row, text, column));
}

template <typename T>
void copyLabels(const ArrayView &y, int64_t classes,
                std::vector<int32_t> &out) {
  auto *bytes = static_cast<const unsigned char *>(y.data);
  for (size_t i = 0; i < out.size(); ++i) {
    T label = load<T>(bytes + i * sizeof(T));
    if constexpr (std::is_same_v<T, uint8_t>)
      if (y.type == ElementType::Bool)
        label = label != 0;
    bool negative = false;
    if constexpr (std::is_signed_v<T>)
      negative = label < 0;
    if (negative || uint64_t(label) >= uint64_t(classes))
      throw RuntimeError(fmt::format(
          "{}: label {} of sample {} is outside the spec's {} classes "
          "(class[{}])",
          y.origin, label, i, classes, classes));
    out[i] = static_cast<int32_t>(label);
  }
}

void convertLabels(const ArrayView &y, const SampleLayout &layout,
                   Dataset &data) {
  if (y.shape.size() > 2 || (y.shape.size() == 2 && y.shape[1] != 1))
    throw RuntimeError(fmt::format(
        "{} holds labels of shape {}: class labels are one integer per "
        "sample, shape (n,) or (n, 1)",
        y.origin, formatShape(y.shape)));
  data.y.resize(data.count);
  int64_t classes = layout.classes;
  switch (y.type) {
  case ElementType::Bool:
  case ElementType::U8:
    return copyLabels<uint8_t>(y, classes, data.y);
  case ElementType::I8:
    return copyLabels<int8_t>(y, classes, data.y);
  case ElementType::U16:
    return copyLabels<uint16_t>(y, classes, data.y);
  case ElementType::I16:
    return copyLabels<int16_t>(y, classes, data.y);
  case ElementType::U32:
    return copyLabels<uint32_t>(y, classes, data.y);
  case ElementType::I32:
    return copyLabels<int32_t>(y, classes, data.y);
  case ElementType::U64:
    return copyLabels<uint64_t>(y, classes, data.y);
  case ElementType::I64:
    return copyLabels<int64_t>(y, classes, data.y);
  default:
    throw RuntimeError(fmt::format(
        "{} holds {} labels: class labels must be integers (save them with "
        "y.astype(np.int64))",
        y.origin, elementTypeName(y.type)));
  }
}

void convertTargets(const ArrayView &y, const SampleLayout &layout,
                    Dataset &data) {
  int64_t width = y.shape.size() == 2 ? y.shape[1] : 1;
  if (y.shape.size() > 2 || width != layout.targetWidth)
    throw RuntimeError(fmt::format(
        "{} holds targets of shape {} but the spec's target has {} value{} "
        "per sample: save them as shape (n, {}){}",
        y.origin, formatShape(y.shape), layout.targetWidth,
        layout.targetWidth == 1 ? "" : "s", layout.targetWidth,
        layout.targetWidth == 1 ? " or (n,)" : ""));
  data.targetWidth = width;
  data.targets.resize(size_t(data.count) * size_t(width));
  int64_t bad = convertRows(y, data.count, width, data.targets.data());
  if (bad < data.count)
    throwNotFinite(y, bad, width, data.targets.data(), "the target");
}

} // namespace

std::string formatShape(const std::vector<int64_t> &shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

const char *elementTypeName(ElementType type) { return typeInfo(type).name; }

size_t elementSize(ElementType type) { return typeInfo(type).size; }

int64_t ArrayView::elements() const {
  int64_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  return count;
}

void convertToFloat(ElementType type, const void *data, size_t count,
                    float *out) {
  auto *in = static_cast<const unsigned char *>(data);
  switch (type) {
  case ElementType::Bool:
    return convertTyped<bool>(in, count, out);
  case ElementType::U8:
    return convertTyped<uint8_t>(in, count, out);
  case ElementType::I8:
    return convertTyped<int8_t>(in, count, out);
  case ElementType::U16:
    return convertTyped<uint16_t>(in, count, out);
  case ElementType::I16:
    return convertTyped<int16_t>(in, count, out);
  case ElementType::U32:
    return convertTyped<uint32_t>(in, count, out);
  case ElementType::I32:
    return convertTyped<int32_t>(in, count, out);
  case ElementType::U64:
    return convertTyped<uint64_t>(in, count, out);
  case ElementType::I64:
    return convertTyped<int64_t>(in, count, out);
  case ElementType::F32:
    return convertTyped<float>(in, count, out);
  case ElementType::F64:
    return convertTyped<double>(in, count, out);
  case ElementType::F16:
    return convertLoop(in, 2, count, out, [](const unsigned char *p) {
      return halfToFloat(load<uint16_t>(p));
    });
  case ElementType::BF16:
    return convertLoop(in, 2, count, out, [](const unsigned char *p) {
      return fromBits(uint32_t(load<uint16_t>(p)) << 16);
    });
  }
}

void checkSampleShape(const std::string &origin,
                      const std::vector<int64_t> &shape,
                      const SampleLayout &layout) {
  std::vector<int64_t> sample(shape.begin() + (shape.empty() ? 0 : 1),
                              shape.end());
  if (withoutOnes(sample) == withoutOnes(layout.inputShape))
    return;
  std::string input = "f32" + formatShape(layout.inputShape);
  std::string hint =
      fmt::format("declare the input as 'f32{}'", formatShape(sample));
  int64_t perSample = 1;
  for (int64_t dim : sample)
    perSample *= dim;
  if (perSample == layout.features())
    hint += fmt::format(" or save the array reshaped to (n, {})",
                        fmt::join(layout.inputShape, ", "));
  throw RuntimeError(
      fmt::format("{} holds samples of shape {} but the input is {}: {}",
                  origin, formatShape(sample), input, hint));
}

Dataset datasetFromArrays(const ArrayView &x, const ArrayView &y,
                          const SampleLayout &layout, const std::string &name,
                          bool borrowX) {
  if (x.shape.empty() || y.shape.empty())
    throw RuntimeError(fmt::format(
        "{} is a scalar: data arrays hold one row per sample, shape (n, ...)",
        x.shape.empty() ? x.origin : y.origin));
  if (x.shape[0] != y.shape[0])
    throw RuntimeError(fmt::format("{} holds {} samples but {} holds {}",
                                   x.origin, x.shape[0], y.origin, y.shape[0]));
  if (x.shape[0] == 0)
    throw RuntimeError(fmt::format("{} holds no samples", x.origin));
  checkSampleShape(x.origin, x.shape, layout);
  Dataset data;
  data.name = name;
  data.count = x.shape[0];
  data.numFeatures = layout.features();
  if (layout.target == SampleLayout::Target::Classes) {
    data.numClasses = layout.classes;
    convertLabels(y, layout, data);
  } else {
    convertTargets(y, layout, data);
  }
  if (borrowX && x.type == ElementType::F32) {
    data.borrowed = static_cast<const float *>(x.data);
    data.borrowedOwner = x.owner;
    for (int64_t i = 0; i < data.count; ++i) {
      const float *row = data.sample(i);
      if (!std::all_of(row, row + data.numFeatures,
                       [](float v) { return std::isfinite(v); }))
        throwNotFinite(x, i, data.numFeatures, data.borrowed, "the input");
    }
    return data;
  }
  data.x.resize(size_t(data.count) * size_t(data.numFeatures));
  int64_t bad = convertRows(x, data.count, data.numFeatures, data.x.data());
  if (bad < data.count)
    throwNotFinite(x, bad, data.numFeatures, data.x.data(), "the input");
  return data;
}

FileMapping mapFile(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw RuntimeError(
        fmt::format("cannot open '{}': {}", path, std::strerror(errno)));
  struct stat info;
  if (::fstat(fd, &info) != 0) {
    int code = errno;
    ::close(fd);
    throw RuntimeError(
        fmt::format("cannot open '{}': {}", path, std::strerror(code)));
  }
  if (!S_ISREG(info.st_mode)) {
    ::close(fd);
    throw RuntimeError(fmt::format(
        "cannot open '{}': {}", path,
        S_ISDIR(info.st_mode) ? std::strerror(EISDIR) : "not a regular file"));
  }
  FileMapping mapping;
  mapping.size = size_t(info.st_size);
  if (mapping.size == 0) {
    ::close(fd);
    return mapping;
  }
  void *address = ::mmap(nullptr, mapping.size, PROT_READ, MAP_PRIVATE, fd, 0);
  int code = errno;
  ::close(fd);
  if (address == MAP_FAILED)
    throw RuntimeError(
        fmt::format("cannot map '{}': {}", path, std::strerror(code)));
  size_t size = mapping.size;
  mapping.bytes = static_cast<const unsigned char *>(address);
  mapping.owner = std::shared_ptr<const void>(address, [size](const void *p) {
    ::munmap(const_cast<void *>(p), size);
  });
  return mapping;
}

} // namespace runtime
} // namespace mbt
