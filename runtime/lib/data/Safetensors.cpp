//===- Safetensors.cpp - Read .safetensors files --------------------------===//
//
// The JSON header is parsed by nlohmann/json straight from the mapping and
// turned into a table of entries; every entry is checked (dtype, shape,
// offsets, and the tiling of the data by all of them) before any is used.
// Dtypes mbt does not convert (the fp8 kinds) are still sized, so a file
// holding one is readable for its other tensors.
//
//===----------------------------------------------------------------------===//

#include "mbt/runtime/data/Safetensors.h"

#include "mbt/runtime/Error.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <optional>

namespace mbt {
namespace runtime {

namespace {

constexpr uint64_t kLengthBytes = 8;

struct DtypeInfo {
  const char *name;
  size_t size;
  std::optional<ElementType> type; // none: sized, but not converted
};

const DtypeInfo kDtypes[] = {
    {"BOOL", 1, ElementType::Bool}, {"U8", 1, ElementType::U8},
    {"I8", 1, ElementType::I8},     {"U16", 2, ElementType::U16},
    {"I16", 2, ElementType::I16},   {"U32", 4, ElementType::U32},
    {"I32", 4, ElementType::I32},   {"U64", 8, ElementType::U64},
    {"I64", 8, ElementType::I64},   {"F16", 2, ElementType::F16},
    {"BF16", 2, ElementType::BF16}, {"F32", 4, ElementType::F32},
    {"F64", 8, ElementType::F64},   {"F8_E4M3", 1, std::nullopt},
    {"F8_E5M2", 1, std::nullopt},   {"F8_E8M0", 1, std::nullopt}};

/// One tensor of the header, checked against the data's size.
struct Entry {
  const DtypeInfo *dtype = nullptr;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;
};

} // namespace

/// A mapped, checked .safetensors file.
struct SafetensorsFile {
  std::string path;
  FileMapping file;
  uint64_t dataStart = 0;
  std::map<std::string, Entry> entries;
};

namespace {

[[noreturn]] void failTensor(const std::string &path, const std::string &name,
                             const std::string &message) {
  throw RuntimeError(fmt::format("'{}': tensor '{}': {}", path, name, message));
}

/// A JSON number that is a non-negative integer, or nothing.
std::optional<uint64_t> unsignedOf(const nlohmann::json &value) {
  if (value.is_number_unsigned())
    return value.get<uint64_t>();
  if (value.is_number_integer() && value.get<int64_t>() >= 0)
    return uint64_t(value.get<int64_t>());
  return std::nullopt;
}

Entry readEntry(const std::string &path, const std::string &name,
                const nlohmann::json &value, uint64_t dataSize) {
  if (!value.is_object() || !value.contains("dtype") ||
      !value.contains("shape") || !value.contains("data_offsets"))
    failTensor(path, name,
               "expected an object with \"dtype\", \"shape\" and "
               "\"data_offsets\"");
  Entry entry;
  const nlohmann::json &dtype = value["dtype"];
  for (const DtypeInfo &known : kDtypes)
    if (dtype.is_string() && dtype.get_ref<const std::string &>() == known.name)
      entry.dtype = &known;
  if (!entry.dtype)
    failTensor(path, name, fmt::format("unknown dtype {}", dtype.dump()));
  const nlohmann::json &shape = value["shape"];
  if (!shape.is_array())
    failTensor(path, name, "\"shape\" must be an array of sizes");
  uint64_t bytes = entry.dtype->size;
  for (const nlohmann::json &dim : shape) {
    std::optional<uint64_t> size = unsignedOf(dim);
    if (!size || *size > uint64_t(INT64_MAX))
      failTensor(path, name,
                 fmt::format("\"shape\" holds {}, not a size", dim.dump()));
    if (__builtin_mul_overflow(bytes, *size, &bytes) ||
        bytes > uint64_t(INT64_MAX))
      failTensor(path, name,
                 fmt::format("shape {} is too large: its bytes "
                             "overflow 63 bits",
                             shape.dump()));
    entry.shape.push_back(int64_t(*size));
  }
  const nlohmann::json &offsets = value["data_offsets"];
  std::optional<uint64_t> begin, end;
  if (offsets.is_array() && offsets.size() == 2) {
    begin = unsignedOf(offsets[0]);
    end = unsignedOf(offsets[1]);
  }
  if (!begin || !end || *begin > *end || *end > dataSize)
    failTensor(path, name,
               fmt::format("\"data_offsets\" {} are not [begin, end] within "
                           "the {} bytes of data",
                           offsets.dump(), dataSize));
  if (*end - *begin != bytes)
    failTensor(path, name,
               fmt::format("\"data_offsets\" {} hold {} bytes but shape {} "
                           "of {} needs {}",
                           offsets.dump(), *end - *begin, shape.dump(),
                           entry.dtype->name, bytes));
  entry.begin = *begin;
  entry.end = *end;
  return entry;
}

/// The tensors must tile [0, dataSize): sorted by offset, each starts where
/// the one before ends.
void checkTiling(const SafetensorsFile &file, uint64_t dataSize) {
  std::vector<std::pair<const std::string *, const Entry *>> order;
  for (const auto &[name, entry] : file.entries)
    order.emplace_back(&name, &entry);
  std::sort(order.begin(), order.end(), [](const auto &a, const auto &b) {
    return std::make_pair(a.second->begin, a.second->end) <
           std::make_pair(b.second->begin, b.second->end);
  });
  uint64_t covered = 0;
  for (const auto &[name, entry] : order) {
    if (entry->begin != covered)
      failTensor(file.path, *name,
                 fmt::format("its data starts at byte {} of the data, but the "
                             "tensors before it end at byte {}: tensors must "
                             "cover the data without gaps or overlaps",
                             entry->begin, covered));
    covered = entry->end;
  }
  if (covered != dataSize)
    throw RuntimeError(fmt::format(
        "'{}': the tensors cover {} bytes of data but the file holds {}: "
        "tensors must cover the data without gaps",
        file.path, covered, dataSize));
}

nlohmann::json parseHeader(const std::string &path, const char *text,
                           size_t size) {
  try {
    return nlohmann::json::parse(text, text + size);
  } catch (const nlohmann::json::parse_error &error) {
    // error.byte is 1-based within the JSON, which starts at byte 8.
    std::string what = error.what();
    size_t colon = what.rfind(": ");
    throw RuntimeError(fmt::format(
        "'{}': byte offset {}: invalid JSON header: {}", path,
        kLengthBytes + (error.byte ? error.byte - 1 : 0),
        colon == std::string::npos ? what : what.substr(colon + 2)));
  } catch (const nlohmann::json::exception &error) {
    throw RuntimeError(
        fmt::format("'{}': invalid JSON header: {}", path, error.what()));
  }
}

SafetensorsFile openSafetensors(const std::string &path) {
  SafetensorsFile result;
  result.path = path;
  result.file = mapFile(path);
  const FileMapping &file = result.file;
  if (file.size < kLengthBytes)
    throw RuntimeError(fmt::format(
        "'{}' is not a safetensors file: it holds {} bytes, fewer than the 8 "
        "of the header length",
        path, file.size));
  uint64_t length = 0;
  for (int i = 7; i >= 0; --i)
    length = length << 8 | file.bytes[i];
  if (length > file.size - kLengthBytes)
    throw RuntimeError(fmt::format(
        "'{}' is truncated: its header length says {} bytes of JSON after "
        "byte offset 8, the file holds {}",
        path, length, file.size - kLengthBytes));
  nlohmann::json header = parseHeader(
      path, reinterpret_cast<const char *>(file.bytes + kLengthBytes),
      size_t(length));
  if (!header.is_object())
    throw RuntimeError(fmt::format(
        "'{}': byte offset 8: the JSON header must be an object", path));
  result.dataStart = kLengthBytes + length;
  uint64_t dataSize = file.size - result.dataStart;
  for (const auto &[name, value] : header.items())
    if (name != "__metadata__")
      result.entries[name] = readEntry(path, name, value, dataSize);
  checkTiling(result, dataSize);
  return result;
}

} // namespace

SafetensorsArchive::SafetensorsArchive(const std::string &path)
    : file(std::make_shared<SafetensorsFile>(openSafetensors(path))) {}

std::vector<std::string> SafetensorsArchive::names() const {
  std::vector<std::string> names;
  for (const auto &entry : file->entries)
    names.push_back(entry.first);
  return names;
}

ArrayView SafetensorsArchive::tensor(const std::string &name) const {
  auto found = file->entries.find(name);
  if (found == file->entries.end()) {
    std::vector<std::string> all = names();
    throw RuntimeError(fmt::format(
        "'{}' holds no tensor '{}': {}", file->path, name,
        all.empty() ? "it holds no tensors"
                    : fmt::format("it holds '{}'", fmt::join(all, "', '"))));
  }
  const Entry &entry = found->second;
  std::string origin = fmt::format("'{}': tensor '{}'", file->path, name);
  if (!entry.dtype->type)
    throw RuntimeError(fmt::format(
        "{} is {}, which mbt does not convert; save it as F32, F16 or BF16",
        origin, entry.dtype->name));
  ArrayView view;
  view.origin = origin;
  view.type = *entry.dtype->type;
  view.shape = entry.shape;
  view.data = file->file.bytes + file->dataStart + entry.begin;
  view.owner = file->file.owner;
  return view;
}

std::vector<std::string> safetensorNames(const std::string &path) {
  return SafetensorsArchive(path).names();
}

ArrayView readSafetensor(const std::string &path, const std::string &name) {
  return SafetensorsArchive(path).tensor(name);
}

std::string safetensorsFile(const std::vector<NamedTensor> &tensors) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  header["__metadata__"] = {{"format", "pt"}};
  uint64_t offset = 0;
  for (const NamedTensor &tensor : tensors) {
    if (tensor.name == "__metadata__" || header.contains(tensor.name))
      throw RuntimeError(fmt::format(
          "cannot write tensor '{}' to a safetensors file twice", tensor.name));
    uint64_t elements = 1;
    for (int64_t dim : tensor.shape)
      elements *= static_cast<uint64_t>(dim);
    uint64_t bytes = elements * static_cast<uint64_t>(dtypeBytes(tensor.dtype));
    header[tensor.name] = {
        {"dtype", tensor.dtype == DType::F64 ? "F64" : "F32"},
        {"shape", tensor.shape},
        {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string json = header.dump();
  json.append((8 - json.size() % 8) % 8, ' ');
  std::string file(8, '\0');
  uint64_t length = json.size();
  for (int i = 0; i < 8; ++i) // little-endian, whatever the host
    file[i] = static_cast<char>((length >> (8 * i)) & 0xff);
  file += json;
  for (const NamedTensor &tensor : tensors) {
    const auto &entry = header[tensor.name]["data_offsets"];
    size_t bytes = entry[1].get<uint64_t>() - entry[0].get<uint64_t>();
    file.append(static_cast<const char *>(tensor.data), bytes);
  }
  return file;
}

} // namespace runtime
} // namespace mbt
