//===- CsvScanner.h - Rows and fields of a CSV text -------------*- C++ -*-===//
//
// The lexical half of the CSV reader (Csv.cpp gives the fields meaning):
// the file's text in one buffer, split into rows of fields by a small
// RFC 4180 state machine. It is ours rather than Debian's libcsv because
// libcsv hands its callbacks a field's unescaped bytes but never where the
// field began, so "line 17, column 5" would mean feeding it one byte at a
// time. Scanning the buffer ourselves gives every field its line and its
// place on the line for free, and lets unquoted fields (nearly all of
// them) stay views into the buffer; a quoted field holding "" is
// unescaped, into a scratch string, only when it is used.
//
// Line numbers are physical lines (1-based): skipped rows, blank lines and
// newlines inside quotes all count, so a number in a message is the number
// an editor shows. Lines end in "\n" or "\r\n"; a UTF-8 byte order mark at
// the start of the text is skipped.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_LIB_DATA_CSVSCANNER_H
#define MBT_RUNTIME_LIB_DATA_CSVSCANNER_H

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mbt {
namespace runtime {
namespace csv {

/// The whole uncompressed text of `path` (plain or gzipped). Throws
/// RuntimeError naming the path.
std::string readText(const std::string &path);

/// `chosen`, or when 0 the delimiter the name implies: '\t' for .tsv,
/// .tsv.gz, .tab and .tab.gz, else ','. Throws RuntimeError for a quote or
/// a line break.
char delimiterFor(const std::string &path, char chosen);

/// The 1-based character column of `at` on the line starting at
/// `lineStart` (UTF-8: continuation bytes do not count).
int64_t columnOf(const char *lineStart, const char *at);

/// A cell's text for a message: control characters escaped, long text cut.
std::string shown(std::string_view text);

/// `text` without the spaces and tabs around it.
std::string_view trim(std::string_view text);

/// One field of a row: its text in the buffer (inside the quotes of a
/// quoted field) and where it starts, for messages.
struct Field {
  const char *begin = nullptr, *end = nullptr;
  const char *start = nullptr;     // its first character (the opening quote)
  const char *lineStart = nullptr; // the start of the line `start` is on
  int64_t line = 0;
  bool quoted = false;
  bool escaped = false; // holds "" pairs
};

struct Row {
  int64_t line = 0; // where the row starts
  std::vector<Field> fields;
};

/// The text of `field`: a view into the buffer, or, when it holds "",
/// its unescaped copy in `scratch` (valid until scratch is used again).
std::string_view fieldText(const Field &field, std::string &scratch);

/// Splits a text (which must outlive it) into rows of fields.
class Scanner {
public:
  /// `path` names the file in messages.
  Scanner(const std::string &path, const std::string &text, char delimiter);

  /// Skips `count` physical lines, quotes and all.
  void skipLines(int64_t count);

  /// The next row that is not a blank line into `row`; false at the end.
  /// Throws RuntimeError for a quote that never ends or text after a
  /// closing quote.
  bool next(Row &row);

  /// The line the scanner is on (one past the last at the end).
  int64_t currentLine() const { return line; }

private:
  void newLine(const char *at) {
    ++line;
    lineStart = at;
  }
  bool atLineEnd(const char *p) const;
  void skipLineEnd();
  void scanPlain(Field &field);
  void scanQuoted(Field &field);

  const std::string &path;
  const char *pos, *end, *lineStart;
  int64_t line = 1;
  char delimiter;
};

} // namespace csv
} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_LIB_DATA_CSVSCANNER_H
