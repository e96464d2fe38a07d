//===- Parser.h - recursive-descent parser of the mbt language --*- C++ -*-===//
//
// Builds the AST of a spec. Each parse function's comment gives the grammar
// rule it implements. Syntax errors are MLIR diagnostics; after a bad
// statement the parser skips to the end of the line and goes on, so one run
// reports every syntax error that does not hide the ones after it.
//
//===----------------------------------------------------------------------===//
#ifndef MBT_COMPILER_FRONTEND_PARSER_H
#define MBT_COMPILER_FRONTEND_PARSER_H

#include "compiler/Frontend/AST.h"
#include "compiler/Frontend/Lexer.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <memory>

namespace mbt {

class Parser {
public:
  Parser(Lexer &lexer, mlir::MLIRContext &ctx) : lexer(lexer), ctx(ctx) {}

  /// Parses a whole spec; returns null if there was any syntax error (all of
  /// them have been reported).
  std::unique_ptr<ModuleAST> parseModule();

  /// Parses a buffer that holds one sweep setting, `KEY = VALUE` (mbtc
  /// --set); false after reporting a syntax error.
  bool parseSettingOnly(SweepSettingAST &setting);

private:
  /// What a block of statements belongs to: statements allowed differ.
  enum class BodyKind { Model, Function, Optimizer };

  bool parseImport(std::vector<ImportAST> &imports);
  std::unique_ptr<FunctionAST> parseFunction();
  bool parseArgDecls(std::vector<ArgDeclAST> &args);
  std::unique_ptr<ModelAST> parseModel();
  std::unique_ptr<OptimizerAST> parseOptimizer();
  /// The header of a function or optimizer (see ParserDecl.cpp).
  bool parseDeclHeader(Token keyword, llvm::StringRef noun,
                       llvm::StringRef argsNoun, std::string &name,
                       Location &nameLoc, std::vector<ArgDeclAST> &args);
  /// Parses `{ { stmt stmtEnd } }` (the '{' is the current token) into
  /// `body`; `what` names the block in "expected '}' at the end of ...".
  /// Returns false when the block is not closed.
  bool parseBlock(BodyKind kind, llvm::StringRef what, StmtASTList &body);
  std::unique_ptr<StmtAST> parseBodyStatement(BodyKind kind);
  std::unique_ptr<StmtAST> parseIf(BodyKind kind);
  std::unique_ptr<StmtAST> parseReturn();
  std::unique_ptr<StmtAST> parseAssert();
  /// Parses an expression in which comparisons and logic are allowed.
  std::unique_ptr<ExprAST> parseCondition();
  std::unique_ptr<StmtAST> parseDataDecl();
  std::unique_ptr<StmtAST> parseParamDecl();
  std::unique_ptr<StmtAST> parseParamOrBufferRest(Location loc, bool buffer);
  std::unique_ptr<StmtAST> parseAssignment(bool metric);
  std::unique_ptr<StmtAST> parseAssignedValue(Location loc,
                                              llvm::StringRef name,
                                              Location nameLoc, bool metric);
  bool parseType(TypeAST &type);
  std::unique_ptr<SweepAST> parseSweep();
  bool parseSweepSetting(SweepSettingAST &setting);

  std::unique_ptr<ExprAST> parseExpression();
  std::unique_ptr<ExprAST> parseBinOpRHS(int exprPrec,
                                         std::unique_ptr<ExprAST> lhs);
  std::unique_ptr<ExprAST> parseUnary();
  std::unique_ptr<ExprAST> parsePrimary();
  std::unique_ptr<ExprAST> parseNumberExpr();
  std::unique_ptr<ExprAST> parseParenExpr();
  std::unique_ptr<ExprAST> parseListExpr();
  std::unique_ptr<ExprAST> parseDictExpr();
  std::unique_ptr<ExprAST> parseIdentifierExpr(std::string name, Location loc);
  bool parseCallArgs(std::vector<ArgumentAST> &args);

  /// Parses the end of a statement: a newline, or nothing before a '}'.
  bool parseStatementEnd();
  /// Parses `element { ',' element } [','] close` (possibly empty) after
  /// its opening token, as MLIR's parseCommaSeparatedList: `what` names
  /// the list in "expected ',' or ')' in `what`". False after an error.
  bool parseCommaSeparatedUntil(Token close, llvm::StringRef what,
                                llvm::function_ref<bool()> parseElement);
  /// Consumes `tok` or reports "expected `what`" and returns false.
  bool expect(Token tok, llvm::StringRef what);
  /// Consumes an identifier into `name`/`loc` or reports and returns false.
  bool expectIdentifier(llvm::StringRef what, std::string &name, Location &loc);

  /// Reports "expected `what`, got <current token>" (or the lexer's message
  /// when the current token is malformed).
  void reportUnexpected(llvm::StringRef what);
  /// Describes the current token for diagnostics.
  std::string describeCurToken() const;

  /// Skips to the end of the current statement (a newline, a '}' or the
  /// end of the file), without consuming it.
  void skipToStatementEnd();
  /// Skips to the next `import`, `fn`, `model`, `optim` or `sweep` keyword
  /// outside braces.
  void skipToTopLevel();
  /// Whether `tok` starts a top-level declaration.
  static bool isTopLevelKeyword(Token tok) {
    return tok == tok_import || tok == tok_fn || tok == tok_model ||
           tok == tok_optim || tok == tok_sweep;
  }

  /// Binding strength of the current token as a binary operator, or -1.
  int getTokPrecedence() const;
  /// The BinaryExprAST operator code of the current token.
  char getTokOperator() const;
  /// Reports an expression nested deeper than kMaxExprDepth.
  bool checkDepth(const ExprAST &expr);
  /// Whether one more level of nesting (a unary, or a call argument) fits
  /// within kMaxExprDepth; if not, reports it at `loc` and returns false.
  bool checkNesting(const Location &loc);

  /// The deepest expression the parser accepts.
  static constexpr unsigned kMaxExprDepth = 256;
  /// The deepest nesting of `if` blocks the parser accepts.
  static constexpr unsigned kMaxBlockDepth = 32;

  Lexer &lexer;
  mlir::MLIRContext &ctx;
  bool hadError = false;
  /// How deeply parseUnary is nested (parentheses, calls, lists, '-'), with
  /// the call arguments that bypass it (see parseCallArgs).
  unsigned unaryDepth = 0;
  /// How deeply `if` blocks are nested.
  unsigned blockDepth = 0;
  /// Whether the parser is inside the condition of an `if`, the only place
  /// where comparisons, `and`, `or` and `not` are allowed.
  bool inCondition = false;
  /// Whether an optimizer body is being parsed (`param` is then a value).
  bool inOptimizer = false;
};

} // namespace mbt

#endif // MBT_COMPILER_FRONTEND_PARSER_H
