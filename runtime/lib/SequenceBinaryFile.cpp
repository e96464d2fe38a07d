//===- SequenceBinaryFile.cpp - The .mbtseq binary token format -----------===//
//
//   offset  size               field
//   0       8                  magic "MBTSEQ01"
//   8       4                  uint32 vocabulary size
//   12      4                  uint32 flags: bit 0 labels, bit 1 class names
//   16      8                  uint64 count (samples)
//   24      8                  uint64 total tokens
//   32      8 * (count + 1)    uint64 offsets, offsets[0] = 0
//   ...     4 * total tokens   int32 tokens
//   ...     4 * count          int32 labels            (flag bit 0)
//   ...     4 + names          uint32 n, then n times (uint32 size, bytes)
//                                                      (flag bit 1)
// All little endian; the file ends exactly there.
//
//===----------------------------------------------------------------------===//

#include "mbt/runtime/Error.h"
#include "mbt/runtime/FileUtil.h"
#include "mbt/runtime/SequenceFiles.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace mbt {
namespace runtime {

namespace {

constexpr char kMagic[8] = {'M', 'B', 'T', 'S', 'E', 'Q', '0', '1'};
constexpr uint32_t kHasLabels = 1u << 0;
constexpr uint32_t kHasLabelNames = 1u << 1;
constexpr size_t kHeaderSize = 32;

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              ".mbtseq is little endian; this reader copies words as they are");

/// A cursor over the file's bytes that names the byte offset of a
/// truncation.
class Reader {
public:
  Reader(const std::string &path, const std::string &bytes)
      : path(path), bytes(bytes) {}

  template <typename T> T scalar(const char *what) {
    T value;
    copy(&value, sizeof(T), what);
    return value;
  }

  template <typename T>
  void array(std::vector<T> &out, uint64_t n, const char *what) {
    if (n > (bytes.size() - position) / sizeof(T))
      truncated(what);
    out.resize(static_cast<size_t>(n));
    copy(out.data(), static_cast<size_t>(n) * sizeof(T), what);
  }

  std::string string(uint32_t size, const char *what) {
    if (size > bytes.size() - position)
      truncated(what);
    std::string out = bytes.substr(position, size);
    position += size;
    return out;
  }

  size_t offset() const { return position; }
  bool atEnd() const { return position == bytes.size(); }

  [[noreturn]] void fail(const std::string &message, size_t at) const {
    throw RuntimeError(fmt::format("'{}': {} (byte {})", path, message, at));
  }

private:
  void copy(void *to, size_t size, const char *what) {
    if (size > bytes.size() - position)
      truncated(what);
    if (size == 0)
      return; // an empty array's data() may be null: no memcpy from it
    std::memcpy(to, bytes.data() + position, size);
    position += size;
  }

  [[noreturn]] void truncated(const char *what) const {
    fail(std::string("truncated file: it ends inside the ") + what, position);
  }

  const std::string &path;
  const std::string &bytes;
  size_t position = 0;
};

template <typename T> void put(std::string &out, T value) {
  out.append(reinterpret_cast<const char *>(&value), sizeof(T));
}

template <typename T> void putArray(std::string &out, const std::vector<T> &v) {
  out.append(reinterpret_cast<const char *>(v.data()), v.size() * sizeof(T));
}

} // namespace

SequenceDataset readSequenceFile(const std::string &path,
                                 const SequenceLoadOptions &options) {
  std::string bytes = readInputFile(path);
  Reader reader(path, bytes);
  if (bytes.size() < sizeof(kMagic) ||
      std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0)
    reader.fail("not an .mbtseq file (it does not start with \"MBTSEQ01\")", 0);
  reader.string(sizeof(kMagic), "magic");

  SequenceDataset dataset;
  dataset.name = path;
  uint32_t vocab = reader.scalar<uint32_t>("header");
  uint32_t flags = reader.scalar<uint32_t>("header");
  uint64_t count = reader.scalar<uint64_t>("header");
  uint64_t total = reader.scalar<uint64_t>("header");
  if (vocab < 1 || vocab > uint32_t(INT32_MAX))
    reader.fail(fmt::format("vocabulary size {} is outside [1, 2^31)", vocab),
                8);
  if (flags & ~(kHasLabels | kHasLabelNames))
    reader.fail(fmt::format("unknown flag bits in flags {}", flags), 12);
  dataset.vocabSize = static_cast<int32_t>(vocab);

  std::vector<uint64_t> offsets;
  if (count == UINT64_MAX)
    reader.fail("sample count overflows", 16);
  reader.array(offsets, count + 1, "offsets");
  size_t offsetsAt = kHeaderSize;
  if (offsets[0] != 0)
    reader.fail("the first offset must be 0", offsetsAt);
  for (uint64_t i = 1; i <= count; ++i)
    if (offsets[i] < offsets[i - 1] || offsets[i] > total)
      reader.fail(fmt::format("offset {} ({}) is not within [previous "
                              "offset, total tokens {}]",
                              i, offsets[i], total),
                  offsetsAt + 8 * i);
  if (offsets[count] != total)
    reader.fail(fmt::format("the last offset ({}) must equal the total token "
                            "count {}",
                            offsets[count], total),
                offsetsAt + 8 * count);
  dataset.offsets.assign(offsets.begin(), offsets.end());

  size_t tokensAt = reader.offset();
  reader.array(dataset.tokens, total, "tokens");
  for (uint64_t t = 0; t < total; ++t)
    if (dataset.tokens[t] < 0 || dataset.tokens[t] >= dataset.vocabSize)
      reader.fail(fmt::format("token {} is outside the vocabulary [0, {})",
                              dataset.tokens[t], vocab),
                  tokensAt + 4 * t);
  if (flags & kHasLabels) {
    size_t labelsAt = reader.offset();
    reader.array(dataset.labels, count, "labels");
    for (uint64_t i = 0; i < count; ++i)
      if (dataset.labels[i] < 0)
        reader.fail(fmt::format("sample {} has negative label {}", i,
                                dataset.labels[i]),
                    labelsAt + 4 * i);
  }
  if (flags & kHasLabelNames) {
    uint32_t names = reader.scalar<uint32_t>("class names");
    for (uint32_t i = 0; i < names; ++i) {
      uint32_t size = reader.scalar<uint32_t>("class names");
      dataset.labelNames.push_back(reader.string(size, "class names"));
    }
  }
  if (!reader.atEnd())
    reader.fail(fmt::format("{} unexpected bytes after the data",
                            bytes.size() - reader.offset()),
                reader.offset());
  dataset.validate();

  if (options.maxLength > 0) {
    SequenceDataset cut;
    cut.name = dataset.name;
    cut.vocabSize = dataset.vocabSize;
    cut.labelNames = dataset.labelNames;
    cut.labels = dataset.labels;
    for (int64_t i = 0; i < dataset.count(); ++i)
      cut.append(dataset.sample(i),
                 std::min(dataset.length(i), options.maxLength));
    return cut;
  }
  return dataset;
}

void writeSequenceFile(const std::string &path,
                       const SequenceDataset &dataset) {
  dataset.validate();
  uint32_t flags = (dataset.hasLabels() ? kHasLabels : 0) |
                   (dataset.labelNames.empty() ? 0 : kHasLabelNames);
  std::string out;
  out.reserve(kHeaderSize + 8 * dataset.offsets.size() +
              4 * (dataset.tokens.size() + dataset.labels.size()));
  out.append(kMagic, sizeof(kMagic));
  put<uint32_t>(out, static_cast<uint32_t>(dataset.vocabSize));
  put<uint32_t>(out, flags);
  put<uint64_t>(out, static_cast<uint64_t>(dataset.count()));
  put<uint64_t>(out, static_cast<uint64_t>(dataset.tokens.size()));
  for (int64_t offset : dataset.offsets)
    put<uint64_t>(out, static_cast<uint64_t>(offset));
  putArray(out, dataset.tokens);
  if (flags & kHasLabels)
    putArray(out, dataset.labels);
  if (flags & kHasLabelNames) {
    put<uint32_t>(out, static_cast<uint32_t>(dataset.labelNames.size()));
    for (const std::string &name : dataset.labelNames) {
      put<uint32_t>(out, static_cast<uint32_t>(name.size()));
      out += name;
    }
  }
  writeFileAtomically(path, out);
}

} // namespace runtime
} // namespace mbt
