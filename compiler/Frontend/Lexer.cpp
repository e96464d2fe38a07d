//===- Lexer.cpp - lexer of the mbt language ------------------------------===//
#include "compiler/Frontend/Lexer.h"

#include "llvm/ADT/StringSwitch.h"

#include <cctype>
#include <cmath>

using namespace mbt;

Token Lexer::getTok() {
  // Skip blanks and comments; newlines end statements outside (...) and [...].
  while (true) {
    int c = peekChar();
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      getNextChar();
      continue;
    }
    if (c == '#') {
      while (peekChar() != '\n' && peekChar() != EOF)
        getNextChar();
      continue;
    }
    if (c == '\n') {
      Location loc{lastLocation.file, curLine, curCol};
      getNextChar();
      if (nesting > 0 || skipNewline)
        continue;
      skipNewline = true;
      lastLocation = loc;
      return tok_newline;
    }
    break;
  }

  lastLocation.line = curLine;
  lastLocation.col = curCol;
  skipNewline = false;
  spelling.clear();

  int c = peekChar();
  if (c == EOF)
    return tok_eof;

  // Identifier or keyword: [a-zA-Z_][a-zA-Z0-9_]*
  if (std::isalpha(c) || c == '_') {
    while (std::isalnum(peekChar()) || peekChar() == '_')
      spelling += static_cast<char>(getNextChar());
    return llvm::StringSwitch<Token>(spelling)
        .Case("model", tok_model)
        .Case("input", tok_input)
        .Case("target", tok_target)
        .Case("param", tok_param)
        .Case("metric", tok_metric)
        .Case("sweep", tok_sweep)
        .Case("fn", tok_fn)
        .Case("import", tok_import)
        .Case("return", tok_return)
        .Case("if", tok_if)
        .Case("else", tok_else)
        .Case("not", tok_not)
        .Case("and", tok_and)
        .Case("or", tok_or)
        .Case("true", tok_true)
        .Case("false", tok_false)
        .Case("assert", tok_assert)
        .Case("optim", tok_optim)
        .Default(tok_identifier);
  }

  // Number: [0-9]+ ('.' [0-9]*)? ([eE] [+-]? [0-9]+)? or '.' [0-9]+ ...
  if (std::isdigit(c) ||
      (c == '.' && pos + 1 < buffer.size() && std::isdigit(buffer[pos + 1])))
    return lexNumber();

  if (c == '"')
    return lexString();

  getNextChar();
  switch (c) {
  case '(':
  case '[':
    ++nesting;
    return Token(c);
  case ')':
  case ']':
    if (nesting > 0)
      --nesting;
    return Token(c);
  case '{':
  case '}':
    // A brace never appears inside (...) or [...]: resynchronize.
    nesting = 0;
    return Token(c);
  case '=':
    if (peekChar() == '=') {
      getNextChar();
      return tok_eq;
    }
    return tok_equal;
  case '<':
  case '>':
    if (peekChar() == '=') {
      getNextChar();
      return c == '<' ? tok_le : tok_ge;
    }
    return Token(c);
  case '!':
    if (peekChar() == '=') {
      getNextChar();
      return tok_ne;
    }
    return lexError("unexpected character '!' (write 'not' for negation)");
  case ',':
  case ':':
  case '@':
  case '+':
  case '-':
  case '*':
  case '/':
    return Token(c);
  default:
    break;
  }
  if (std::isprint(c))
    return lexError(std::string("unexpected character '") +
                    static_cast<char>(c) + "'");
  char hex[8];
  std::snprintf(hex, sizeof(hex), "0x%02X", c);
  return lexError(std::string("unexpected byte ") + hex);
}

llvm::StringRef mbt::sourceFilePath(llvm::StringRef identifier) {
  llvm::StringRef path = identifier;
  if (path.consume_front("within split at ") && path.consume_back(" offset "))
    return path.rsplit(':').first;
  return identifier;
}

/// string ::= '"' { any character but '"' and newline } '"'
Token Lexer::lexString() {
  getNextChar(); // the opening quote
  while (peekChar() != '"') {
    int c = peekChar();
    if (c == '\n' || c == EOF)
      return lexError("unterminated string");
    spelling += static_cast<char>(getNextChar());
  }
  getNextChar(); // the closing quote
  return tok_string;
}

Token Lexer::lexNumber() {
  bool isInt = true;
  while (std::isdigit(peekChar()))
    spelling += static_cast<char>(getNextChar());
  if (peekChar() == '.') {
    isInt = false;
    spelling += static_cast<char>(getNextChar());
    while (std::isdigit(peekChar()))
      spelling += static_cast<char>(getNextChar());
  }
  if (peekChar() == 'e' || peekChar() == 'E') {
    isInt = false;
    spelling += static_cast<char>(getNextChar());
    if (peekChar() == '+' || peekChar() == '-')
      spelling += static_cast<char>(getNextChar());
    if (!std::isdigit(peekChar()))
      return lexError("malformed number '" + spelling + "': missing exponent");
    while (std::isdigit(peekChar()))
      spelling += static_cast<char>(getNextChar());
  }
  // A letter right after a number (`12ab`) is a typo, not two tokens.
  if (std::isalpha(peekChar()) || peekChar() == '_') {
    while (std::isalnum(peekChar()) || peekChar() == '_')
      spelling += static_cast<char>(getNextChar());
    return lexError("malformed number '" + spelling + "'");
  }
  numIsInteger = isInt;
  if (isInt) {
    if (llvm::StringRef(spelling).getAsInteger(10, intValue))
      return lexError("integer literal '" + spelling + "' is too large");
    numValue = static_cast<double>(intValue);
    return tok_number;
  }
  intValue = 0;
  if (llvm::StringRef(spelling).getAsDouble(numValue, /*AllowInexact=*/true))
    return lexError("malformed number '" + spelling + "'");
  if (!std::isfinite(numValue))
    return lexError("number '" + spelling + "' is out of range");
  return tok_number;
}
