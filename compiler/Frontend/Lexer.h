//===- Lexer.h - lexer of the mbt language ----------------------*- C++ -*-===//
//
// A hand-written lexer in the style of the Toy tutorial's: it walks a buffer
// one character at a time, keeps the current token and the location where it
// starts. Newlines end statements, except inside parentheses and brackets,
// where they are ignored (as in Python); `#` starts a comment that runs to the
// end of the line. Strings (`"nn"`, only in imports) run to the next quote on
// the same line and have no escapes.
//
//===----------------------------------------------------------------------===//
#ifndef MBT_COMPILER_FRONTEND_LEXER_H
#define MBT_COMPILER_FRONTEND_LEXER_H

#include "llvm/ADT/StringRef.h"

#include <cassert>
#include <cstdio>

#include <cstdint>
#include <memory>
#include <string>

namespace mbt {

/// A position in a source file (1-based line and column).
struct Location {
  std::shared_ptr<std::string> file;
  int line = 0;
  int col = 0;
};

/// The file a buffer comes from: mlir::splitAndProcessBuffer (mbtc
/// -split-input-file) names each chunk "within split at FILE:LINE offset ",
/// and paths in it (imports, data files) are relative to FILE.
llvm::StringRef sourceFilePath(llvm::StringRef identifier);

/// Tokens: punctuation is its own character; everything else is negative.
enum Token : int {
  tok_lbrace = '{',
  tok_rbrace = '}',
  tok_lparen = '(',
  tok_rparen = ')',
  tok_lbracket = '[',
  tok_rbracket = ']',
  tok_comma = ',',
  tok_equal = '=',
  tok_colon = ':',
  tok_at = '@',
  tok_plus = '+',
  tok_minus = '-',
  tok_star = '*',
  tok_slash = '/',
  tok_lt = '<',
  tok_gt = '>',

  tok_eof = -1,
  tok_newline = -2,
  tok_error = -3, // a malformed token; getErrorMessage() says why

  // Keywords.
  tok_model = -10,
  tok_input = -11,
  tok_target = -12,
  tok_param = -13,
  tok_metric = -14,
  tok_sweep = -15,
  tok_fn = -16,
  tok_import = -17,
  tok_return = -18,
  tok_if = -19,
  tok_else = -30,
  tok_not = -31,
  tok_and = -32,
  tok_or = -33,
  tok_true = -34,
  tok_false = -35,
  tok_assert = -36,
  tok_optim = -37,

  // Primary.
  tok_identifier = -20,
  tok_number = -21,
  tok_string = -22,

  // Two-character comparisons.
  tok_le = -40, // <=
  tok_ge = -41, // >=
  tok_eq = -42, // ==
  tok_ne = -43, // !=
};

/// Splits a buffer into tokens. The buffer must outlive the lexer.
class Lexer {
public:
  Lexer(llvm::StringRef buffer, std::string filename)
      : buffer(buffer),
        lastLocation{std::make_shared<std::string>(std::move(filename)), 0, 0} {
  }

  /// The current token.
  Token getCurToken() const { return curTok; }

  /// Moves to the next token and returns it.
  Token getNextToken() { return curTok = getTok(); }

  /// Moves past the current token, which must be `tok`.
  void consume(Token tok) {
    (void)tok;
    assert(tok == curTok && "consume: unexpected token");
    getNextToken();
  }

  /// The spelling of the current identifier, keyword or number; the
  /// contents of the current string.
  llvm::StringRef getSpelling() const { return spelling; }
  /// The name of the current identifier (or keyword).
  llvm::StringRef getId() const { return spelling; }
  /// The value of the current number.
  double getValue() const { return numValue; }
  /// Whether the current number is an integer literal (no '.', no exponent).
  bool isInteger() const { return numIsInteger; }
  /// The value of the current integer literal.
  int64_t getIntValue() const { return intValue; }
  /// Why the current token is tok_error.
  llvm::StringRef getErrorMessage() const { return errorMessage; }

  /// Where the current token starts.
  const Location &getLastLocation() const { return lastLocation; }
  std::shared_ptr<std::string> getFile() const { return lastLocation.file; }

  /// Forgets open parentheses and brackets, so that newlines end statements
  /// again; the parser calls this when it recovers from an error.
  void resetNesting() { nesting = 0; }

private:
  /// Returns the next character, advancing the line and column counters.
  int getNextChar() {
    if (pos >= buffer.size())
      return EOF;
    char c = buffer[pos++];
    if (c == '\n') {
      ++curLine;
      curCol = 1;
    } else {
      ++curCol;
    }
    return static_cast<unsigned char>(c);
  }

  int peekChar() const {
    return pos < buffer.size() ? static_cast<unsigned char>(buffer[pos]) : EOF;
  }

  Token getTok();
  Token lexNumber();
  Token lexString();
  Token lexError(std::string message) {
    errorMessage = std::move(message);
    return tok_error;
  }

  llvm::StringRef buffer;
  size_t pos = 0;
  int curLine = 1;
  int curCol = 1;
  /// Open '(' and '[' not yet closed: newlines inside them are skipped.
  int nesting = 0;
  /// Whether a newline token would be redundant (at the start of the buffer
  /// or right after another newline): runs of blank lines give one token.
  bool skipNewline = true;

  Token curTok = tok_eof;
  Location lastLocation;
  std::string spelling;
  std::string errorMessage;
  double numValue = 0;
  int64_t intValue = 0;
  bool numIsInteger = false;
};

} // namespace mbt

#endif // MBT_COMPILER_FRONTEND_LEXER_H
