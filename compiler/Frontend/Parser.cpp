//===- Parser.cpp - recursive-descent parser of the mbt language ----------===//
#include "compiler/Frontend/Parser.h"
#include "compiler/Frontend/Diagnostics.h"

using namespace mbt;

//===----------------------------------------------------------------------===//
// Top level
//===----------------------------------------------------------------------===//

/// spec ::= { NEWLINE } { (import | function | model | optim | sweep)
///          { NEWLINE } } EOF
std::unique_ptr<ModuleAST> Parser::parseModule() {
  lexer.getNextToken(); // prime the lexer
  std::vector<ImportAST> imports;
  std::vector<std::unique_ptr<FunctionAST>> functions;
  std::vector<std::unique_ptr<ModelAST>> models;
  std::vector<std::unique_ptr<OptimizerAST>> optimizers;
  std::vector<std::unique_ptr<SweepAST>> sweeps;
  while (true) {
    while (lexer.getCurToken() == tok_newline)
      lexer.consume(tok_newline);
    if (lexer.getCurToken() == tok_eof)
      break;
    if (lexer.getCurToken() == tok_import) {
      if (!parseImport(imports))
        skipToTopLevel();
      continue;
    }
    if (lexer.getCurToken() == tok_fn) {
      if (auto function = parseFunction())
        functions.push_back(std::move(function));
      continue;
    }
    if (lexer.getCurToken() == tok_model) {
      if (auto model = parseModel())
        models.push_back(std::move(model));
      continue;
    }
    if (lexer.getCurToken() == tok_optim) {
      if (auto optimizer = parseOptimizer())
        optimizers.push_back(std::move(optimizer));
      continue;
    }
    if (lexer.getCurToken() == tok_sweep) {
      if (auto sweep = parseSweep())
        sweeps.push_back(std::move(sweep));
      continue;
    }
    reportUnexpected("'import', 'fn', 'model', 'optim' or 'sweep'");
    lexer.getNextToken();
    skipToTopLevel();
  }
  if (hadError)
    return nullptr;
  return std::make_unique<ModuleAST>(std::move(imports), std::move(functions),
                                     std::move(models), std::move(optimizers),
                                     std::move(sweeps));
}

/// model ::= 'model' IDENT [ '(' argDecls ')' ] block
std::unique_ptr<ModelAST> Parser::parseModel() {
  Location loc = lexer.getLastLocation();
  lexer.consume(tok_model);
  std::string name;
  Location nameLoc;
  std::vector<ArgDeclAST> args;
  bool headerOk = expectIdentifier("model name", name, nameLoc) &&
                  (lexer.getCurToken() != tok_lparen || parseArgDecls(args));
  if (headerOk && lexer.getCurToken() != tok_lbrace) {
    reportUnexpected("'{' after the model name");
    headerOk = false;
  }
  if (!headerOk) {
    skipToTopLevel();
    return nullptr;
  }
  StmtASTList body;
  if (!parseBlock(BodyKind::Model, "model '" + name + "'", body))
    return nullptr;
  return std::make_unique<ModelAST>(std::move(loc), name, std::move(nameLoc),
                                    std::move(args), std::move(body));
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
  return parseParamOrBufferRest(std::move(loc), /*buffer=*/false);
}

/// The rest of a paramDecl or a bufferDecl, after its keyword:
/// IDENT ':' type '=' expr.
std::unique_ptr<StmtAST> Parser::parseParamOrBufferRest(Location loc,
                                                        bool buffer) {
  std::string name;
  Location nameLoc;
  TypeAST type;
  if (!expectIdentifier(buffer ? "buffer name" : "parameter name", name,
                        nameLoc) ||
      !expect(tok_colon, "':' before the type") || !parseType(type) ||
      !expect(tok_equal,
              buffer ? "'=' and an initializer after the buffer type"
                     : "'=' and an initializer after the parameter type"))
    return nullptr;
  auto init = parseExpression();
  if (!init)
    return nullptr;
  return std::make_unique<ParamDeclAST>(std::move(loc), name,
                                        std::move(nameLoc), std::move(type),
                                        std::move(init), buffer);
}

/// assignment ::= ['metric'] IDENT '=' expr
std::unique_ptr<StmtAST> Parser::parseAssignment(bool metric) {
  Location loc = lexer.getLastLocation();
  if (metric)
    lexer.consume(tok_metric);
  std::string name;
  Location nameLoc;
  if (!expectIdentifier(metric ? "metric name" : "name", name, nameLoc))
    return nullptr;
  if (lexer.getCurToken() != tok_equal) {
    reportUnexpected("'=' after '" + name + "'");
    return nullptr;
  }
  return parseAssignedValue(std::move(loc), name, std::move(nameLoc), metric);
}

/// '=' expr, after the name of an assignment (the current token is '=').
std::unique_ptr<StmtAST> Parser::parseAssignedValue(Location loc,
                                                    llvm::StringRef name,
                                                    Location nameLoc,
                                                    bool metric) {
  lexer.consume(tok_equal);
  auto value = parseExpression();
  if (!value)
    return nullptr;
  return std::make_unique<AssignStmtAST>(
      std::move(loc), name, std::move(nameLoc), std::move(value), metric);
}

/// type ::= IDENT '[' [ expr { ',' expr } ] ']'
///   e.g. f32[784], class[10], f32[dim(x), out]: the sizes are constant
///   integer expressions, which Sema evaluates.
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
    // A fractional literal is never a size: say so here, where it is clear.
    if (lexer.getCurToken() == tok_number && !lexer.isInteger()) {
      reportUnexpected("an integer dimension size");
      return false;
    }
    auto dim = parseExpression();
    if (!dim)
      return false;
    type.dimExprs.push_back(std::move(dim));
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
    if (tok == tok_eof || tok == tok_sweep || tok == tok_fn ||
        tok == tok_import) {
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

bool Parser::parseSettingOnly(SweepSettingAST &setting) {
  lexer.getNextToken(); // prime the lexer
  if (!parseSweepSetting(setting))
    return false;
  if (lexer.getCurToken() == tok_newline)
    lexer.consume(tok_newline);
  if (lexer.getCurToken() != tok_eof) {
    reportUnexpected("the end of the setting (one NAME = VALUE)");
    return false;
  }
  return true;
}

/// sweepSetting ::= (IDENT | 'model' | 'optim') '=' expr
bool Parser::parseSweepSetting(SweepSettingAST &setting) {
  Token tok = lexer.getCurToken();
  if (tok != tok_identifier && tok != tok_model && tok != tok_optim) {
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
// Helpers
//===----------------------------------------------------------------------===//

bool Parser::parseCommaSeparatedUntil(Token close, llvm::StringRef what,
                                      llvm::function_ref<bool()> parseElement) {
  std::string separator =
      ("',' or '" + llvm::Twine(static_cast<char>(close)) + "' in " + what)
          .str();
  while (lexer.getCurToken() != close) {
    if (!parseElement())
      return false;
    if (lexer.getCurToken() == close)
      break;
    if (!expect(tok_comma, separator))
      return false;
  }
  lexer.consume(close);
  return true;
}

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
  case tok_string:
    return "string \"" + lexer.getSpelling().str() + "\"";
  case tok_model:
  case tok_input:
  case tok_target:
  case tok_param:
  case tok_metric:
  case tok_sweep:
  case tok_fn:
  case tok_import:
  case tok_return:
  case tok_if:
  case tok_else:
  case tok_not:
  case tok_and:
  case tok_or:
  case tok_true:
  case tok_false:
  case tok_assert:
  case tok_optim:
    return "keyword '" + lexer.getSpelling().str() + "'";
  case tok_le:
  case tok_ge:
  case tok_eq:
  case tok_ne:
    return "'" + spellOperator(getTokOperator()).str() + "'";
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
    if (isTopLevelKeyword(tok) && depth == 0)
      return;
    if (tok == tok_lbrace)
      ++depth;
    else if (tok == tok_rbrace && depth > 0)
      --depth;
    lexer.getNextToken();
  }
}
