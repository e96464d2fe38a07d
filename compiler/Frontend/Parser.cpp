//===- Parser.cpp - recursive-descent parser of the mbt language ----------===//
#include "compiler/Frontend/Parser.h"
#include "compiler/Frontend/Diagnostics.h"

using namespace mbt;

//===----------------------------------------------------------------------===//
// Top level
//===----------------------------------------------------------------------===//

/// spec ::= { NEWLINE } { (model | sweep) { NEWLINE } } EOF
std::unique_ptr<ModuleAST> Parser::parseModule() {
  lexer.getNextToken(); // prime the lexer
  std::vector<std::unique_ptr<ModelAST>> models;
  std::vector<std::unique_ptr<SweepAST>> sweeps;
  while (true) {
    while (lexer.getCurToken() == tok_newline)
      lexer.consume(tok_newline);
    if (lexer.getCurToken() == tok_eof)
      break;
    if (lexer.getCurToken() == tok_model) {
      if (auto model = parseModel())
        models.push_back(std::move(model));
      continue;
    }
    if (lexer.getCurToken() == tok_sweep) {
      if (auto sweep = parseSweep())
        sweeps.push_back(std::move(sweep));
      continue;
    }
    reportUnexpected("'model' or 'sweep'");
    lexer.getNextToken();
    skipToTopLevel();
  }
  if (hadError)
    return nullptr;
  return std::make_unique<ModuleAST>(std::move(models), std::move(sweeps));
}

/// model ::= 'model' IDENT '{' { NEWLINE } { modelStmt stmtEnd } '}'
std::unique_ptr<ModelAST> Parser::parseModel() {
  Location loc = lexer.getLastLocation();
  lexer.consume(tok_model);
  std::string name;
  Location nameLoc;
  if (!expectIdentifier("model name", name, nameLoc) ||
      !expect(tok_lbrace, "'{' after the model name")) {
    skipToTopLevel();
    return nullptr;
  }
  if (lexer.getCurToken() == tok_newline)
    lexer.consume(tok_newline);

  std::vector<std::unique_ptr<StmtAST>> body;
  while (lexer.getCurToken() != tok_rbrace) {
    Token tok = lexer.getCurToken();
    if (tok == tok_eof || tok == tok_model || tok == tok_sweep) {
      reportUnexpected("'}' at the end of model '" + name + "'");
      return nullptr;
    }
    auto stmt = parseModelStatement();
    if (stmt && parseStatementEnd()) {
      body.push_back(std::move(stmt));
      continue;
    }
    skipToStatementEnd();
    if (lexer.getCurToken() == tok_newline)
      lexer.consume(tok_newline);
  }
  lexer.consume(tok_rbrace);
  return std::make_unique<ModelAST>(std::move(loc), name, std::move(nameLoc),
                                    std::move(body));
}

/// stmtEnd ::= NEWLINE | /* nothing, before */ '}'
bool Parser::parseStatementEnd() {
  if (lexer.getCurToken() == tok_newline) {
    lexer.consume(tok_newline);
    return true;
  }
  if (lexer.getCurToken() == tok_rbrace)
    return true;
  reportUnexpected("end of line after the statement");
  return false;
}

/// modelStmt ::= dataDecl | paramDecl
///             | 'metric' IDENT '=' expr
///             | IDENT '=' expr
std::unique_ptr<StmtAST> Parser::parseModelStatement() {
  switch (lexer.getCurToken()) {
  case tok_input:
  case tok_target:
    return parseDataDecl();
  case tok_param:
    return parseParamDecl();
  case tok_metric:
    return parseAssignment(/*metric=*/true);
  case tok_identifier:
    return parseAssignment(/*metric=*/false);
  default:
    reportUnexpected(
        "a model statement (input, target, param, metric or NAME = EXPR)");
    return nullptr;
  }
}

/// dataDecl ::= ('input' | 'target') IDENT ':' type
std::unique_ptr<StmtAST> Parser::parseDataDecl() {
  Location loc = lexer.getLastLocation();
  bool isInput = lexer.getCurToken() == tok_input;
  lexer.getNextToken();
  std::string name;
  Location nameLoc;
  TypeAST type;
  if (!expectIdentifier(isInput ? "input name" : "target name", name,
                        nameLoc) ||
      !expect(tok_colon, "':' before the type") || !parseType(type))
    return nullptr;
  return std::make_unique<DataDeclAST>(
      isInput ? StmtAST::Stmt_Input : StmtAST::Stmt_Target, std::move(loc),
      name, std::move(nameLoc), std::move(type));
}

/// paramDecl ::= 'param' IDENT ':' type '=' expr
std::unique_ptr<StmtAST> Parser::parseParamDecl() {
  Location loc = lexer.getLastLocation();
  lexer.consume(tok_param);
  std::string name;
  Location nameLoc;
  TypeAST type;
  if (!expectIdentifier("parameter name", name, nameLoc) ||
      !expect(tok_colon, "':' before the type") || !parseType(type) ||
      !expect(tok_equal, "'=' and an initializer after the parameter type"))
    return nullptr;
  auto init = parseExpression();
  if (!init)
    return nullptr;
  return std::make_unique<ParamDeclAST>(std::move(loc), name,
                                        std::move(nameLoc), std::move(type),
                                        std::move(init));
}

/// assignment ::= ['metric'] IDENT '=' expr
std::unique_ptr<StmtAST> Parser::parseAssignment(bool metric) {
  Location loc = lexer.getLastLocation();
  if (metric)
    lexer.consume(tok_metric);
  std::string name;
  Location nameLoc;
  if (!expectIdentifier(metric ? "metric name" : "name", name, nameLoc) ||
      !expect(tok_equal, "'=' after '" + name + "'"))
    return nullptr;
  auto value = parseExpression();
  if (!value)
    return nullptr;
  return std::make_unique<AssignStmtAST>(
      std::move(loc), name, std::move(nameLoc), std::move(value), metric);
}

/// type ::= IDENT '[' [ INT { ',' INT } ] ']'      e.g. f32[784], class[10]
bool Parser::parseType(TypeAST &type) {
  if (!expectIdentifier("an element type such as f32 or class",
                        type.elementType, type.loc) ||
      !expect(tok_lbracket, "'[' after the element type"))
    return false;
  if (lexer.getCurToken() == tok_rbracket) {
    lexer.consume(tok_rbracket);
    return true;
  }
  while (true) {
    if (lexer.getCurToken() != tok_number || !lexer.isInteger()) {
      reportUnexpected("an integer dimension size");
      return false;
    }
    type.dims.push_back(lexer.getIntValue());
    type.dimLocs.push_back(lexer.getLastLocation());
    lexer.consume(tok_number);
    if (lexer.getCurToken() == tok_rbracket) {
      lexer.consume(tok_rbracket);
      return true;
    }
    if (!expect(tok_comma, "',' or ']' in the shape"))
      return false;
  }
}

/// sweep ::= 'sweep' '{' { NEWLINE } { sweepSetting stmtEnd } '}'
std::unique_ptr<SweepAST> Parser::parseSweep() {
  Location loc = lexer.getLastLocation();
  lexer.consume(tok_sweep);
  if (!expect(tok_lbrace, "'{' after 'sweep'")) {
    skipToTopLevel();
    return nullptr;
  }
  if (lexer.getCurToken() == tok_newline)
    lexer.consume(tok_newline);

  std::vector<SweepSettingAST> settings;
  while (lexer.getCurToken() != tok_rbrace) {
    Token tok = lexer.getCurToken();
    if (tok == tok_eof || tok == tok_sweep) {
      reportUnexpected("'}' at the end of the sweep");
      return nullptr;
    }
    SweepSettingAST setting;
    if (parseSweepSetting(setting) && parseStatementEnd()) {
      settings.push_back(std::move(setting));
      continue;
    }
    skipToStatementEnd();
    if (lexer.getCurToken() == tok_newline)
      lexer.consume(tok_newline);
  }
  lexer.consume(tok_rbrace);
  return std::make_unique<SweepAST>(std::move(loc), std::move(settings));
}

/// sweepSetting ::= (IDENT | 'model') '=' expr
bool Parser::parseSweepSetting(SweepSettingAST &setting) {
  Token tok = lexer.getCurToken();
  if (tok != tok_identifier && tok != tok_model) {
    reportUnexpected("a sweep setting (NAME = VALUE)");
    return false;
  }
  setting.key = lexer.getId().str();
  setting.loc = lexer.getLastLocation();
  lexer.getNextToken();
  if (!expect(tok_equal, "'=' after '" + setting.key + "'"))
    return false;
  setting.value = parseExpression();
  return setting.value != nullptr;
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

int Parser::getTokPrecedence() const {
  switch (lexer.getCurToken()) {
  case tok_plus:
  case tok_minus:
    return 20;
  case tok_star:
  case tok_at:
    return 40;
  default:
    return -1;
  }
}

/// expr ::= unary { binop unary }
///   binop ::= '+' | '-'           (precedence 20, left associative)
///           | '*' | '@'           (precedence 40, left associative)
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
    char op = static_cast<char>(lexer.getCurToken());
    Location opLoc = lexer.getLastLocation();
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

/// unary ::= '-' unary | primary
std::unique_ptr<ExprAST> Parser::parseUnary() {
  if (unaryDepth >= kMaxExprDepth) {
    emitError(ctx, lexer.getLastLocation())
        << "expression is nested too deeply (more than " << kMaxExprDepth
        << " levels)";
    hadError = true;
    return nullptr;
  }
  struct DepthGuard {
    unsigned &depth;
    explicit DepthGuard(unsigned &depth) : depth(depth) { ++depth; }
    ~DepthGuard() { --depth; }
  } guard(unaryDepth);
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

/// primary ::= NUMBER | IDENT | call | '(' expr ')' | list
std::unique_ptr<ExprAST> Parser::parsePrimary() {
  switch (lexer.getCurToken()) {
  case tok_number:
    return parseNumberExpr();
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
  while (lexer.getCurToken() != tok_rbracket) {
    auto element = parseExpression();
    if (!element)
      return nullptr;
    elements.push_back(std::move(element));
    if (lexer.getCurToken() == tok_rbracket)
      break;
    if (!expect(tok_comma, "',' or ']' in the list"))
      return nullptr;
  }
  lexer.consume(tok_rbracket);
  return std::make_unique<ListExprAST>(std::move(loc), std::move(elements));
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

/// args ::= '(' [ arg { ',' arg } [','] ] ')'
/// arg  ::= [ IDENT '=' ] expr      (positional arguments come first)
bool Parser::parseCallArgs(std::vector<ArgumentAST> &args) {
  lexer.consume(tok_lparen);
  bool sawKeyword = false;
  while (lexer.getCurToken() != tok_rparen) {
    ArgumentAST arg;
    Location argLoc = lexer.getLastLocation();
    if (lexer.getCurToken() == tok_identifier) {
      // `name = value`, or an expression that starts with an identifier.
      std::string name = lexer.getId().str();
      lexer.consume(tok_identifier);
      if (lexer.getCurToken() == tok_equal) {
        lexer.consume(tok_equal);
        arg.name = std::move(name);
        arg.nameLoc = argLoc;
        arg.value = parseExpression();
      } else {
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
    if (lexer.getCurToken() == tok_rparen)
      break;
    if (!expect(tok_comma, "',' or ')' in the argument list"))
      return false;
  }
  lexer.consume(tok_rparen);
  return true;
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

bool Parser::expect(Token tok, llvm::StringRef what) {
  if (lexer.getCurToken() == tok) {
    lexer.consume(tok);
    return true;
  }
  reportUnexpected(what);
  return false;
}

bool Parser::expectIdentifier(llvm::StringRef what, std::string &name,
                              Location &loc) {
  if (lexer.getCurToken() != tok_identifier) {
    reportUnexpected(what);
    return false;
  }
  name = lexer.getId().str();
  loc = lexer.getLastLocation();
  lexer.consume(tok_identifier);
  return true;
}

std::string Parser::describeCurToken() const {
  switch (lexer.getCurToken()) {
  case tok_eof:
    return "end of file";
  case tok_newline:
    return "end of line";
  case tok_error:
    return lexer.getErrorMessage().str();
  case tok_identifier:
  case tok_number:
    return "'" + lexer.getSpelling().str() + "'";
  case tok_model:
  case tok_input:
  case tok_target:
  case tok_param:
  case tok_metric:
  case tok_sweep:
    return "keyword '" + lexer.getSpelling().str() + "'";
  default:
    return std::string("'") + static_cast<char>(lexer.getCurToken()) + "'";
  }
}

void Parser::reportUnexpected(llvm::StringRef what) {
  hadError = true;
  auto diag = emitError(ctx, lexer.getLastLocation());
  if (lexer.getCurToken() == tok_error)
    diag << lexer.getErrorMessage();
  else
    diag << "expected " << what << ", got " << describeCurToken();
}

void Parser::skipToStatementEnd() {
  lexer.resetNesting();
  while (true) {
    Token tok = lexer.getCurToken();
    if (tok == tok_newline || tok == tok_rbrace || tok == tok_eof)
      return;
    // A brace-delimited block inside a statement is skipped whole.
    if (tok == tok_lbrace) {
      int depth = 0;
      do {
        if (lexer.getCurToken() == tok_lbrace)
          ++depth;
        else if (lexer.getCurToken() == tok_rbrace)
          --depth;
        lexer.getNextToken();
      } while (depth > 0 && lexer.getCurToken() != tok_eof);
      continue;
    }
    lexer.getNextToken();
  }
}

void Parser::skipToTopLevel() {
  lexer.resetNesting();
  int depth = 0;
  while (true) {
    Token tok = lexer.getCurToken();
    if (tok == tok_eof)
      return;
    if ((tok == tok_model || tok == tok_sweep) && depth == 0)
      return;
    if (tok == tok_lbrace)
      ++depth;
    else if (tok == tok_rbrace && depth > 0)
      --depth;
    lexer.getNextToken();
  }
}
