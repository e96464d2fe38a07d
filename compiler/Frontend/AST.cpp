//===- AST.cpp - AST helpers and the copying of bodies --------------------===//
//
// Copies of function and model bodies are how Sema expands a call: each copy
// has its own expression types and parameters, and the constant arguments
// of the call are substituted into it as it is made.
//
//===----------------------------------------------------------------------===//
#include "compiler/Frontend/AST.h"
#include "compiler/Frontend/SemaInternal.h"
#include "compiler/Frontend/SweepEval.h"

#include "llvm/Support/ErrorHandling.h"

using namespace mbt;
using llvm::cast;

CallExprAST::CallExprAST(Location loc, llvm::StringRef callee,
                         std::vector<ArgumentAST> args)
    : ExprAST(Expr_Call, std::move(loc)), callee(callee),
      args(std::move(args)) {
  for (const ArgumentAST &arg : this->args)
    setDepthAbove(arg.value.get());
}

// Out of line: BodyInstance is incomplete where CallExprAST is declared.
CallExprAST::~CallExprAST() = default;

llvm::StringRef mbt::spellOperator(char op, bool unary) {
  if (unary)
    return op == '!' ? "not" : "-";
  switch (op) {
  case '+':
    return "+";
  case '-':
    return "-";
  case '*':
    return "*";
  case '/':
    return "/";
  case '@':
    return "@";
  case BinaryOp::Lt:
    return "<";
  case BinaryOp::Gt:
    return ">";
  case BinaryOp::Le:
    return "<=";
  case BinaryOp::Ge:
    return ">=";
  case BinaryOp::Eq:
    return "==";
  case BinaryOp::Ne:
    return "!=";
  case BinaryOp::And:
    return "and";
  case BinaryOp::Or:
    return "or";
  default:
    return "?";
  }
}

std::string ConstScalar::str() const {
  switch (kind) {
  case Int:
    return std::to_string(intValue);
  case Float:
    return formatNumber(floatValue);
  case Bool:
    return boolValue ? "true" : "false";
  }
  llvm_unreachable("unknown scalar kind");
}

llvm::StringRef mbt::kindName(ConstScalar::Kind kind) {
  switch (kind) {
  case ConstScalar::Int:
    return "int";
  case ConstScalar::Float:
    return "float";
  case ConstScalar::Bool:
    return "bool";
  }
  llvm_unreachable("unknown scalar kind");
}

//===----------------------------------------------------------------------===//
// Copies
//===----------------------------------------------------------------------===//

namespace {
class Cloner {
public:
  explicit Cloner(const sema::ConstBindings &bindings) : bindings(bindings) {}

  std::unique_ptr<ExprAST> clone(const ExprAST &expr);
  StmtASTList clone(llvm::ArrayRef<std::unique_ptr<StmtAST>> body);
  std::unique_ptr<StmtAST> clone(const StmtAST &stmt);
  TypeAST clone(const TypeAST &type);

private:
  const sema::ConstBindings &bindings;
};
} // namespace

std::unique_ptr<ExprAST> Cloner::clone(const ExprAST &expr) {
  switch (expr.getKind()) {
  case ExprAST::Expr_Number: {
    const auto &number = cast<NumberExprAST>(expr);
    return std::make_unique<NumberExprAST>(number.loc(), number.getValue(),
                                           number.isInteger(),
                                           number.getIntValue());
  }
  case ExprAST::Expr_Var: {
    const auto &var = cast<VariableExprAST>(expr);
    auto it = bindings.find(var.getName());
    if (it == bindings.end())
      return std::make_unique<VariableExprAST>(var.loc(), var.getName());
    // A constant argument becomes its value, at the place it is used.
    const ConstScalar &value = it->second;
    if (value.kind == ConstScalar::Bool)
      return std::make_unique<VariableExprAST>(
          var.loc(), value.boolValue ? "true" : "false");
    return std::make_unique<NumberExprAST>(
        var.loc(), value.floatValue, value.kind == ConstScalar::Int,
        value.kind == ConstScalar::Int ? value.intValue : 0);
  }
  case ExprAST::Expr_Unary: {
    const auto &unary = cast<UnaryExprAST>(expr);
    return std::make_unique<UnaryExprAST>(unary.loc(), unary.getOp(),
                                          clone(*unary.getOperand()));
  }
  case ExprAST::Expr_Binary: {
    const auto &binary = cast<BinaryExprAST>(expr);
    return std::make_unique<BinaryExprAST>(binary.loc(), binary.getOp(),
                                           clone(*binary.getLHS()),
                                           clone(*binary.getRHS()));
  }
  case ExprAST::Expr_Call: {
    const auto &call = cast<CallExprAST>(expr);
    std::vector<ArgumentAST> args;
    for (const ArgumentAST &arg : call.getArgs())
      args.push_back({arg.name, arg.nameLoc, clone(*arg.value)});
    return std::make_unique<CallExprAST>(call.loc(), call.getCallee(),
                                         std::move(args));
  }
  case ExprAST::Expr_String:
    return std::make_unique<StringExprAST>(
        expr.loc(), cast<StringExprAST>(expr).getValue());
  case ExprAST::Expr_List: {
    ExprASTList elements;
    for (const auto &element : cast<ListExprAST>(expr).getElements())
      elements.push_back(clone(*element));
    return std::make_unique<ListExprAST>(expr.loc(), std::move(elements));
  }
  case ExprAST::Expr_Dict: {
    std::vector<DictExprAST::Entry> entries;
    for (const DictExprAST::Entry &entry : cast<DictExprAST>(expr).getEntries())
      entries.push_back({clone(*entry.key), clone(*entry.value)});
    return std::make_unique<DictExprAST>(expr.loc(), std::move(entries));
  }
  }
  llvm_unreachable("unknown expression kind");
}

TypeAST Cloner::clone(const TypeAST &type) {
  TypeAST copy;
  copy.elementType = type.elementType;
  copy.loc = type.loc;
  for (const auto &dim : type.dimExprs)
    copy.dimExprs.push_back(clone(*dim));
  return copy;
}

StmtASTList Cloner::clone(llvm::ArrayRef<std::unique_ptr<StmtAST>> body) {
  StmtASTList copy;
  for (const auto &stmt : body)
    copy.push_back(clone(*stmt));
  return copy;
}

std::unique_ptr<StmtAST> Cloner::clone(const StmtAST &stmt) {
  switch (stmt.getKind()) {
  case StmtAST::Stmt_Input:
  case StmtAST::Stmt_Target: {
    const auto &decl = cast<DataDeclAST>(stmt);
    return std::make_unique<DataDeclAST>(decl.getKind(), decl.loc(),
                                         decl.getName(), decl.nameLoc(),
                                         clone(decl.getType()));
  }
  case StmtAST::Stmt_Param: {
    const auto &param = cast<ParamDeclAST>(stmt);
    // The initializer's own name (`zeros`, `normal(...)`) is not a value:
    // only its arguments see the constant arguments.
    std::unique_ptr<ExprAST> init;
    if (const auto *var = llvm::dyn_cast<VariableExprAST>(param.getInit()))
      init = std::make_unique<VariableExprAST>(var->loc(), var->getName());
    else
      init = clone(*param.getInit());
    return std::make_unique<ParamDeclAST>(
        param.loc(), param.getName(), param.nameLoc(), clone(param.getType()),
        std::move(init), param.isBuffer());
  }
  case StmtAST::Stmt_Assign: {
    const auto &assign = cast<AssignStmtAST>(stmt);
    return std::make_unique<AssignStmtAST>(
        assign.loc(), assign.getName(), assign.nameLoc(),
        clone(*assign.getValue()), assign.isMetric());
  }
  case StmtAST::Stmt_Return: {
    const auto &ret = cast<ReturnStmtAST>(stmt);
    return std::make_unique<ReturnStmtAST>(ret.loc(), clone(*ret.getValue()));
  }
  case StmtAST::Stmt_If: {
    const auto &ifStmt = cast<IfStmtAST>(stmt);
    return std::make_unique<IfStmtAST>(
        ifStmt.loc(), clone(*ifStmt.getCondition()), clone(ifStmt.getThen()),
        clone(ifStmt.getElse()));
  }
  case StmtAST::Stmt_Assert: {
    const auto &assert = cast<AssertStmtAST>(stmt);
    return std::make_unique<AssertStmtAST>(
        assert.loc(), clone(*assert.getCondition()), assert.getMessage().str());
  }
  case StmtAST::Stmt_State:
    return std::make_unique<StateDeclAST>(stmt.loc(), stmt.getName(),
                                          stmt.nameLoc());
  }
  llvm_unreachable("unknown statement kind");
}

StmtASTList sema::cloneBody(llvm::ArrayRef<std::unique_ptr<StmtAST>> body,
                            const ConstBindings &bindings) {
  return Cloner(bindings).clone(body);
}

//===----------------------------------------------------------------------===//
// Sizes
//===----------------------------------------------------------------------===//

static size_t countNodes(const ExprAST &expr) {
  size_t count = 1;
  if (const auto *unary = llvm::dyn_cast<UnaryExprAST>(&expr)) {
    count += countNodes(*unary->getOperand());
  } else if (const auto *binary = llvm::dyn_cast<BinaryExprAST>(&expr)) {
    count += countNodes(*binary->getLHS()) + countNodes(*binary->getRHS());
  } else if (const auto *call = llvm::dyn_cast<CallExprAST>(&expr)) {
    for (const ArgumentAST &arg : call->getArgs())
      count += countNodes(*arg.value);
  } else if (const auto *list = llvm::dyn_cast<ListExprAST>(&expr)) {
    for (const auto &element : list->getElements())
      count += countNodes(*element);
  } else if (const auto *dict = llvm::dyn_cast<DictExprAST>(&expr)) {
    for (const DictExprAST::Entry &entry : dict->getEntries())
      count += countNodes(*entry.key) + countNodes(*entry.value);
  }
  return count;
}

static size_t countNodes(const TypeAST &type) {
  size_t count = 0;
  for (const auto &dim : type.dimExprs)
    count += countNodes(*dim);
  return count;
}

size_t sema::countNodes(llvm::ArrayRef<std::unique_ptr<StmtAST>> body) {
  size_t count = 0;
  for (const auto &stmt : body) {
    ++count;
    if (const auto *decl = llvm::dyn_cast<DataDeclAST>(stmt.get()))
      count += ::countNodes(decl->getType());
    else if (const auto *param = llvm::dyn_cast<ParamDeclAST>(stmt.get()))
      count += ::countNodes(param->getType()) + ::countNodes(*param->getInit());
    else if (const auto *assign = llvm::dyn_cast<AssignStmtAST>(stmt.get()))
      count += ::countNodes(*assign->getValue());
    else if (const auto *ret = llvm::dyn_cast<ReturnStmtAST>(stmt.get()))
      count += ::countNodes(*ret->getValue());
    else if (const auto *ifStmt = llvm::dyn_cast<IfStmtAST>(stmt.get()))
      count += ::countNodes(*ifStmt->getCondition()) +
               countNodes(ifStmt->getThen()) + countNodes(ifStmt->getElse());
    else if (const auto *assert = llvm::dyn_cast<AssertStmtAST>(stmt.get()))
      count += ::countNodes(*assert->getCondition());
  }
  return count;
}
