//===- Npz.cpp - .npz archives: zip members that are .npy files -----------===//
//
// The archive's directory is read by ZipArchive (ZipArchive.h explains why
// partly by hand). A stored member is used in place: its ArrayView points
// into the mapping. A deflated one is inflated with zlib into a buffer of
// its own, after its npy header has been inflated and checked against the
// zip's size, so a corrupt claim never sizes an allocation. A stored
// member's CRC is not checked (that would read the whole array once more);
// a deflated one's is, as it is inflated.
//
//===----------------------------------------------------------------------===//

#include "mbt/runtime/data/Numpy.h"

#include "mbt/runtime/Error.h"

#include "NpyDetail.h"
#include "ZipArchive.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <memory>

namespace mbt {
namespace runtime {

namespace {

using detail::ZipMember;

/// Deflate never expands better than about 1032:1; a member claiming more
/// is corrupt.
constexpr uint64_t kMaxDeflateRatio = 1032;
/// zlib counts in 32 bits: input and output go in pieces of this size.
constexpr uint64_t kZlibChunk = uint64_t(1) << 30;

//===- Inflating a member -------------------------------------------------===//

/// A raw deflate stream over `size` bytes at `in`, inflated piece by piece
/// into the caller's buffers, with the CRC-32 of what came out.
class Inflater {
public:
  Inflater(const unsigned char *in, uint64_t size, const std::string &origin)
      : next(in), left(size), origin(origin) {
    if (inflateInit2(&stream, -MAX_WBITS) != Z_OK)
      throw RuntimeError(origin + ": zlib could not start inflating");
  }
  ~Inflater() { inflateEnd(&stream); }
  Inflater(const Inflater &) = delete;
  Inflater &operator=(const Inflater &) = delete;

  /// Inflates exactly `size` more bytes into `out`.
  void read(unsigned char *out, uint64_t size) {
    while (size > 0) {
      if (ended)
        fail("the deflated data ends early");
      refill();
      auto room = uInt(std::min(size, kZlibChunk));
      stream.next_out = out;
      stream.avail_out = room;
      int status = inflate(&stream, Z_NO_FLUSH);
      uint64_t got = room - stream.avail_out;
      crc = crc32_z(crc, out, got);
      out += got;
      size -= got;
      produced += got;
      check(status, got);
    }
  }

  /// Checks that the stream ends here, and returns the CRC-32 of it all.
  uint32_t finish() {
    while (!ended) {
      refill();
      unsigned char extra;
      stream.next_out = &extra;
      stream.avail_out = 1;
      int status = inflate(&stream, Z_NO_FLUSH);
      if (stream.avail_out == 0)
        fail("the deflated data holds more than the zip directory says");
      check(status, 0);
    }
    return uint32_t(crc);
  }

private:
  void refill() {
    if (stream.avail_in > 0 || left == 0)
      return;
    stream.avail_in = uInt(std::min(left, kZlibChunk));
    stream.next_in = const_cast<Bytef *>(next);
    next += stream.avail_in;
    left -= stream.avail_in;
  }

  void check(int status, uint64_t got) {
    if (status == Z_STREAM_END)
      ended = true;
    else if (status == Z_BUF_ERROR && got == 0 && stream.avail_in == 0 &&
             left == 0)
      fail("the deflated data ends early");
    else if (status != Z_OK && status != Z_BUF_ERROR)
      fail(fmt::format("the deflated data is corrupt ({})",
                       stream.msg ? stream.msg : zError(status)));
  }

  [[noreturn]] void fail(const std::string &message) const {
    throw RuntimeError(fmt::format("{}: byte offset {} of the member: {}",
                                   origin, produced, message));
  }

  z_stream stream{};
  const unsigned char *next;
  uint64_t left;
  const std::string &origin;
  uLong crc = crc32(0, nullptr, 0);
  uint64_t produced = 0;
  bool ended = false;
};

/// The npy header at the start of a deflated member of `size` bytes.
NpyHeader inflateHeader(Inflater &inflater, uint64_t size,
                        const std::string &origin) {
  std::vector<unsigned char> head(std::min<uint64_t>(size, 12));
  inflater.read(head.data(), head.size());
  uint64_t headerEnd =
      detail::npyPreamble(head.data(), head.size(), origin).second;
  if (headerEnd > size || headerEnd < head.size())
    throw RuntimeError(
        fmt::format("{}: its npy header claims {} bytes, the member holds {}",
                    origin, headerEnd, size));
  size_t got = head.size();
  head.resize(headerEnd);
  inflater.read(head.data() + got, headerEnd - got);
  return parseNpyHeader(head.data(), head.size(), origin);
}

//===- The archive --------------------------------------------------------===//

/// An open .npz: its zip directory and the npy members in it.
class NpzArchive {
public:
  explicit NpzArchive(const std::string &path)
      : zip(path, "a zip archive (.npz)") {}

  std::vector<std::string> arrayNames() const;
  ArrayView read(const std::string &name) const;
  NpyHeader readHeader(const std::string &name) const;

private:
  const ZipMember &find(const std::string &name) const;
  ArrayView readStored(const ZipMember &member, uint64_t at,
                       const std::string &origin) const;
  ArrayView readDeflated(const ZipMember &member, uint64_t at,
                         const std::string &origin) const;
  const ZipMember &readable(const std::string &name,
                            const std::string &origin) const;

  detail::ZipArchive zip;
};

std::vector<std::string> NpzArchive::arrayNames() const {
  std::vector<std::string> names;
  for (const ZipMember &member : zip.members()) {
    const std::string &name = member.name;
    size_t n = name.size();
    bool npy = n > 4 && name.compare(n - 4, 4, ".npy") == 0;
    names.push_back(npy ? name.substr(0, n - 4) : name);
  }
  return names;
}

const ZipMember &NpzArchive::find(const std::string &name) const {
  for (const std::string &candidate : {name + ".npy", name})
    if (const ZipMember *member = zip.find(candidate))
      return *member;
  std::vector<std::string> names = arrayNames();
  throw RuntimeError(fmt::format(
      "'{}' holds no array '{}': {}", zip.path(), name,
      names.empty() ? "it holds no arrays"
                    : fmt::format("it holds '{}'", fmt::join(names, "', '"))));
}

/// The member of array `name`, if mbt can read it.
const ZipMember &NpzArchive::readable(const std::string &name,
                                      const std::string &origin) const {
  const ZipMember &member = find(name);
  zip.checkMethod(member, origin, true,
                  "numpy.savez and savez_compressed write");
  return member;
}

ArrayView NpzArchive::read(const std::string &name) const {
  std::string origin = fmt::format("'{}': array '{}'", zip.path(), name);
  const ZipMember &member = readable(name, origin);
  uint64_t at = zip.dataStart(member, origin);
  if (member.method == 0)
    return readStored(member, at, origin);
  return readDeflated(member, at, origin);
}

NpyHeader NpzArchive::readHeader(const std::string &name) const {
  std::string origin = fmt::format("'{}': array '{}'", zip.path(), name);
  const ZipMember &member = readable(name, origin);
  uint64_t at = zip.dataStart(member, origin);
  if (member.method == 0)
    return parseNpyHeader(zip.file().bytes + at, member.size, origin);
  Inflater inflater(zip.file().bytes + at, member.compressedSize, origin);
  return inflateHeader(inflater, member.size, origin);
}

ArrayView NpzArchive::readStored(const ZipMember &member, uint64_t at,
                                 const std::string &origin) const {
  if (member.size != member.compressedSize)
    throw RuntimeError(fmt::format(
        "{}: a stored member of {} bytes claims {} bytes uncompressed", origin,
        member.compressedSize, member.size));
  const unsigned char *bytes = zip.file().bytes + at;
  NpyHeader header = parseNpyHeader(bytes, member.size, origin);
  detail::checkCOrder(header, origin);
  uint64_t promised = header.dataOffset + detail::dataBytes(header);
  if (promised != member.size)
    throw RuntimeError(fmt::format(
        "{}: the member holds {} bytes but its npy header promises {}", origin,
        member.size, promised));
  return detail::viewOf(header, bytes + header.dataOffset, zip.file().owner,
                        origin);
}

ArrayView NpzArchive::readDeflated(const ZipMember &member, uint64_t at,
                                   const std::string &origin) const {
  uint64_t size = member.size;
  if (size > member.compressedSize * kMaxDeflateRatio + 64)
    throw RuntimeError(fmt::format(
        "{}: the zip directory claims {} bytes from {} deflated bytes, more "
        "than deflate can expand to: the archive is corrupt",
        origin, size, member.compressedSize));
  Inflater inflater(zip.file().bytes + at, member.compressedSize, origin);
  // The npy header first, so that its promise is checked against the zip's
  // before the data's buffer is allocated.
  NpyHeader header = inflateHeader(inflater, size, origin);
  uint64_t headerEnd = header.dataOffset;
  detail::checkCOrder(header, origin);
  uint64_t bytes = detail::dataBytes(header);
  if (headerEnd + bytes != size)
    throw RuntimeError(fmt::format(
        "{}: the member holds {} bytes but its npy header promises {}", origin,
        size, headerEnd + bytes));
  std::shared_ptr<unsigned char[]> data(new unsigned char[bytes ? bytes : 1]);
  inflater.read(data.get(), bytes);
  if (inflater.finish() != member.crc)
    throw RuntimeError(origin + ": CRC mismatch: the member is corrupt");
  if (header.bigEndian)
    detail::swapBytes(data.get(), bytes, elementSize(header.type));
  header.bigEndian = false;
  return detail::viewOf(header, data.get(), data, origin);
}

} // namespace

std::vector<std::string> npzArrayNames(const std::string &path) {
  return NpzArchive(path).arrayNames();
}

ArrayView readNpzArray(const std::string &path, const std::string &name) {
  return NpzArchive(path).read(name);
}

NpyHeader readNpzArrayHeader(const std::string &path, const std::string &name) {
  return NpzArchive(path).readHeader(name);
}

} // namespace runtime
} // namespace mbt
