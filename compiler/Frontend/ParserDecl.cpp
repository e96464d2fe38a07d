//===- ParserDecl.cpp - imports, functions and statement blocks -----------===//
//
// The parts of the grammar that hold statements: imports, `fn` declarations
// and their argument lists, the blocks of models, functions and `if`s, and
// the statements inside them. Which statements a block accepts depends on
// whether it belongs to a model (inputs, targets, metrics) or a function
// (`return`).
//
//===----------------------------------------------------------------------===//
#include "compiler/Frontend/Diagnostics.h"
#include "compiler/Frontend/Parser.h"

using namespace mbt;

/// import ::= 'import' STRING stmtEnd
bool Parser::parseImport(std::vector<ImportAST> &imports) {
  ImportAST import;
  import.loc = lexer.getLastLocation();
  lexer.consume(tok_import);
  if (lexer.getCurToken() != tok_string) {
    reportUnexpected("a module name or a file path in quotes after 'import'");
    return false;
  }
  import.path = lexer.getSpelling().str();
  lexer.consume(tok_string);
  if (lexer.getCurToken() != tok_newline && lexer.getCurToken() != tok_eof) {
    reportUnexpected("end of line after the import");
    return false;
  }
  if (import.path.empty()) {
    emitError(ctx, import.loc) << "empty import path";
    hadError = true;
    return false;
  }
  imports.push_back(std::move(import));
  return true;
}

/// KEYWORD IDENT '(' [ argDecls ] ')', up to the '{' of the body: the
/// header of a function (`noun` "function", `argsNoun` "arguments") or an
/// optimizer. After an error it skips to the next declaration.
bool Parser::parseDeclHeader(Token keyword, llvm::StringRef noun,
                             llvm::StringRef argsNoun, std::string &name,
                             Location &nameLoc, std::vector<ArgDeclAST> &args) {
  lexer.consume(keyword);
  bool headerOk = expectIdentifier(noun.str() + " name", name, nameLoc);
  if (headerOk && lexer.getCurToken() != tok_lparen) {
    reportUnexpected(
        ("'(' and the " + argsNoun + " after the " + noun + " name").str());
    headerOk = false;
  }
  headerOk = headerOk && parseArgDecls(args);
  if (headerOk && lexer.getCurToken() != tok_lbrace) {
    reportUnexpected(("'{' after the " + noun + "'s " + argsNoun).str());
    headerOk = false;
  }
  if (!headerOk)
    skipToTopLevel();
  return headerOk;
}

/// function ::= 'fn' IDENT '(' [ argDecls ] ')' block
std::unique_ptr<FunctionAST> Parser::parseFunction() {
  Location loc = lexer.getLastLocation();
  std::string name;
  Location nameLoc;
  std::vector<ArgDeclAST> args;
  if (!parseDeclHeader(tok_fn, "function", "arguments", name, nameLoc, args))
    return nullptr;
  StmtASTList body;
  if (!parseBlock(BodyKind::Function, "function '" + name + "'", body))
    return nullptr;
  return std::make_unique<FunctionAST>(std::move(loc), name, std::move(nameLoc),
                                       std::move(args), std::move(body));
}

/// optim ::= 'optim' IDENT '(' [ argDecls ] ')' block
///   (the block holds `state NAME`, `NAME = expr`, `if` and `assert`;
///   comparisons and logic may appear in any expression)
std::unique_ptr<OptimizerAST> Parser::parseOptimizer() {
  Location loc = lexer.getLastLocation();
  std::string name;
  Location nameLoc;
  std::vector<ArgDeclAST> args;
  if (!parseDeclHeader(tok_optim, "optimizer", "hyperparameters", name, nameLoc,
                       args))
    return nullptr;
  StmtASTList body;
  bool outer = inCondition;
  inCondition = inOptimizer = true;
  bool closed =
      parseBlock(BodyKind::Optimizer, "optimizer '" + name + "'", body);
  inCondition = outer;
  inOptimizer = false;
  if (!closed)
    return nullptr;
  return std::make_unique<OptimizerAST>(std::move(loc), name,
                                        std::move(nameLoc), std::move(args),
                                        std::move(body));
}

/// argDecls ::= '(' [ argDecl { ',' argDecl } [','] ] ')'
/// argDecl  ::= IDENT [ ':' IDENT ] [ '=' expr ]
///   (`x`: a tensor; `n: int`, `p: float`, `b: bool`: constants)
bool Parser::parseArgDecls(std::vector<ArgDeclAST> &args) {
  lexer.consume(tok_lparen);
  return parseCommaSeparatedUntil(tok_rparen, "the argument list", [&] {
    ArgDeclAST arg;
    if (!expectIdentifier("an argument name", arg.name, arg.loc))
      return false;
    if (lexer.getCurToken() == tok_colon) {
      lexer.consume(tok_colon);
      if (!expectIdentifier("an argument type (int, float or bool)",
                            arg.typeName, arg.typeLoc))
        return false;
    }
    if (lexer.getCurToken() == tok_equal) {
      lexer.consume(tok_equal);
      arg.defaultValue = parseExpression();
      if (!arg.defaultValue)
        return false;
    }
    args.push_back(std::move(arg));
    return true;
  });
}

/// block ::= '{' { NEWLINE } { stmt stmtEnd } '}'
bool Parser::parseBlock(BodyKind kind, llvm::StringRef what,
                        StmtASTList &body) {
  lexer.consume(tok_lbrace);
  if (lexer.getCurToken() == tok_newline)
    lexer.consume(tok_newline);
  while (lexer.getCurToken() != tok_rbrace) {
    Token tok = lexer.getCurToken();
    if (tok == tok_eof || isTopLevelKeyword(tok)) {
      reportUnexpected("'}' at the end of " + what.str());
      return false;
    }
    auto stmt = parseBodyStatement(kind);
    if (stmt && parseStatementEnd()) {
      body.push_back(std::move(stmt));
      continue;
    }
    // An inner block left open has been reported where it ended.
    if (lexer.getCurToken() == tok_eof ||
        isTopLevelKeyword(lexer.getCurToken()))
      return false;
    skipToStatementEnd();
    if (lexer.getCurToken() == tok_newline)
      lexer.consume(tok_newline);
  }
  lexer.consume(tok_rbrace);
  return true;
}

/// stmt ::= dataDecl | paramDecl | 'metric' IDENT '=' expr   (models)
///        | 'return' expr                                     (functions)
///        | ifStmt | assertStmt | IDENT '=' expr
std::unique_ptr<StmtAST> Parser::parseBodyStatement(BodyKind kind) {
  bool inModel = kind == BodyKind::Model;
  bool optimizerBody = kind == BodyKind::Optimizer;
  auto onlyIn = [&](llvm::StringRef what, llvm::StringRef where) {
    emitError(ctx, lexer.getLastLocation())
        << what << " only belong in a " << where;
    hadError = true;
    return nullptr;
  };
  switch (lexer.getCurToken()) {
  case tok_identifier:
    // `state NAME` declares a state slot of an optimizer (`state` is a
    // keyword only there, so models may still name a value `state`).
    if (optimizerBody && lexer.getId() == "state") {
      Location loc = lexer.getLastLocation();
      lexer.consume(tok_identifier);
      if (lexer.getCurToken() == tok_identifier) {
        std::string name = lexer.getId().str();
        Location nameLoc = lexer.getLastLocation();
        lexer.consume(tok_identifier);
        return std::make_unique<StateDeclAST>(std::move(loc), name,
                                              std::move(nameLoc));
      }
      if (lexer.getCurToken() != tok_equal) {
        reportUnexpected("a state slot name after 'state'");
        return nullptr;
      }
      // `state = ...`: an assignment to a value named state.
      return parseAssignedValue(loc, "state", loc, /*metric=*/false);
    }
    // `buffer NAME: TYPE = INIT` declares a buffer of a model or function
    // (`buffer` is a keyword only when a name follows it).
    if (!optimizerBody && lexer.getId() == "buffer") {
      Location loc = lexer.getLastLocation();
      lexer.consume(tok_identifier);
      if (lexer.getCurToken() == tok_identifier)
        return parseParamOrBufferRest(std::move(loc), /*buffer=*/true);
      if (lexer.getCurToken() != tok_equal) {
        reportUnexpected("a buffer name after 'buffer'");
        return nullptr;
      }
      return parseAssignedValue(loc, "buffer", loc, /*metric=*/false);
    }
    return parseAssignment(/*metric=*/false);
  case tok_input:
  case tok_target:
    if (!inModel)
      return onlyIn("inputs and targets", "model");
    return parseDataDecl();
  case tok_metric:
    if (!inModel)
      return onlyIn("metrics", "model");
    return parseAssignment(/*metric=*/true);
  case tok_return:
    if (kind != BodyKind::Function)
      return onlyIn("'return' statements", "function");
    return parseReturn();
  case tok_param:
    if (optimizerBody) {
      // `param = ...` updates the parameter; `param NAME: ...` declares one.
      Location loc = lexer.getLastLocation();
      lexer.consume(tok_param);
      if (lexer.getCurToken() != tok_equal) {
        emitError(ctx, loc) << "an optimizer declares no parameters; "
                               "'param = EXPR' sets the updated parameter";
        hadError = true;
        return nullptr;
      }
      return parseAssignedValue(loc, "param", loc, /*metric=*/false);
    }
    return parseParamDecl();
  case tok_if:
    return parseIf(kind);
  case tok_assert:
    return parseAssert();
  case tok_else:
    emitError(ctx, lexer.getLastLocation())
        << "'else' must follow the '}' of its 'if' on the same line";
    hadError = true;
    return nullptr;
  default:
    reportUnexpected(inModel ? "a model statement (input, target, param, "
                               "metric, if or NAME = EXPR)"
                     : optimizerBody
                         ? "an optimizer statement (state, if, assert or "
                           "NAME = EXPR)"
                         : "a function statement (param, if, assert, "
                           "return or NAME = EXPR)");
    return nullptr;
  }
}

/// ifStmt ::= 'if' expr block [ 'else' ( ifStmt | block ) ]
///   (the condition may use comparisons, 'and', 'or' and 'not')
std::unique_ptr<StmtAST> Parser::parseIf(BodyKind kind) {
  Location loc = lexer.getLastLocation();
  if (blockDepth >= kMaxBlockDepth) {
    emitError(ctx, loc) << "'if' statements are nested too deeply (more than "
                        << kMaxBlockDepth << " levels)";
    hadError = true;
    return nullptr;
  }
  struct BlockGuard {
    unsigned &depth;
    explicit BlockGuard(unsigned &depth) : depth(depth) { ++depth; }
    ~BlockGuard() { --depth; }
  } guard(blockDepth);
  lexer.consume(tok_if);

  std::unique_ptr<ExprAST> condition = parseCondition();
  if (!condition)
    return nullptr;
  if (lexer.getCurToken() != tok_lbrace) {
    reportUnexpected("'{' after the condition");
    return nullptr;
  }
  StmtASTList thenBody, elseBody;
  if (!parseBlock(kind, "the 'if' block", thenBody))
    return nullptr;
  if (lexer.getCurToken() == tok_else) {
    lexer.consume(tok_else);
    if (lexer.getCurToken() == tok_if) {
      auto elseIf = parseIf(kind);
      if (!elseIf)
        return nullptr;
      elseBody.push_back(std::move(elseIf));
    } else if (lexer.getCurToken() != tok_lbrace) {
      reportUnexpected("'{' or 'if' after 'else'");
      return nullptr;
    } else if (!parseBlock(kind, "the 'else' block", elseBody)) {
      return nullptr;
    }
  }
  return std::make_unique<IfStmtAST>(std::move(loc), std::move(condition),
                                     std::move(thenBody), std::move(elseBody));
}

std::unique_ptr<ExprAST> Parser::parseCondition() {
  bool outer = inCondition;
  inCondition = true;
  auto condition = parseExpression();
  inCondition = outer;
  return condition;
}

/// assertStmt ::= 'assert' expr ',' STRING
std::unique_ptr<StmtAST> Parser::parseAssert() {
  Location loc = lexer.getLastLocation();
  lexer.consume(tok_assert);
  auto condition = parseCondition();
  if (!condition || !expect(tok_comma, "',' and a message after the condition"))
    return nullptr;
  if (lexer.getCurToken() != tok_string) {
    reportUnexpected("a message in quotes");
    return nullptr;
  }
  std::string message = lexer.getSpelling().str();
  lexer.consume(tok_string);
  return std::make_unique<AssertStmtAST>(std::move(loc), std::move(condition),
                                         std::move(message));
}

/// returnStmt ::= 'return' expr
std::unique_ptr<StmtAST> Parser::parseReturn() {
  Location loc = lexer.getLastLocation();
  lexer.consume(tok_return);
  auto value = parseExpression();
  if (!value)
    return nullptr;
  return std::make_unique<ReturnStmtAST>(std::move(loc), std::move(value));
}
