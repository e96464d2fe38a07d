//===- CsvScanner.cpp - Rows and fields of a CSV text ---------------------===//
//
// The file is opened with open(2) so that a missing file reports the real
// errno, then read whole through gzdopen, which reads gzip and plain files
// alike. The scanner works on that buffer with pointers: a field is a pair
// of pointers into it, so the hot loop allocates nothing but the row's
// vector, which keeps its capacity from row to row.
//
//===----------------------------------------------------------------------===//

#include "CsvScanner.h"

#include "mbt/runtime/Error.h"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <sys/stat.h>
#include <unistd.h>

namespace mbt {
namespace runtime {
namespace csv {

std::string readText(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw RuntimeError(
        fmt::format("cannot open '{}': {}", path, std::strerror(errno)));
  struct stat info{};
  if (::fstat(fd, &info) == 0 && S_ISDIR(info.st_mode)) {
    ::close(fd);
    throw RuntimeError(
        fmt::format("cannot open '{}': {}", path, std::strerror(EISDIR)));
  }
  gzFile file = gzdopen(fd, "rb");
  if (!file) {
    ::close(fd);
    throw RuntimeError(
        fmt::format("cannot open '{}': zlib could not start", path));
  }
  std::unique_ptr<gzFile_s, int (*)(gzFile)> closer(file, gzclose);
  gzbuffer(file, 1 << 18);
  std::string text;
  // The file's real size (compressed, for a .gz), plus the byte that finds
  // the end: a plain file is read without growing the buffer.
  text.reserve(static_cast<size_t>(std::max<off_t>(info.st_size, 0)) + 1);
  constexpr size_t kChunk = size_t(1) << 20;
  for (;;) {
    size_t used = text.size(), room = text.capacity() - used;
    size_t chunk = room ? std::min(room, kChunk) : kChunk;
    text.resize(used + chunk);
    int got = gzread(file, text.data() + used, static_cast<unsigned>(chunk));
    if (got < 0) {
      int code = 0;
      const char *message = gzerror(file, &code);
      throw RuntimeError(
          fmt::format("cannot read '{}' at byte offset {}: {}", path, used,
                      code == Z_ERRNO ? std::strerror(errno) : message));
    }
    text.resize(used + static_cast<size_t>(got));
    if (got == 0)
      return text;
  }
}

namespace {
bool endsWith(const std::string &text, std::string_view suffix) {
  if (text.size() < suffix.size())
    return false;
  for (size_t i = 0; i < suffix.size(); ++i) {
    char c = text[text.size() - suffix.size() + i];
    if (std::tolower(static_cast<unsigned char>(c)) != suffix[i])
      return false;
  }
  return true;
}
} // namespace

char delimiterFor(const std::string &path, char chosen) {
  if (chosen == '"' || chosen == '\n' || chosen == '\r')
    throw RuntimeError(fmt::format(
        "'{}': the delimiter cannot be a quote or a line break", path));
  if (chosen)
    return chosen;
  for (const char *suffix : {".tsv", ".tsv.gz", ".tab", ".tab.gz"})
    if (endsWith(path, suffix))
      return '\t';
  return ',';
}

int64_t columnOf(const char *lineStart, const char *at) {
  int64_t column = 1;
  for (const char *p = lineStart; p < at; ++p)
    column += (static_cast<unsigned char>(*p) & 0xc0) != 0x80;
  return column;
}

std::string shown(std::string_view text) {
  constexpr size_t kMax = 40;
  std::string out;
  for (size_t i = 0; i < text.size() && i < kMax; ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    out += c < 0x20 ? fmt::format("\\x{:02x}", c) : std::string(1, char(c));
  }
  if (text.size() > kMax)
    out += "...";
  return out;
}

std::string_view trim(std::string_view text) {
  auto pad = [](char c) { return c == ' ' || c == '\t'; };
  while (!text.empty() && pad(text.front()))
    text.remove_prefix(1);
  while (!text.empty() && pad(text.back()))
    text.remove_suffix(1);
  return text;
}

std::string_view fieldText(const Field &field, std::string &scratch) {
  if (!field.escaped)
    return {field.begin, static_cast<size_t>(field.end - field.begin)};
  scratch.clear();
  for (const char *p = field.begin; p < field.end; ++p) {
    scratch.push_back(*p);
    if (*p == '"')
      ++p; // the second quote of a "" pair
  }
  return scratch;
}

Scanner::Scanner(const std::string &path, const std::string &text,
                 char delimiter)
    : path(path), pos(text.data()), end(text.data() + text.size()),
      lineStart(pos), delimiter(delimiter) {
  if (text.compare(0, 3, "\xEF\xBB\xBF") == 0)
    lineStart = pos += 3;
}

void Scanner::skipLines(int64_t count) {
  for (; count > 0 && pos < end; --count) {
    const void *newline = std::memchr(pos, '\n', end - pos);
    pos = newline ? static_cast<const char *>(newline) + 1 : end;
    newLine(pos);
  }
}

bool Scanner::next(Row &row) {
  while (pos < end && atLineEnd(pos))
    skipLineEnd(); // a blank line
  if (pos == end)
    return false;
  row.line = line;
  row.fields.clear();
  for (;;) {
    Field field;
    field.line = line;
    field.lineStart = lineStart;
    field.start = pos;
    if (pos < end && *pos == '"')
      scanQuoted(field);
    else
      scanPlain(field); // also the empty last field of "a,b," at the end
    row.fields.push_back(field);
    if (pos == end)
      return true;
    if (*pos == delimiter) {
      ++pos;
      continue;
    }
    skipLineEnd(); // the scans stop only at these three
    return true;
  }
}

bool Scanner::atLineEnd(const char *p) const {
  return p == end || *p == '\n' ||
         (*p == '\r' && (p + 1 == end || p[1] == '\n'));
}

/// Past the "\n", "\r\n" or final "\r" at `pos`.
void Scanner::skipLineEnd() {
  pos += *pos == '\r' && pos + 1 < end ? 2 : 1;
  newLine(pos);
}

void Scanner::scanPlain(Field &field) {
  field.begin = pos;
  while (pos < end && *pos != delimiter && *pos != '\n')
    ++pos;
  field.end = pos;
  // A '\r' before the line's end belongs to the end, not to the field.
  if ((pos == end || *pos == '\n') && field.end > field.begin &&
      field.end[-1] == '\r')
    pos = --field.end;
}

void Scanner::scanQuoted(Field &field) {
  field.quoted = true;
  field.begin = ++pos;
  for (;;) {
    if (pos == end)
      throw RuntimeError(fmt::format("'{}':{}:{}: the quoted field never ends",
                                     path, field.line,
                                     columnOf(field.lineStart, field.start)));
    if (*pos == '"') {
      if (pos + 1 < end && pos[1] == '"') {
        field.escaped = true;
        pos += 2;
        continue;
      }
      break;
    }
    if (*pos++ == '\n')
      newLine(pos);
  }
  field.end = pos++;
  while (pos < end && (*pos == ' ' || *pos == '\t') && *pos != delimiter)
    ++pos;
  if (pos < end && *pos != delimiter && !atLineEnd(pos))
    throw RuntimeError(
        fmt::format("'{}':{}:{}: '{}' after the closing quote of a field (a "
                    "quote inside quotes is written \"\")",
                    path, line, columnOf(lineStart, pos), shown({pos, 1})));
}

} // namespace csv
} // namespace runtime
} // namespace mbt
