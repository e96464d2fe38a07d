//===- TorchStateDict.cpp - The .pt format: a pickle in a ZIP -------------===//
//
// The pickle uses a handful of protocol-2 opcodes and no memo; the ZIP is
// the plain 32-bit format (local headers, stored entries, a central
// directory), which torch's reader (miniz) accepts. The files mbt writes
// stay far below 4 GiB per model; a larger one is refused rather than
// written wrong.
//
//===----------------------------------------------------------------------===//

#include "mbt/runtime/TorchStateDict.h"

#include "mbt/runtime/Error.h"

#include <fmt/format.h>
#include <zlib.h>

#include <limits>

namespace mbt {
namespace runtime {

namespace {

void putLE(std::string &out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i)
    out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

/// A protocol-2 pickle, opcode by opcode.
class Pickler {
public:
  Pickler() { out += "\x80\x02"; }
  void global(const std::string &module, const std::string &name) {
    out += 'c' + module + '\n' + name + '\n';
  }
  void mark() { out += '('; }
  void tuple() { out += 't'; }
  void emptyTuple() { out += ')'; }
  void reduce() { out += 'R'; }
  void persistentId() { out += 'Q'; }
  void setItems() { out += 'u'; }
  void newFalse() { out += '\x89'; }
  void stop() { out += '.'; }
  void string(const std::string &s) {
    out += 'X';
    putLE(out, s.size(), 4);
    out += s;
  }
  void integer(int64_t v) {
    if (v >= 0 && v < 256) {
      out += 'K';
      putLE(out, static_cast<uint64_t>(v), 1);
    } else if (v >= std::numeric_limits<int32_t>::min() &&
               v <= std::numeric_limits<int32_t>::max()) {
      out += 'J';
      putLE(out, static_cast<uint64_t>(static_cast<uint32_t>(v)), 4);
    } else {
      out += "\x8a\x08"; // LONG1 of 8 bytes, two's complement
      putLE(out, static_cast<uint64_t>(v), 8);
    }
  }
  void intTuple(const std::vector<int64_t> &values) {
    mark();
    for (int64_t v : values)
      integer(v);
    tuple();
  }
  /// An empty collections.OrderedDict.
  void emptyOrderedDict() {
    global("collections", "OrderedDict");
    emptyTuple();
    reduce();
  }
  std::string out;
};

/// A ZIP archive of stored entries.
class ZipWriter {
public:
  /// Adds `name` with `data`; `align` > 1 pads the local header's extra
  /// field so the data starts at a multiple of it.
  void add(const std::string &name, const std::string &data, size_t align) {
    if (data.size() > 0xfffffff0u || out.size() > 0xfffffff0u)
      throw RuntimeError(fmt::format(
          "a state dict entry of {} bytes is too large for the .pt writer",
          data.size()));
    uint32_t crc = static_cast<uint32_t>(crc32(
        crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef *>(data.data()),
        static_cast<uInt>(data.size())));
    size_t header = out.size();
    size_t extra = 0;
    if (align > 1) {
      size_t start = header + 30 + name.size() + 4; // 4: the extra's header
      extra = (align - start % align) % align + 4;
    }
    putLE(out, 0x04034b50, 4); // local file header
    putLE(out, 20, 2);         // version needed
    putLE(out, 0, 2);          // flags
    putLE(out, 0, 2);          // stored
    putLE(out, 0, 4);          // time, date
    putLE(out, crc, 4);
    putLE(out, data.size(), 4);
    putLE(out, data.size(), 4);
    putLE(out, name.size(), 2);
    putLE(out, extra, 2);
    out += name;
    if (extra) {
      putLE(out, 0x4b46, 2); // an unregistered id; readers skip it
      putLE(out, extra - 4, 2);
      out.append(extra - 4, 'Z');
    }
    out += data;
    entries.push_back({name, crc, static_cast<uint32_t>(data.size()),
                       static_cast<uint32_t>(header)});
  }

  std::string finish() {
    size_t directory = out.size();
    for (const Entry &e : entries) {
      putLE(out, 0x02014b50, 4); // central directory header
      putLE(out, 20, 2);         // version made by
      putLE(out, 20, 2);         // version needed
      putLE(out, 0, 2);
      putLE(out, 0, 2);
      putLE(out, 0, 4);
      putLE(out, e.crc, 4);
      putLE(out, e.size, 4);
      putLE(out, e.size, 4);
      putLE(out, e.name.size(), 2);
      putLE(out, 0, 2); // extra
      putLE(out, 0, 2); // comment
      putLE(out, 0, 2); // disk
      putLE(out, 0, 2); // internal attributes
      putLE(out, 0, 4); // external attributes
      putLE(out, e.offset, 4);
      out += e.name;
    }
    size_t size = out.size() - directory;
    putLE(out, 0x06054b50, 4); // end of central directory
    putLE(out, 0, 2);
    putLE(out, 0, 2);
    putLE(out, entries.size(), 2);
    putLE(out, entries.size(), 2);
    putLE(out, size, 4);
    putLE(out, directory, 4);
    putLE(out, 0, 2);
    return std::move(out);
  }

private:
  struct Entry {
    std::string name;
    uint32_t crc, size, offset;
  };
  std::vector<Entry> entries;
  std::string out;
};

} // namespace

std::string torchStateDict(const std::vector<NamedTensor> &tensors) {
  Pickler p;
  p.emptyOrderedDict();
  p.mark();
  for (size_t i = 0; i < tensors.size(); ++i) {
    const NamedTensor &t = tensors[i];
    int64_t numel = 1;
    for (int64_t d : t.shape)
      numel *= d;
    std::vector<int64_t> strides(t.shape.size(), 1);
    for (size_t d = t.shape.size(); d-- > 1;)
      strides[d - 1] = strides[d] * t.shape[d];
    p.string(t.name);
    p.global("torch._utils", "_rebuild_tensor_v2");
    p.mark();
    // The storage: persistent id ('storage', type, key, location, numel).
    p.mark();
    p.string("storage");
    p.global("torch", t.dtype == DType::F64 ? "DoubleStorage" : "FloatStorage");
    p.string(std::to_string(i));
    p.string("cpu");
    p.integer(numel);
    p.tuple();
    p.persistentId();
    p.integer(0); // storage offset
    p.intTuple(t.shape);
    p.intTuple(strides);
    p.newFalse();         // requires_grad
    p.emptyOrderedDict(); // backward hooks
    p.tuple();
    p.reduce();
  }
  p.setItems();
  p.stop();

  ZipWriter zip;
  zip.add("archive/data.pkl", p.out, 1);
  for (size_t i = 0; i < tensors.size(); ++i) {
    const NamedTensor &t = tensors[i];
    size_t bytes = t.dtype == DType::F64 ? sizeof(double) : sizeof(float);
    for (int64_t d : t.shape)
      bytes *= static_cast<size_t>(d);
    zip.add(fmt::format("archive/data/{}", i),
            std::string(static_cast<const char *>(t.data), bytes), 64);
  }
  zip.add("archive/version", "3\n", 1);
  zip.add("archive/byteorder", "little", 1);
  return zip.finish();
}

} // namespace runtime
} // namespace mbt
