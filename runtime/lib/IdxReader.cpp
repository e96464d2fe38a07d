//===- IdxReader.cpp - Read idx files through zlib ------------------------===//
//
// The file is opened with open(2) first so that a missing file reports the
// real errno (gzopen's errno is not reliable), then handed to gzdopen, which
// reads gzip and plain files alike. Offsets in messages count uncompressed
// bytes, i.e. positions in the idx stream.
//
//===----------------------------------------------------------------------===//

#include "mbt/runtime/IdxReader.h"

#include "mbt/runtime/Error.h"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace mbt {
namespace runtime {

namespace {

/// Idx files larger than this are treated as corrupt headers rather than
/// allocated (Fashion-MNIST's largest is 47 MB).
constexpr uint64_t kMaxIdxBytes = uint64_t(1) << 32;

std::string hex32(uint32_t value) { return fmt::format("0x{:08x}", value); }

/// Owns a gzFile and tracks how many uncompressed bytes were consumed.
class GzInput {
public:
  explicit GzInput(const std::string &path) : path(path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      throw RuntimeError(openError(errno));
    struct stat info;
    if (::fstat(fd, &info) == 0 && S_ISDIR(info.st_mode)) {
      ::close(fd);
      throw RuntimeError(openError(EISDIR));
    }
    file = gzdopen(fd, "rb");
    if (!file) {
      ::close(fd);
      throw RuntimeError("cannot open '" + path + "': zlib could not start");
    }
  }
  ~GzInput() { gzclose(file); }
  GzInput(const GzInput &) = delete;
  GzInput &operator=(const GzInput &) = delete;

  /// Reads up to `size` bytes; returns how many were read (short at EOF).
  uint64_t read(void *buffer, uint64_t size) {
    uint64_t total = 0;
    auto *out = static_cast<unsigned char *>(buffer);
    while (total < size) {
      unsigned chunk =
          static_cast<unsigned>(std::min<uint64_t>(size - total, 1u << 30));
      int got = gzread(file, out + total, chunk);
      if (got < 0) {
        int code = 0;
        const char *message = gzerror(file, &code);
        throw RuntimeError(fmt::format(
            "cannot read '{}' at byte offset {}: {}", path, offset + total,
            code == Z_ERRNO ? std::strerror(errno) : message));
      }
      if (got == 0)
        break;
      total += static_cast<uint64_t>(got);
    }
    offset += total;
    return total;
  }

  /// Reads exactly `size` bytes of `what`, or reports where the data ended.
  void readExactly(void *buffer, uint64_t size, const char *what) {
    uint64_t start = offset;
    if (read(buffer, size) != size)
      throw RuntimeError(fmt::format(
          "'{}' is truncated: expected {} bytes of {} at byte offset {}, but "
          "the data ended at byte offset {}",
          path, size, what, start, offset));
  }

  uint64_t position() const { return offset; }

private:
  std::string openError(int code) const {
    return "cannot open '" + path + "': " + std::strerror(code);
  }

  std::string path;
  gzFile file = nullptr;
  uint64_t offset = 0;
};

uint32_t readBigEndian32(GzInput &in, const char *what) {
  unsigned char bytes[4];
  in.readExactly(bytes, 4, what);
  return (uint32_t(bytes[0]) << 24) | (uint32_t(bytes[1]) << 16) |
         (uint32_t(bytes[2]) << 8) | uint32_t(bytes[3]);
}

} // namespace

IdxArray readIdxFile(const std::string &path, uint32_t expectedMagic) {
  GzInput in(path);
  uint32_t magic = readBigEndian32(in, "idx magic number");
  if (magic != expectedMagic)
    throw RuntimeError(fmt::format(
        "'{}' is not the expected idx file: magic number is {}, expected {}",
        path, hex32(magic), hex32(expectedMagic)));
  IdxArray result;
  uint32_t rank = expectedMagic & 0xff;
  uint64_t count = 1;
  for (uint32_t d = 0; d < rank; ++d) {
    uint32_t dim = readBigEndian32(in, "idx dimension");
    result.dims.push_back(dim);
    // count <= kMaxIdxBytes = 2^32 before this and dim < 2^32: no overflow.
    count *= dim;
    if (count > kMaxIdxBytes)
      throw RuntimeError(fmt::format(
          "'{}' advertises an implausible size (dims exceed {} bytes)", path,
          kMaxIdxBytes));
  }
  // Grown chunk by chunk as the data arrives: a corrupt header that
  // advertises gigabytes costs only what the file really holds.
  constexpr uint64_t kChunk = uint64_t(16) << 20;
  uint64_t start = in.position();
  while (result.data.size() < count) {
    uint64_t have = result.data.size();
    uint64_t want = std::min(kChunk, count - have);
    result.data.resize(have + want);
    uint64_t got = in.read(result.data.data() + have, want);
    if (got != want)
      throw RuntimeError(fmt::format(
          "'{}' is truncated: expected {} bytes of idx data at byte offset "
          "{}, but the data ended at byte offset {}",
          path, count, start, in.position()));
  }
  unsigned char extra;
  uint64_t dataEnd = in.position();
  if (in.read(&extra, 1) != 0)
    throw RuntimeError(
        fmt::format("'{}' holds more bytes than its header advertises: data "
                    "should end at byte offset {}",
                    path, dataEnd));
  return result;
}

} // namespace runtime
} // namespace mbt
