//===- AST.h - abstract syntax tree of the mbt language ---------*- C++ -*-===//
//
// The AST of a spec: models (declarations and assignments over tensor
// expressions) and a sweep (settings whose values are constant expressions).
// As in the Toy tutorial, nodes carry a kind and implement classof for LLVM
// RTTI. Sema annotates the tree in place: every model expression gets its
// ValueType, every parameter its resolved initializer and the sweep its
// evaluated SweepConfig; MLIRGen reads only checked trees.
//
//===----------------------------------------------------------------------===//
#ifndef MBT_COMPILER_FRONTEND_AST_H
#define MBT_COMPILER_FRONTEND_AST_H

#include "compiler/Frontend/Lexer.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Casting.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mbt {

//===----------------------------------------------------------------------===//
// Types computed by Sema
//===----------------------------------------------------------------------===//

/// The type of a model expression, as seen for one sample: a float tensor
/// with a per-sample shape, or the class index of the target. `batched`
/// values depend on the input and gain a leading batch dimension in the IR;
/// the others (parameters, constants, losses) do not.
struct ValueType {
  enum Kind { Invalid, Tensor, Class };
  Kind kind = Invalid;
  llvm::SmallVector<int64_t, 4> shape; // per-sample shape of a Tensor
  int64_t numClasses = 0;              // class count of a Class
  bool batched = false;

  static ValueType tensor(llvm::ArrayRef<int64_t> shape, bool batched) {
    ValueType t;
    t.kind = Tensor;
    t.shape.assign(shape.begin(), shape.end());
    t.batched = batched;
    return t;
  }
  static ValueType classes(int64_t numClasses) {
    ValueType t;
    t.kind = Class;
    t.numClasses = numClasses;
    t.batched = true;
    return t;
  }
  bool isValid() const { return kind != Invalid; }
  bool isTensor() const { return kind == Tensor; }
};

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

/// Base class of all expressions.
class ExprAST {
public:
  enum ExprASTKind {
    Expr_Number,
    Expr_Var,
    Expr_Unary,
    Expr_Binary,
    Expr_Call,
    Expr_List,
  };

  ExprAST(ExprASTKind kind, Location location)
      : kind(kind), location(std::move(location)) {}
  virtual ~ExprAST() = default;

  ExprASTKind getKind() const { return kind; }
  const Location &loc() const { return location; }
  /// The height of the expression tree (1 for a leaf); the parser bounds it
  /// so that the recursive passes over the tree cannot run out of stack.
  unsigned getDepth() const { return depth; }

  /// Set by Sema on model expressions.
  ValueType type;

protected:
  void setDepthAbove(const ExprAST *child) {
    if (child && child->depth + 1 > depth)
      depth = child->depth + 1;
  }

private:
  unsigned depth = 1;
  const ExprASTKind kind;
  Location location;
};

using ExprASTList = std::vector<std::unique_ptr<ExprAST>>;

/// A numeric literal, like `1e-4` or `16`.
class NumberExprAST : public ExprAST {
public:
  NumberExprAST(Location loc, double value, bool isInteger, int64_t intValue)
      : ExprAST(Expr_Number, std::move(loc)), value(value), integer(isInteger),
        intValue(intValue) {}

  double getValue() const { return value; }
  bool isInteger() const { return integer; }
  int64_t getIntValue() const { return intValue; }

  static bool classof(const ExprAST *c) { return c->getKind() == Expr_Number; }

private:
  double value;
  bool integer;
  int64_t intValue;
};

/// A reference to a name, like `x` or `models`.
class VariableExprAST : public ExprAST {
public:
  VariableExprAST(Location loc, llvm::StringRef name)
      : ExprAST(Expr_Var, std::move(loc)), name(name) {}

  llvm::StringRef getName() const { return name; }

  static bool classof(const ExprAST *c) { return c->getKind() == Expr_Var; }

private:
  std::string name;
};

/// A prefix operator: `-e`.
class UnaryExprAST : public ExprAST {
public:
  UnaryExprAST(Location loc, char op, std::unique_ptr<ExprAST> operand)
      : ExprAST(Expr_Unary, std::move(loc)), op(op),
        operand(std::move(operand)) {
    setDepthAbove(this->operand.get());
  }

  char getOp() const { return op; }
  ExprAST *getOperand() const { return operand.get(); }

  static bool classof(const ExprAST *c) { return c->getKind() == Expr_Unary; }

private:
  char op;
  std::unique_ptr<ExprAST> operand;
};

/// A binary operator: `+`, `-`, `*` or `@` (matmul). The location is the
/// operator's.
class BinaryExprAST : public ExprAST {
public:
  BinaryExprAST(Location loc, char op, std::unique_ptr<ExprAST> lhs,
                std::unique_ptr<ExprAST> rhs)
      : ExprAST(Expr_Binary, std::move(loc)), op(op), lhs(std::move(lhs)),
        rhs(std::move(rhs)) {
    setDepthAbove(this->lhs.get());
    setDepthAbove(this->rhs.get());
  }

  char getOp() const { return op; }
  ExprAST *getLHS() const { return lhs.get(); }
  ExprAST *getRHS() const { return rhs.get(); }

  static bool classof(const ExprAST *c) { return c->getKind() == Expr_Binary; }

private:
  char op;
  std::unique_ptr<ExprAST> lhs, rhs;
};

/// One argument of a call: positional (empty name) or `name = value`.
struct ArgumentAST {
  std::string name;
  Location nameLoc;
  std::unique_ptr<ExprAST> value;
};

/// A call, like `relu(h)` or `adam(lr = 1e-3)`. The location is the callee's.
class CallExprAST : public ExprAST {
public:
  CallExprAST(Location loc, llvm::StringRef callee,
              std::vector<ArgumentAST> args)
      : ExprAST(Expr_Call, std::move(loc)), callee(callee),
        args(std::move(args)) {
    for (const ArgumentAST &arg : this->args)
      setDepthAbove(arg.value.get());
  }

  llvm::StringRef getCallee() const { return callee; }
  llvm::ArrayRef<ArgumentAST> getArgs() const { return args; }

  static bool classof(const ExprAST *c) { return c->getKind() == Expr_Call; }

private:
  std::string callee;
  std::vector<ArgumentAST> args;
};

/// A list literal, like `[0.1, 0.01]`. The location is the '['.
class ListExprAST : public ExprAST {
public:
  ListExprAST(Location loc, ExprASTList elements)
      : ExprAST(Expr_List, std::move(loc)), elements(std::move(elements)) {
    for (const auto &element : this->elements)
      setDepthAbove(element.get());
  }

  llvm::ArrayRef<std::unique_ptr<ExprAST>> getElements() const {
    return elements;
  }

  static bool classof(const ExprAST *c) { return c->getKind() == Expr_List; }

private:
  ExprASTList elements;
};

//===----------------------------------------------------------------------===//
// Model statements
//===----------------------------------------------------------------------===//

/// A declared type, like `f32[784, 128]` or `class[10]`.
struct TypeAST {
  std::string elementType;
  Location loc;
  llvm::SmallVector<int64_t, 4> dims;
  std::vector<Location> dimLocs;
};

/// A parameter initializer resolved by Sema: its kind and its float
/// arguments in the order the `mbt.init` attribute names them.
struct InitSpec {
  std::string kind;
  llvm::SmallVector<std::pair<std::string, double>, 2> args;
};

/// Base class of the statements of a model body.
class StmtAST {
public:
  enum StmtASTKind { Stmt_Input, Stmt_Target, Stmt_Param, Stmt_Assign };

  StmtAST(StmtASTKind kind, Location location, llvm::StringRef name,
          Location nameLoc)
      : kind(kind), location(std::move(location)), name(name),
        nameLocation(std::move(nameLoc)) {}
  virtual ~StmtAST() = default;

  StmtASTKind getKind() const { return kind; }
  /// Where the statement starts.
  const Location &loc() const { return location; }
  /// The name the statement defines.
  llvm::StringRef getName() const { return name; }
  const Location &nameLoc() const { return nameLocation; }

private:
  const StmtASTKind kind;
  Location location;
  std::string name;
  Location nameLocation;
};

/// `input NAME: TYPE` or `target NAME: TYPE`.
class DataDeclAST : public StmtAST {
public:
  DataDeclAST(StmtASTKind kind, Location loc, llvm::StringRef name,
              Location nameLoc, TypeAST type)
      : StmtAST(kind, std::move(loc), name, std::move(nameLoc)),
        type(std::move(type)) {
    assert((kind == Stmt_Input || kind == Stmt_Target) && "not a data decl");
  }

  bool isInput() const { return getKind() == Stmt_Input; }
  const TypeAST &getType() const { return type; }

  static bool classof(const StmtAST *s) {
    return s->getKind() == Stmt_Input || s->getKind() == Stmt_Target;
  }

private:
  TypeAST type;
};

/// `param NAME: TYPE = INIT`.
class ParamDeclAST : public StmtAST {
public:
  ParamDeclAST(Location loc, llvm::StringRef name, Location nameLoc,
               TypeAST type, std::unique_ptr<ExprAST> init)
      : StmtAST(Stmt_Param, std::move(loc), name, std::move(nameLoc)),
        type(std::move(type)), init(std::move(init)) {}

  const TypeAST &getType() const { return type; }
  ExprAST *getInit() const { return init.get(); }

  /// Set by Sema.
  std::optional<InitSpec> resolvedInit;

  static bool classof(const StmtAST *s) { return s->getKind() == Stmt_Param; }

private:
  TypeAST type;
  std::unique_ptr<ExprAST> init;
};

/// `NAME = EXPR` or `metric NAME = EXPR`; `loss = EXPR` defines the loss.
class AssignStmtAST : public StmtAST {
public:
  AssignStmtAST(Location loc, llvm::StringRef name, Location nameLoc,
                std::unique_ptr<ExprAST> value, bool metric)
      : StmtAST(Stmt_Assign, std::move(loc), name, std::move(nameLoc)),
        value(std::move(value)), metric(metric) {}

  ExprAST *getValue() const { return value.get(); }
  bool isMetric() const { return metric; }
  bool isLoss() const { return !metric && getName() == "loss"; }

  static bool classof(const StmtAST *s) { return s->getKind() == Stmt_Assign; }

private:
  std::unique_ptr<ExprAST> value;
  bool metric;
};

/// `model NAME { ... }`.
class ModelAST {
public:
  ModelAST(Location loc, llvm::StringRef name, Location nameLoc,
           std::vector<std::unique_ptr<StmtAST>> body)
      : location(std::move(loc)), name(name), nameLocation(std::move(nameLoc)),
        body(std::move(body)) {}

  const Location &loc() const { return location; }
  llvm::StringRef getName() const { return name; }
  const Location &nameLoc() const { return nameLocation; }
  llvm::ArrayRef<std::unique_ptr<StmtAST>> getBody() const { return body; }

private:
  Location location;
  std::string name;
  Location nameLocation;
  std::vector<std::unique_ptr<StmtAST>> body;
};

//===----------------------------------------------------------------------===//
// Sweep
//===----------------------------------------------------------------------===//

/// `KEY = EXPR` inside a sweep.
struct SweepSettingAST {
  std::string key;
  Location loc;
  std::unique_ptr<ExprAST> value;
};

/// The evaluated sweep: one value per model for every per-model setting.
struct SweepConfig {
  std::string model;
  int64_t models = 0;
  std::string optimizer;
  /// In the order of the optimizer rule (OptimizerRules.h).
  std::vector<std::string> hyperNames;
  std::vector<std::vector<double>> hyper;
  std::vector<int64_t> seeds;
  std::string data = "fashion_mnist";
  int64_t batchSize = 64;
  int64_t epochs = 1;
  int64_t shuffleSeed = 0;
  /// Which samples each model trains on: "shared", "kfold", "bootstrap".
  std::string routing = "shared";
  /// kfold: the number of folds and each model's held-out fold.
  int64_t folds = 0;
  std::vector<int64_t> fold;
};

/// `sweep { ... }`.
class SweepAST {
public:
  SweepAST(Location loc, std::vector<SweepSettingAST> settings)
      : location(std::move(loc)), settings(std::move(settings)) {}

  const Location &loc() const { return location; }
  llvm::ArrayRef<SweepSettingAST> getSettings() const { return settings; }

  /// Set by Sema.
  std::optional<SweepConfig> config;

private:
  Location location;
  std::vector<SweepSettingAST> settings;
};

/// A whole spec.
class ModuleAST {
public:
  ModuleAST(std::vector<std::unique_ptr<ModelAST>> models,
            std::vector<std::unique_ptr<SweepAST>> sweeps)
      : models(std::move(models)), sweeps(std::move(sweeps)) {}

  llvm::ArrayRef<std::unique_ptr<ModelAST>> getModels() const { return models; }
  llvm::ArrayRef<std::unique_ptr<SweepAST>> getSweeps() const { return sweeps; }
  /// The sweep, or null when the spec has none.
  SweepAST *getSweep() const {
    return sweeps.empty() ? nullptr : sweeps.front().get();
  }

private:
  std::vector<std::unique_ptr<ModelAST>> models;
  std::vector<std::unique_ptr<SweepAST>> sweeps;
};

} // namespace mbt

#endif // MBT_COMPILER_FRONTEND_AST_H
