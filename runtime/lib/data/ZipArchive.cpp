//===- ZipArchive.cpp - The members of a zip file, over a mapping ---------===//
#include "ZipArchive.h"

#include "mbt/runtime/Error.h"

#include <fmt/format.h>
#include <minizip/unzip.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <new>

namespace mbt {
namespace runtime {
namespace detail {

namespace {

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

} // namespace

ZipArchive::ZipArchive(const std::string &path, const std::string &kind)
    : filePath(path), mapping(mapFile(path)) {
  zlib_filefunc64_def io = {openStream, readStream,  writeStream, tellStream,
                            seekStream, closeStream, streamError, &mapping};
  // Closed however this ends: a corrupt directory throws.
  std::unique_ptr<void, int (*)(unzFile)> zip{unzOpen2_64(path.c_str(), &io),
                                              unzClose};
  if (!zip)
    throw RuntimeError(
        fmt::format("'{}' is not {}: no zip directory found", path, kind));
  int status = unzGoToFirstFile(zip.get());
  for (; status == UNZ_OK; status = unzGoToNextFile(zip.get())) {
    unz64_file_pos position;
    unzGetFilePos64(zip.get(), &position);
    entries.push_back(readEntry(position.pos_in_zip_directory));
  }
  if (status != UNZ_END_OF_LIST_OF_FILE)
    throw RuntimeError(fmt::format(
        "'{}': the zip directory is corrupt after {} members (minizip error "
        "{})",
        path, entries.size(), status));
}

void ZipArchive::fail(uint64_t at, const std::string &message) const {
  throw RuntimeError(
      fmt::format("'{}': byte offset {}: {}", filePath, at, message));
}

ZipMember ZipArchive::readEntry(uint64_t at) const {
  if (at > mapping.size || mapping.size - at < kCentralHeaderSize ||
      readLittle(mapping.bytes + at, 4) != kCentralSignature)
    fail(at, "expected a zip directory entry (is there data before the "
             "archive?)");
  const unsigned char *entry = mapping.bytes + at;
  ZipMember member;
  member.flags = uint16_t(readLittle(entry + 8, 2));
  member.method = uint16_t(readLittle(entry + 10, 2));
  member.crc = uint32_t(readLittle(entry + 16, 4));
  member.compressedSize = readLittle(entry + 20, 4);
  member.size = readLittle(entry + 24, 4);
  member.localOffset = readLittle(entry + 42, 4);
  uint64_t nameSize = readLittle(entry + 28, 2);
  uint64_t extraSize = readLittle(entry + 30, 2);
  if (mapping.size - at - kCentralHeaderSize < nameSize + extraSize)
    fail(at, "the zip directory entry runs past the end of the file");
  member.name.assign(reinterpret_cast<const char *>(entry) + kCentralHeaderSize,
                     nameSize);
  readZip64(member, at + kCentralHeaderSize + nameSize, extraSize);
  return member;
}

/// The zip64 extra field (id 1) holds, in this order, the 64-bit size,
/// compressed size and local header offset, each only when the entry's
/// 32-bit field is 0xffffffff.
void ZipArchive::readZip64(ZipMember &member, uint64_t at,
                           uint64_t size) const {
  for (uint64_t pos = 0; pos + 4 <= size;) {
    uint64_t id = readLittle(mapping.bytes + at + pos, 2);
    uint64_t length = readLittle(mapping.bytes + at + pos + 2, 2);
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
      *value = readLittle(mapping.bytes + at + pos + field, 8);
      field += 8;
    }
    pos += length;
  }
}

const ZipMember *ZipArchive::find(const std::string &name) const {
  for (const ZipMember &member : entries)
    if (member.name == name)
      return &member;
  return nullptr;
}

uint64_t ZipArchive::dataStart(const ZipMember &member,
                               const std::string &origin) const {
  uint64_t at = member.localOffset;
  if (at > mapping.size || mapping.size - at < kLocalHeaderSize ||
      readLittle(mapping.bytes + at, 4) != kLocalSignature)
    throw RuntimeError(fmt::format(
        "{}: byte offset {}: expected the member's local zip header", origin,
        at));
  uint64_t skip = kLocalHeaderSize + readLittle(mapping.bytes + at + 26, 2) +
                  readLittle(mapping.bytes + at + 28, 2);
  if (mapping.size - at < skip ||
      mapping.size - at - skip < member.compressedSize)
    throw RuntimeError(fmt::format(
        "{}: the member's {} bytes at byte offset {} run past the end of the "
        "file ({} bytes)",
        origin, member.compressedSize, at + skip, mapping.size));
  return at + skip;
}

void ZipArchive::checkMethod(const ZipMember &member, const std::string &origin,
                             bool allowDeflate,
                             const std::string &writer) const {
  if (member.flags & 1)
    throw RuntimeError(origin + " is encrypted, which mbt does not read");
  if (member.method == 0 || (allowDeflate && member.method == Z_DEFLATED))
    return;
  throw RuntimeError(
      fmt::format("{} uses zip compression method {}; mbt reads {}, as {}",
                  origin, member.method,
                  allowDeflate ? "stored (0) and deflated (8) members"
                               : "stored members (method 0)",
                  writer));
}

const unsigned char *ZipArchive::storedBytes(const ZipMember &member,
                                             const std::string &origin,
                                             const std::string &writer) const {
  checkMethod(member, origin, false, writer);
  if (member.size != member.compressedSize)
    throw RuntimeError(fmt::format(
        "{}: a stored member of {} bytes claims {} bytes uncompressed", origin,
        member.compressedSize, member.size));
  return mapping.bytes + dataStart(member, origin);
}

} // namespace detail
} // namespace runtime
} // namespace mbt
