//===- ParserExpr.cpp - expressions of the mbt language -------------------===//
//
// Operator-precedence parsing of expressions, as in the Toy tutorial, with
// a bound on their depth so that the recursive passes over the tree cannot
// run out of stack. Comparisons, `and`, `or` and `not` are only accepted
// inside the condition of an `if` or `assert`.
//
//===----------------------------------------------------------------------===//
#include "compiler/Frontend/Diagnostics.h"
#include "compiler/Frontend/Parser.h"

using namespace mbt;

int Parser::getTokPrecedence() const {
  switch (lexer.getCurToken()) {
  case tok_or:
    return 5;
  case tok_and:
    return 6;
  case tok_lt:
  case tok_gt:
  case tok_le:
  case tok_ge:
  case tok_eq:
  case tok_ne:
    return 10;
  case tok_plus:
  case tok_minus:
    return 20;
  case tok_star:
  case tok_slash:
  case tok_at:
    return 40;
  default:
    return -1;
  }
}

char Parser::getTokOperator() const {
  switch (lexer.getCurToken()) {
  case tok_le:
    return BinaryOp::Le;
  case tok_ge:
    return BinaryOp::Ge;
  case tok_eq:
    return BinaryOp::Eq;
  case tok_ne:
    return BinaryOp::Ne;
  case tok_and:
    return BinaryOp::And;
  case tok_or:
    return BinaryOp::Or;
  default: // + - * @ < >: the token is the character
    return static_cast<char>(lexer.getCurToken());
  }
}

/// expr ::= unary { binop unary }
///   binop ::= 'or'                (precedence 5, conditions only)
///           | 'and'               (precedence 6, conditions only)
///           | '<' | '>' | '<=' | '>=' | '==' | '!='
///                                 (precedence 10, conditions only)
///           | '+' | '-'           (precedence 20, left associative)
///           | '*' | '/' | '@'     (precedence 40, left associative)
std::unique_ptr<ExprAST> Parser::parseExpression() {
  auto lhs = parseUnary();
  if (!lhs)
    return nullptr;
  return parseBinOpRHS(0, std::move(lhs));
}

/// Operator-precedence parsing of `{ binop unary }` whose operators bind at
/// least as tightly as `exprPrec`, as in the Toy tutorial.
std::unique_ptr<ExprAST> Parser::parseBinOpRHS(int exprPrec,
                                               std::unique_ptr<ExprAST> lhs) {
  while (true) {
    int tokPrec = getTokPrecedence();
    if (tokPrec < exprPrec)
      return lhs;
    char op = getTokOperator();
    Location opLoc = lexer.getLastLocation();
    // Comparisons and logic only decide `if`s: elsewhere (and in the sweep's
    // evaluator) they would have no meaning.
    if (tokPrec < 20 && !inCondition) {
      emitError(ctx, opLoc)
          << "'" << spellOperator(op)
          << "' is only allowed in the condition of an 'if' or 'assert'";
      hadError = true;
      return nullptr;
    }
    lexer.getNextToken();
    auto rhs = parseUnary();
    if (!rhs)
      return nullptr;
    if (tokPrec < getTokPrecedence()) {
      rhs = parseBinOpRHS(tokPrec + 1, std::move(rhs));
      if (!rhs)
        return nullptr;
    }
    lhs = std::make_unique<BinaryExprAST>(std::move(opLoc), op, std::move(lhs),
                                          std::move(rhs));
    if (!checkDepth(*lhs))
      return nullptr;
  }
}

bool Parser::checkDepth(const ExprAST &expr) {
  if (expr.getDepth() <= kMaxExprDepth)
    return true;
  emitError(ctx, expr.loc()) << "expression is nested too deeply (more than "
                             << kMaxExprDepth << " levels)";
  hadError = true;
  return false;
}

namespace {
/// Counts one level of expression nesting (Parser::unaryDepth) while alive.
struct DepthGuard {
  unsigned &depth;
  explicit DepthGuard(unsigned &depth) : depth(depth) { ++depth; }
  ~DepthGuard() { --depth; }
};
} // namespace

bool Parser::checkNesting(const Location &loc) {
  if (unaryDepth < kMaxExprDepth)
    return true;
  emitError(ctx, loc) << "expression is nested too deeply (more than "
                      << kMaxExprDepth << " levels)";
  hadError = true;
  return false;
}

/// unary ::= '-' unary | 'not' unary { binop of precedence >= 10 } | primary
/// (`not a == b` is `not (a == b)`, as in Python; conditions only)
std::unique_ptr<ExprAST> Parser::parseUnary() {
  if (!checkNesting(lexer.getLastLocation()))
    return nullptr;
  DepthGuard guard(unaryDepth);
  if (lexer.getCurToken() == tok_not) {
    Location loc = lexer.getLastLocation();
    if (!inCondition) {
      emitError(ctx, loc) << "'not' is only allowed in the condition of an "
                             "'if' or 'assert'";
      hadError = true;
      return nullptr;
    }
    lexer.consume(tok_not);
    auto operand = parseUnary();
    if (operand)
      operand = parseBinOpRHS(10, std::move(operand));
    if (!operand)
      return nullptr;
    return std::make_unique<UnaryExprAST>(std::move(loc), '!',
                                          std::move(operand));
  }
  if (lexer.getCurToken() != tok_minus)
    return parsePrimary();
  Location loc = lexer.getLastLocation();
  lexer.consume(tok_minus);
  auto operand = parseUnary();
  if (!operand)
    return nullptr;
  return std::make_unique<UnaryExprAST>(std::move(loc), '-',
                                        std::move(operand));
}

/// primary ::= NUMBER | 'true' | 'false' | IDENT | call | '(' expr ')' | list
std::unique_ptr<ExprAST> Parser::parsePrimary() {
  switch (lexer.getCurToken()) {
  case tok_number:
    return parseNumberExpr();
  case tok_param: {
    // In an optimizer, `param` is the parameter element being updated.
    if (!inOptimizer) {
      reportUnexpected("an expression");
      return nullptr;
    }
    Location loc = lexer.getLastLocation();
    lexer.consume(tok_param);
    return std::make_unique<VariableExprAST>(std::move(loc), "param");
  }
  case tok_true:
  case tok_false: {
    // Names that Sema knows; the sweep's evaluator reports them as unknown.
    bool value = lexer.getCurToken() == tok_true;
    auto result = std::make_unique<VariableExprAST>(lexer.getLastLocation(),
                                                    value ? "true" : "false");
    lexer.getNextToken();
    return result;
  }
  case tok_identifier: {
    std::string name = lexer.getId().str();
    Location loc = lexer.getLastLocation();
    lexer.consume(tok_identifier);
    return parseIdentifierExpr(std::move(name), std::move(loc));
  }
  case tok_lparen:
    return parseParenExpr();
  case tok_lbracket:
    return parseListExpr();
  case tok_lbrace:
    return parseDictExpr();
  case tok_string: {
    auto result = std::make_unique<StringExprAST>(lexer.getLastLocation(),
                                                  lexer.getSpelling());
    lexer.consume(tok_string);
    return result;
  }
  default:
    reportUnexpected("an expression");
    return nullptr;
  }
}

/// number ::= NUMBER
std::unique_ptr<ExprAST> Parser::parseNumberExpr() {
  auto result =
      std::make_unique<NumberExprAST>(lexer.getLastLocation(), lexer.getValue(),
                                      lexer.isInteger(), lexer.getIntValue());
  lexer.consume(tok_number);
  return result;
}

/// parenExpr ::= '(' expr ')'
std::unique_ptr<ExprAST> Parser::parseParenExpr() {
  lexer.consume(tok_lparen);
  auto value = parseExpression();
  if (!value || !expect(tok_rparen, "')'"))
    return nullptr;
  return value;
}

/// list ::= '[' [ expr { ',' expr } [','] ] ']'
std::unique_ptr<ExprAST> Parser::parseListExpr() {
  Location loc = lexer.getLastLocation();
  lexer.consume(tok_lbracket);
  ExprASTList elements;
  bool ok = parseCommaSeparatedUntil(tok_rbracket, "the list", [&] {
    auto element = parseExpression();
    if (!element)
      return false;
    elements.push_back(std::move(element));
    return true;
  });
  if (!ok)
    return nullptr;
  return std::make_unique<ListExprAST>(std::move(loc), std::move(elements));
}

/// dictExpr ::= '{' (expr ':' expr (',' expr ':' expr)* ','?)? '}'
std::unique_ptr<ExprAST> Parser::parseDictExpr() {
  Location loc = lexer.getLastLocation();
  lexer.consume(tok_lbrace);
  std::vector<DictExprAST::Entry> entries;
  bool ok = parseCommaSeparatedUntil(tok_rbrace, "the dict", [&] {
    auto key = parseExpression();
    if (!key || !expect(tok_colon, "':' after the dict's key"))
      return false;
    auto value = parseExpression();
    if (!value)
      return false;
    entries.push_back({std::move(key), std::move(value)});
    return true;
  });
  if (!ok)
    return nullptr;
  return std::make_unique<DictExprAST>(std::move(loc), std::move(entries));
}

/// identifierExpr ::= IDENT | IDENT '(' args ')'
/// (the identifier has been consumed already)
std::unique_ptr<ExprAST> Parser::parseIdentifierExpr(std::string name,
                                                     Location loc) {
  if (lexer.getCurToken() != tok_lparen)
    return std::make_unique<VariableExprAST>(std::move(loc), name);
  std::vector<ArgumentAST> args;
  if (!parseCallArgs(args))
    return nullptr;
  return std::make_unique<CallExprAST>(std::move(loc), name, std::move(args));
}

/// A declaration keyword that also names arguments (`csv(target = ...)`):
/// it never starts an expression (unlike `param` in an optimizer), so
/// `KEYWORD =` in an argument list is unambiguous.
static bool isDeclarationKeyword(int token) {
  return token == tok_target || token == tok_input;
}

/// args ::= '(' [ arg { ',' arg } [','] ] ')'
/// arg  ::= [ name '=' ] expr      (positional arguments come first)
/// name ::= IDENT | 'target' | 'input'
bool Parser::parseCallArgs(std::vector<ArgumentAST> &args) {
  lexer.consume(tok_lparen);
  bool sawKeyword = false;
  return parseCommaSeparatedUntil(tok_rparen, "the argument list", [&] {
    ArgumentAST arg;
    Location argLoc = lexer.getLastLocation();
    if (isDeclarationKeyword(lexer.getCurToken())) {
      arg.name = lexer.getId().str();
      arg.nameLoc = argLoc;
      lexer.getNextToken();
      if (lexer.getCurToken() != tok_equal) {
        emitError(ctx, lexer.getLastLocation())
            << "expected '=' after argument name '" << arg.name << "'";
        hadError = true;
        return false;
      }
      lexer.consume(tok_equal);
      arg.value = parseExpression();
    } else if (lexer.getCurToken() == tok_identifier) {
      // `name = value`, or an expression that starts with an identifier.
      std::string name = lexer.getId().str();
      lexer.consume(tok_identifier);
      if (lexer.getCurToken() == tok_equal) {
        lexer.consume(tok_equal);
        arg.name = std::move(name);
        arg.nameLoc = argLoc;
        arg.value = parseExpression();
      } else {
        // This bypasses parseUnary, so it counts the nesting itself: else
        // `f(f(f(...)))` recurses without bound.
        if (!checkNesting(argLoc))
          return false;
        DepthGuard guard(unaryDepth);
        auto lhs = parseIdentifierExpr(std::move(name), argLoc);
        if (lhs)
          arg.value = parseBinOpRHS(0, std::move(lhs));
      }
    } else {
      arg.value = parseExpression();
    }
    if (!arg.value)
      return false;
    if (arg.name.empty() && sawKeyword) {
      emitError(ctx, argLoc) << "positional argument follows keyword argument";
      hadError = true;
      return false;
    }
    sawKeyword |= !arg.name.empty();
    args.push_back(std::move(arg));
    return true;
  });
}
