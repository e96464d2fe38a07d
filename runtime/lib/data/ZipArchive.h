//===- ZipArchive.h - The members of a zip file, over a mapping -*- C++ -*-===//
//
// Private to runtime/lib/data: the .npz reader (Npz.cpp) and the .pt reader
// (TorchCheckpoint.cpp) both read zip archives. minizip finds the central
// directory (the end records, zip64 ones included) and walks it, reading
// through callbacks over a mapping of the file. Each entry and its local
// header are then read here, from the mapping, because Debian's minizip 1.1
// gets zip64 entries wrong on 64-bit hosts: it compares the 32-bit size and
// offset fields with (unsigned long)-1, which is 2^64 - 1 there, so it never
// reads an entry's zip64 extra field and sees 4294967295 for the size and
// offset of every member that needs one. Python's zipfile writes those for
// members and offsets past 2 GiB, i.e. exactly for the large arrays.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_LIB_DATA_ZIPARCHIVE_H
#define MBT_RUNTIME_LIB_DATA_ZIPARCHIVE_H

#include "mbt/runtime/data/Arrays.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mbt {
namespace runtime {
namespace detail {

/// A member as its central directory entry describes it, zip64 included.
struct ZipMember {
  std::string name;
  uint16_t flags = 0, method = 0;
  uint32_t crc = 0;
  uint64_t compressedSize = 0, size = 0, localOffset = 0;
};

/// An open zip archive: the mapping and its members, in directory order.
class ZipArchive {
public:
  /// Maps `path` and reads its directory; `kind` names what the file should
  /// be in the error for one without a zip directory (e.g. "an .npz").
  ZipArchive(const std::string &path, const std::string &kind);
  ZipArchive(const ZipArchive &) = delete;
  ZipArchive &operator=(const ZipArchive &) = delete;

  const std::string &path() const { return filePath; }
  const FileMapping &file() const { return mapping; }
  const std::vector<ZipMember> &members() const { return entries; }
  /// The member called `name`, or null.
  const ZipMember *find(const std::string &name) const;

  /// Where the member's data starts: after its local header, whose name and
  /// extra field may differ in length from the directory's. Checks that its
  /// compressed bytes lie in the file; `origin` names it in errors.
  uint64_t dataStart(const ZipMember &member, const std::string &origin) const;
  /// Checks that the member is not encrypted and is stored, or deflated
  /// where `allowDeflate`; `origin` names it and `writer` says what writes
  /// such archives (e.g. "torch.save writes"), for the message.
  void checkMethod(const ZipMember &member, const std::string &origin,
                   bool allowDeflate, const std::string &writer) const;
  /// A stored member's bytes, in place in the mapping, after checkMethod
  /// (no deflate) and a check of its sizes; its CRC is not checked, which
  /// would read the member once more.
  const unsigned char *storedBytes(const ZipMember &member,
                                   const std::string &origin,
                                   const std::string &writer) const;

private:
  [[noreturn]] void fail(uint64_t at, const std::string &message) const;
  ZipMember readEntry(uint64_t at) const;
  void readZip64(ZipMember &member, uint64_t at, uint64_t size) const;

  std::string filePath;
  FileMapping mapping;
  std::vector<ZipMember> entries;
};

} // namespace detail
} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_LIB_DATA_ZIPARCHIVE_H
