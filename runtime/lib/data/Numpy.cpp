//===- Numpy.cpp - .npy headers and files ---------------------------------===//
//
// The header is a Python literal, so it is parsed as one: a recursive
// descent over strings, integers, True/False/None, tuples, lists and dicts
// (depth-limited, since the header is the file's to choose), then the dict
// is checked key by key. Errors name the byte offset in the file (or in the
// .npz member) where the offending text starts.
//
//===----------------------------------------------------------------------===//

#include "mbt/runtime/data/Numpy.h"

#include "mbt/runtime/Error.h"

#include "NpyDetail.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstring>
#include <utility>

namespace mbt {
namespace runtime {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
/// Nesting deeper than this is no numpy header (a structured dtype with
/// sub-arrays nests a few levels) and would only risk the stack.
constexpr int kMaxDepth = 32;
/// A Python literal as numpy writes it in a header.
struct PyValue {
  enum class Kind { String, Bool, None, Int, Tuple, List, Dict } kind;
  std::string text;           // String
  int64_t number = 0;         // Int, Bool
  std::vector<PyValue> items; // Tuple, List; Dict: key, value, key, ...
  size_t begin = 0, end = 0;  // its text, as offsets into the header
};

class HeaderParser {
public:
  HeaderParser(const char *text, size_t size, uint64_t base,
               const std::string &origin)
      : text(text), size(size), base(base), origin(origin) {}

  /// The header's one value, followed by nothing but padding.
  PyValue parseDocument() {
    PyValue value = parseValue(0);
    skipSpace();
    if (pos != size)
      fail("unexpected text after the header's dict");
    return value;
  }

  [[noreturn]] void fail(const std::string &message) const {
    failAt(pos, message);
  }
  [[noreturn]] void failAt(size_t at, const std::string &message) const {
    throw RuntimeError(fmt::format("{}: byte offset {}: npy header: {}", origin,
                                   base + at, message));
  }
  std::string textOf(const PyValue &value) const {
    return std::string(text + value.begin, value.end - value.begin);
  }

private:
  void skipSpace() {
    while (pos < size && (text[pos] == ' ' || text[pos] == '\n' ||
                          text[pos] == '\t' || text[pos] == '\r'))
      ++pos;
  }

  PyValue parseValue(int depth) {
    skipSpace();
    if (depth > kMaxDepth)
      fail("nested too deeply");
    if (pos == size)
      fail("the header ends where a value should be");
    size_t begin = pos;
    PyValue value;
    char c = text[pos];
    if (c == '{')
      value = parseItems(PyValue::Kind::Dict, '}', depth);
    else if (c == '(')
      value = parseItems(PyValue::Kind::Tuple, ')', depth);
    else if (c == '[')
      value = parseItems(PyValue::Kind::List, ']', depth);
    else if (c == '\'' || c == '"')
      value = parseString();
    else if (c == '-' || (c >= '0' && c <= '9'))
      value = parseInt();
    else
      value = parseName();
    value.begin = begin;
    value.end = pos;
    return value;
  }

  /// `open` items `close`, items separated by commas, a trailing comma
  /// allowed; a dict's items are `key: value`.
  PyValue parseItems(PyValue::Kind kind, char close, int depth) {
    PyValue value;
    value.kind = kind;
    ++pos;
    for (;;) {
      skipSpace();
      if (pos < size && text[pos] == close)
        break;
      value.items.push_back(parseValue(depth + 1));
      skipSpace();
      if (kind == PyValue::Kind::Dict) {
        if (pos == size || text[pos] != ':')
          fail("expected ':' after a key");
        ++pos;
        value.items.push_back(parseValue(depth + 1));
        skipSpace();
      }
      if (pos < size && text[pos] == ',') {
        ++pos;
        continue;
      }
      if (pos == size || text[pos] != close)
        fail(fmt::format("expected ',' or '{}'", close));
    }
    ++pos;
    return value;
  }

  PyValue parseString() {
    PyValue value;
    value.kind = PyValue::Kind::String;
    char quote = text[pos++];
    while (pos < size && text[pos] != quote) {
      if (text[pos] == '\\' && pos + 1 < size)
        ++pos; // the escaped character stands for itself
      value.text.push_back(text[pos++]);
    }
    if (pos == size)
      fail("unterminated string");
    ++pos;
    return value;
  }

  PyValue parseInt() {
    PyValue value;
    value.kind = PyValue::Kind::Int;
    auto [end, error] = std::from_chars(text + pos, text + size, value.number);
    if (error == std::errc::result_out_of_range)
      fail("an integer that does not fit in 64 bits");
    if (error != std::errc())
      fail("expected a value");
    pos = size_t(end - text);
    if (pos < size && (text[pos] == 'L' || text[pos] == 'l'))
      ++pos; // Python 2's long suffix, in files written by old numpy
    return value;
  }

  PyValue parseName() {
    size_t begin = pos;
    while (pos < size && (std::isalnum(static_cast<unsigned char>(text[pos])) ||
                          text[pos] == '_'))
      ++pos;
    std::string name(text + begin, pos - begin);
    PyValue value;
    if (name == "True" || name == "False") {
      value.kind = PyValue::Kind::Bool;
      value.number = name == "True";
    } else if (name == "None") {
      value.kind = PyValue::Kind::None;
    } else {
      failAt(begin,
             name.empty() ? "expected a value" : "unknown name '" + name + "'");
    }
    return value;
  }

  const char *text;
  size_t size;
  size_t pos = 0;
  uint64_t base;
  const std::string &origin;
};

struct DescrCode {
  const char *code;
  ElementType type;
};

constexpr DescrCode kDescrCodes[] = {
    {"b1", ElementType::Bool}, {"u1", ElementType::U8},
    {"i1", ElementType::I8},   {"u2", ElementType::U16},
    {"i2", ElementType::I16},  {"u4", ElementType::U32},
    {"i4", ElementType::I32},  {"u8", ElementType::U64},
    {"i8", ElementType::I64},  {"f2", ElementType::F16},
    {"f4", ElementType::F32},  {"f8", ElementType::F64}};

void readDescr(const HeaderParser &parser, const PyValue &value,
               NpyHeader &header) {
  if (value.kind != PyValue::Kind::String)
    parser.failAt(value.begin,
                  fmt::format("the structured dtype {} is not supported: save "
                              "each field as an array of its own",
                              parser.textOf(value)));
  const std::string &descr = value.text;
  if (descr.size() >= 2 && std::strchr("<>|=", descr[0]))
    for (const DescrCode &known : kDescrCodes)
      if (descr.compare(1, std::string::npos, known.code) == 0) {
        header.type = known.type;
        header.bigEndian = descr[0] == '>' && elementSize(known.type) > 1;
        return;
      }
  parser.failAt(value.begin,
                fmt::format("dtype '{}' is not supported: mbt reads bool, "
                            "integer (i1..i8, u1..u8) and float (f2, f4, f8) "
                            "arrays; convert it with a.astype(np.float32)",
                            descr));
}

void readShape(const HeaderParser &parser, const PyValue &value,
               NpyHeader &header) {
  // A bare 5 (or `(5)`, which is 5 to Python) is forgiven as (5,).
  bool single = value.kind == PyValue::Kind::Int;
  if (!single && value.kind != PyValue::Kind::Tuple &&
      value.kind != PyValue::Kind::List)
    parser.failAt(value.begin, "'shape' must be a tuple of integers");
  for (const PyValue &dim :
       single ? std::vector<PyValue>{value} : value.items) {
    if (dim.kind != PyValue::Kind::Int || dim.number < 0)
      parser.failAt(dim.begin, fmt::format("'shape' holds '{}', not a size",
                                           parser.textOf(dim)));
    header.shape.push_back(dim.number);
  }
  uint64_t bytes = elementSize(header.type);
  for (int64_t dim : header.shape)
    if (__builtin_mul_overflow(bytes, uint64_t(dim), &bytes) ||
        bytes > uint64_t(INT64_MAX))
      parser.failAt(value.begin, fmt::format("shape {} is too large: its "
                                             "bytes overflow 63 bits",
                                             parser.textOf(value)));
}

std::string quoted(const std::string &path) { return "'" + path + "'"; }

ArrayView makeView(const NpyHeader &header, const void *data,
                   std::shared_ptr<const void> owner, std::string origin) {
  ArrayView view;
  view.origin = std::move(origin);
  view.type = header.type;
  view.shape = header.shape;
  view.data = data;
  view.owner = std::move(owner);
  return view;
}

} // namespace

namespace detail {

std::pair<uint64_t, uint64_t> npyPreamble(const unsigned char *bytes,
                                          size_t size,
                                          const std::string &origin) {
  if (size < kMagicSize || std::memcmp(bytes, kMagic, kMagicSize) != 0)
    throw RuntimeError(fmt::format(
        "{} is not a .npy file: it does not start with \"\\x93NUMPY\"",
        origin));
  if (size < 8)
    throw RuntimeError(fmt::format(
        "{} is truncated: the file ends inside the version", origin));
  unsigned major = bytes[6], minor = bytes[7];
  if (major < 1 || major > 3 || minor != 0)
    throw RuntimeError(fmt::format("{}: byte offset 6: .npy format version "
                                   "{}.{} is not supported (1.0, 2.0, 3.0)",
                                   origin, major, minor));
  uint64_t start = major == 1 ? 10 : 12;
  if (size < start)
    throw RuntimeError(fmt::format(
        "{} is truncated: the file ends inside the header length", origin));
  uint64_t length = uint64_t(bytes[8]) | uint64_t(bytes[9]) << 8;
  if (major > 1)
    length |= uint64_t(bytes[10]) << 16 | uint64_t(bytes[11]) << 24;
  return {start, start + length};
}

uint64_t dataBytes(const NpyHeader &header) {
  uint64_t bytes = elementSize(header.type);
  for (int64_t dim : header.shape)
    bytes *= uint64_t(dim);
  return bytes;
}

void checkCOrder(const NpyHeader &header, const std::string &origin) {
  if (header.fortranOrder)
    throw RuntimeError(fmt::format(
        "{} is in Fortran order (column-major), which mbt does not read: "
        "save np.ascontiguousarray(a) instead",
        origin));
}

void swapBytes(unsigned char *data, uint64_t bytes, size_t size) {
  for (uint64_t i = 0; i + size <= bytes; i += size)
    std::reverse(data + i, data + i + size);
}

ArrayView viewOf(const NpyHeader &header, const unsigned char *data,
                 std::shared_ptr<const void> owner, std::string origin) {
  if (!header.bigEndian)
    return makeView(header, data, std::move(owner), std::move(origin));
  uint64_t bytes = dataBytes(header);
  std::shared_ptr<unsigned char[]> copy(new unsigned char[bytes]);
  std::memcpy(copy.get(), data, bytes);
  swapBytes(copy.get(), bytes, elementSize(header.type));
  return makeView(header, copy.get(), copy, std::move(origin));
}

} // namespace detail

NpyHeader parseNpyHeader(const void *data, size_t size,
                         const std::string &origin) {
  auto *bytes = static_cast<const unsigned char *>(data);
  auto [start, end] = detail::npyPreamble(bytes, size, origin);
  if (end > size)
    throw RuntimeError(fmt::format(
        "{} is truncated: its header needs {} bytes, the file holds {}", origin,
        end, size));
  HeaderParser parser(reinterpret_cast<const char *>(bytes + start),
                      size_t(end - start), start, origin);
  PyValue dict = parser.parseDocument();
  if (dict.kind != PyValue::Kind::Dict)
    parser.failAt(dict.begin, "the header is not a dict");
  const PyValue *descr = nullptr, *order = nullptr, *shape = nullptr;
  for (size_t i = 0; i + 1 < dict.items.size(); i += 2) {
    const PyValue &key = dict.items[i];
    const PyValue *value = &dict.items[i + 1];
    if (key.kind == PyValue::Kind::String && key.text == "descr")
      descr = value;
    else if (key.kind == PyValue::Kind::String && key.text == "fortran_order")
      order = value;
    else if (key.kind == PyValue::Kind::String && key.text == "shape")
      shape = value;
    else
      parser.failAt(key.begin, fmt::format("unknown key {} (a .npy header "
                                           "holds 'descr', 'fortran_order' "
                                           "and 'shape')",
                                           parser.textOf(key)));
  }
  if (!descr || !order || !shape)
    parser.failAt(dict.begin, fmt::format("the header has no '{}'",
                                          !descr   ? "descr"
                                          : !order ? "fortran_order"
                                                   : "shape"));
  NpyHeader header;
  readDescr(parser, *descr, header);
  if (order->kind != PyValue::Kind::Bool)
    parser.failAt(order->begin, "'fortran_order' must be True or False");
  header.fortranOrder = order->number != 0;
  readShape(parser, *shape, header);
  header.dataOffset = end;
  return header;
}

ArrayView readNpy(const std::string &path) {
  FileMapping file = mapFile(path);
  std::string origin = quoted(path);
  NpyHeader header = parseNpyHeader(file.bytes, file.size, origin);
  detail::checkCOrder(header, origin);
  uint64_t expected = detail::dataBytes(header);
  uint64_t found = file.size - header.dataOffset;
  if (found < expected)
    throw RuntimeError(fmt::format(
        "{} is truncated: its header promises {} bytes of data after byte "
        "offset {}, the file holds {}",
        origin, expected, header.dataOffset, found));
  if (found > expected)
    throw RuntimeError(fmt::format(
        "{} holds {} bytes of data after byte offset {}, but its header "
        "promises {}",
        origin, found, header.dataOffset, expected));
  return detail::viewOf(header, file.bytes + header.dataOffset, file.owner,
                        origin);
}

} // namespace runtime
} // namespace mbt
