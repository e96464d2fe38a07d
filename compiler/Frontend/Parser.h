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

#include <memory>

namespace mbt {

class Parser {
public:
  Parser(Lexer &lexer, mlir::MLIRContext &ctx) : lexer(lexer), ctx(ctx) {}

  /// Parses a whole spec; returns null if there was any syntax error (all of
  /// them have been reported).
  std::unique_ptr<ModuleAST> parseModule();

private:
  std::unique_ptr<ModelAST> parseModel();
  std::unique_ptr<StmtAST> parseModelStatement();
  std::unique_ptr<StmtAST> parseDataDecl();
  std::unique_ptr<StmtAST> parseParamDecl();
  std::unique_ptr<StmtAST> parseAssignment(bool metric);
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
  std::unique_ptr<ExprAST> parseIdentifierExpr(std::string name, Location loc);
  bool parseCallArgs(std::vector<ArgumentAST> &args);

  /// Parses the end of a statement: a newline, or nothing before a '}'.
  bool parseStatementEnd();
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
  /// Skips to the next `model` or `sweep` keyword outside braces.
  void skipToTopLevel();

  /// Binding strength of the current token as a binary operator, or -1.
  int getTokPrecedence() const;
  /// Reports an expression nested deeper than kMaxExprDepth.
  bool checkDepth(const ExprAST &expr);

  /// The deepest expression the parser accepts.
  static constexpr unsigned kMaxExprDepth = 256;

  Lexer &lexer;
  mlir::MLIRContext &ctx;
  bool hadError = false;
  /// How deeply parseUnary is nested (parentheses, calls, lists, '-').
  unsigned unaryDepth = 0;
};

} // namespace mbt

#endif // MBT_COMPILER_FRONTEND_PARSER_H
