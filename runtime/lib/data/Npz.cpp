//===- Npz.cpp - .npz archives: zip members that are .npy files -----------===//
//
// minizip finds the archive's central directory (the end records, zip64
// ones included) and walks it, reading through callbacks over our mapping
// of the file. Each entry and its member's data are then read here, from
// the mapping, because Debian's minizip 1.1 gets zip64 entries wrong on
// 64-bit hosts: it compares the 32-bit size and offset fields with
// (unsigned long)-1, which is 2^64 - 1 there, so it never reads an entry's
// zip64 extra field and sees 4294967295 for the size and offset of every
// member that needs one. Python's zipfile writes those for members and
// offsets past 2 GiB, i.e. exactly for the large arrays.
//
// A stored member is used in place: its ArrayView points into the mapping.
// A deflated one is inflated with zlib into a buffer of its own, after its
// npy header has been inflated and checked against the zip's size, so a
// corrupt claim never sizes an allocation. A stored member's CRC is not
// checked (that would read the whole array once more); a deflated one's is,
// as it is inflated.
//
//===----------------------------------------------------------------------===//

#include "mbt/runtime/data/Numpy.h"

#include "mbt/runtime/Error.h"

#include "NpyDetail.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <minizip/unzip.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <new>

namespace mbt {
namespace runtime {

namespace {

/// Deflate never expands better than about 1032:1; a member claiming more
/// is corrupt.
constexpr uint64_t kMaxDeflateRatio = 1032;
/// zlib counts in 32 bits: input and output go in pieces of this size.
constexpr uint64_t kZlibChunk = uint64_t(1) << 30;
constexpr uint32_t kCentralSignature = 0x02014b50;
constexpr uint32_t kLocalSignature = 0x04034b50;
constexpr uint64_t kCentralHeaderSize = 46;
constexpr uint64_t kLocalHeaderSize = 30;
constexpr uint32_t kZip64Marker = 0xffffffff;

uint64_t readLittle(const unsigned char *p, int bytes) {
  uint64_t value = 0;
  for (int i = bytes - 1; i >= 0; --i)
    value = value << 8 | p[i];
  return value;
}

//===- minizip's view of the mapping: a read position over its bytes -----===//

struct MemoryStream {
  const unsigned char *bytes;
  uint64_t size;
  uint64_t pos = 0;
};

voidpf openStream(voidpf opaque, const void *, int) {
  auto *file = static_cast<const FileMapping *>(opaque);
  return new (std::nothrow) MemoryStream{file->bytes, file->size};
}

uLong readStream(voidpf, voidpf stream, void *buffer, uLong size) {
  auto *in = static_cast<MemoryStream *>(stream);
  if (in->pos >= in->size)
    return 0;
  uint64_t count = std::min<uint64_t>(size, in->size - in->pos);
  std::memcpy(buffer, in->bytes + in->pos, count);
  in->pos += count;
  return uLong(count);
}

uLong writeStream(voidpf, voidpf, const void *, uLong) { return 0; }

ZPOS64_T tellStream(voidpf, voidpf stream) {
  return static_cast<MemoryStream *>(stream)->pos;
}

long seekStream(voidpf, voidpf stream, ZPOS64_T offset, int origin) {
  auto *in = static_cast<MemoryStream *>(stream);
  uint64_t from = origin == ZLIB_FILEFUNC_SEEK_SET   ? 0
                  : origin == ZLIB_FILEFUNC_SEEK_CUR ? in->pos
                                                     : in->size;
  return __builtin_add_overflow(from, offset, &in->pos) ? -1 : 0;
}

int closeStream(voidpf, voidpf stream) {
  delete static_cast<MemoryStream *>(stream);
  return 0;
}

int streamError(voidpf, voidpf) { return 0; }

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

/// A member as its central directory entry describes it, zip64 included.
struct ZipMember {
  std::string name;
  uint16_t flags = 0, method = 0;
  uint32_t crc = 0;
  uint64_t compressedSize = 0, size = 0, localOffset = 0;
};

/// An open .npz: the mapping, minizip's handle on it and its members.
class NpzArchive {
public:
  explicit NpzArchive(const std::string &path);
  NpzArchive(const NpzArchive &) = delete;
  NpzArchive &operator=(const NpzArchive &) = delete;

  std::vector<std::string> arrayNames() const;
  ArrayView read(const std::string &name) const;
  NpyHeader readHeader(const std::string &name) const;

private:
  [[noreturn]] void fail(uint64_t at, const std::string &message) const {
    throw RuntimeError(
        fmt::format("'{}': byte offset {}: {}", path, at, message));
  }
  ZipMember readEntry(uint64_t at) const;
  void readZip64(ZipMember &member, uint64_t at, uint64_t size) const;
  const ZipMember &find(const std::string &name) const;
  uint64_t dataStart(const ZipMember &member, const std::string &origin) const;
  ArrayView readStored(const ZipMember &member, uint64_t at,
                       const std::string &origin) const;
  ArrayView readDeflated(const ZipMember &member, uint64_t at,
                         const std::string &origin) const;
  const ZipMember &readable(const std::string &name,
                            const std::string &origin) const;

  std::string path;
  FileMapping file;
  /// Closed however the constructor ends: a corrupt directory throws.
  std::unique_ptr<void, int (*)(unzFile)> zip{nullptr, unzClose};
  std::vector<ZipMember> members;
};

NpzArchive::NpzArchive(const std::string &path)
    : path(path), file(mapFile(path)) {
  zlib_filefunc64_def io = {openStream, readStream,  writeStream, tellStream,
                            seekStream, closeStream, streamError, &file};
  zip.reset(unzOpen2_64(path.c_str(), &io));
  if (!zip)
    throw RuntimeError(fmt::format(
        "'{}' is not a zip archive (.npz): no zip directory found", path));
  int status = unzGoToFirstFile(zip.get());
  for (; status == UNZ_OK; status = unzGoToNextFile(zip.get())) {
    unz64_file_pos position;
    unzGetFilePos64(zip.get(), &position);
    members.push_back(readEntry(position.pos_in_zip_directory));
  }
  if (status != UNZ_END_OF_LIST_OF_FILE)
    throw RuntimeError(fmt::format(
        "'{}': the zip directory is corrupt after {} members (minizip error "
        "{})",
        path, members.size(), status));
}

ZipMember NpzArchive::readEntry(uint64_t at) const {
  if (at > file.size || file.size - at < kCentralHeaderSize ||
      readLittle(file.bytes + at, 4) != kCentralSignature)
    fail(at, "expected a zip directory entry (is there data before the "
             "archive?)");
  const unsigned char *entry = file.bytes + at;
  ZipMember member;
  member.flags = uint16_t(readLittle(entry + 8, 2));
  member.method = uint16_t(readLittle(entry + 10, 2));
  member.crc = uint32_t(readLittle(entry + 16, 4));
  member.compressedSize = readLittle(entry + 20, 4);
  member.size = readLittle(entry + 24, 4);
  member.localOffset = readLittle(entry + 42, 4);
  uint64_t nameSize = readLittle(entry + 28, 2);
  uint64_t extraSize = readLittle(entry + 30, 2);
  if (file.size - at - kCentralHeaderSize < nameSize + extraSize)
    fail(at, "the zip directory entry runs past the end of the file");
  member.name.assign(reinterpret_cast<const char *>(entry) + kCentralHeaderSize,
                     nameSize);
  readZip64(member, at + kCentralHeaderSize + nameSize, extraSize);
  return member;
}

/// The zip64 extra field (id 1) holds, in this order, the 64-bit size,
/// compressed size and local header offset, each only when the entry's
/// 32-bit field is 0xffffffff.
void NpzArchive::readZip64(ZipMember &member, uint64_t at,
                           uint64_t size) const {
  for (uint64_t pos = 0; pos + 4 <= size;) {
    uint64_t id = readLittle(file.bytes + at + pos, 2);
    uint64_t length = readLittle(file.bytes + at + pos + 2, 2);
    pos += 4;
    if (length > size - pos)
      fail(at + pos, "a zip extra field runs past its entry");
    uint64_t field = 0;
    for (uint64_t *value :
         {&member.size, &member.compressedSize, &member.localOffset}) {
      if (id != 1 || *value != kZip64Marker)
        continue;
      if (field + 8 > length)
        fail(at + pos, "the zip64 extra field is too short");
      *value = readLittle(file.bytes + at + pos + field, 8);
      field += 8;
    }
    pos += length;
  }
}

std::vector<std::string> NpzArchive::arrayNames() const {
  std::vector<std::string> names;
  for (const ZipMember &member : members) {
    const std::string &name = member.name;
    size_t n = name.size();
    bool npy = n > 4 && name.compare(n - 4, 4, ".npy") == 0;
    names.push_back(npy ? name.substr(0, n - 4) : name);
  }
  return names;
}

const ZipMember &NpzArchive::find(const std::string &name) const {
  for (const std::string &candidate : {name + ".npy", name})
    for (const ZipMember &member : members)
      if (member.name == candidate)
        return member;
  std::vector<std::string> names = arrayNames();
  throw RuntimeError(fmt::format(
      "'{}' holds no array '{}': {}", path, name,
      names.empty() ? "it holds no arrays"
                    : fmt::format("it holds '{}'", fmt::join(names, "', '"))));
}

/// Where the member's data starts: after its local header, whose name and
/// extra field may differ in length from the directory's.
uint64_t NpzArchive::dataStart(const ZipMember &member,
                               const std::string &origin) const {
  uint64_t at = member.localOffset;
  if (at > file.size || file.size - at < kLocalHeaderSize ||
      readLittle(file.bytes + at, 4) != kLocalSignature)
    throw RuntimeError(fmt::format(
        "{}: byte offset {}: expected the member's local zip header", origin,
        at));
  uint64_t skip = kLocalHeaderSize + readLittle(file.bytes + at + 26, 2) +
                  readLittle(file.bytes + at + 28, 2);
  if (file.size - at < skip || file.size - at - skip < member.compressedSize)
    throw RuntimeError(fmt::format(
        "{}: the member's {} bytes at byte offset {} run past the end of the "
        "file ({} bytes)",
        origin, member.compressedSize, at + skip, file.size));
  return at + skip;
}

/// The member of array `name`, if mbt can read it.
const ZipMember &NpzArchive::readable(const std::string &name,
                                      const std::string &origin) const {
  const ZipMember &member = find(name);
  if (member.flags & 1)
    throw RuntimeError(origin + " is encrypted, which mbt does not read");
  if (member.method != 0 && member.method != Z_DEFLATED)
    throw RuntimeError(fmt::format(
        "{} uses zip compression method {}; mbt reads stored (0) and "
        "deflated (8) members, as numpy.savez and savez_compressed write",
        origin, member.method));
  return member;
}

ArrayView NpzArchive::read(const std::string &name) const {
  std::string origin = fmt::format("'{}': array '{}'", path, name);
  const ZipMember &member = readable(name, origin);
  uint64_t at = dataStart(member, origin);
  if (member.method == 0)
    return readStored(member, at, origin);
  return readDeflated(member, at, origin);
}

NpyHeader NpzArchive::readHeader(const std::string &name) const {
  std::string origin = fmt::format("'{}': array '{}'", path, name);
  const ZipMember &member = readable(name, origin);
  uint64_t at = dataStart(member, origin);
  if (member.method == 0)
    return parseNpyHeader(file.bytes + at, member.size, origin);
  Inflater inflater(file.bytes + at, member.compressedSize, origin);
  return inflateHeader(inflater, member.size, origin);
}

ArrayView NpzArchive::readStored(const ZipMember &member, uint64_t at,
                                 const std::string &origin) const {
  if (member.size != member.compressedSize)
    throw RuntimeError(fmt::format(
        "{}: a stored member of {} bytes claims {} bytes uncompressed", origin,
        member.compressedSize, member.size));
  const unsigned char *bytes = file.bytes + at;
  NpyHeader header = parseNpyHeader(bytes, member.size, origin);
  detail::checkCOrder(header, origin);
  uint64_t promised = header.dataOffset + detail::dataBytes(header);
  if (promised != member.size)
    throw RuntimeError(fmt::format(
        "{}: the member holds {} bytes but its npy header promises {}", origin,
        member.size, promised));
  return detail::viewOf(header, bytes + header.dataOffset, file.owner, origin);
}

ArrayView NpzArchive::readDeflated(const ZipMember &member, uint64_t at,
                                   const std::string &origin) const {
  uint64_t size = member.size;
  if (size > member.compressedSize * kMaxDeflateRatio + 64)
    throw RuntimeError(fmt::format(
        "{}: the zip directory claims {} bytes from {} deflated bytes, more "
        "than deflate can expand to: the archive is corrupt",
        origin, size, member.compressedSize));
  Inflater inflater(file.bytes + at, member.compressedSize, origin);
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
