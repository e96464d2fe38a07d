//===- ASTExpr.h - expressions of the mbt language --------------*- C++ -*-===//
//
// The expression nodes of the AST and the types Sema gives them. As in the
// Toy tutorial, nodes carry a kind and implement classof for LLVM RTTI.
//
//===----------------------------------------------------------------------===//
#ifndef MBT_COMPILER_FRONTEND_ASTEXPR_H
#define MBT_COMPILER_FRONTEND_ASTEXPR_H

#include "compiler/Frontend/Builtins.h"
#include "compiler/Frontend/Lexer.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
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

/// The value of a constant argument of a function or model (`out: int`,
/// `rate: float`, `bias: bool`) or of a constant expression in a model.
struct ConstScalar {
  enum Kind { Int, Float, Bool };
  Kind kind = Int;
  int64_t intValue = 0;
  double floatValue = 0; // for Int too: the integer as a double
  bool boolValue = false;

  static ConstScalar integer(int64_t v) {
    return {Int, v, static_cast<double>(v), false};
  }
  static ConstScalar real(double v) { return {Float, 0, v, false}; }
  static ConstScalar boolean(bool v) { return {Bool, 0, 0, v}; }
  bool isNumber() const { return kind != Bool; }
  /// "3", "0.5", "true": as a diagnostic or a dump shows it.
  std::string str() const;
};

/// "int", "float" or "bool".
llvm::StringRef kindName(ConstScalar::Kind kind);

/// The type of a model expression, as seen for one sample: a float tensor
/// with a per-sample shape, the class index of the target, the token ids
/// of a sequence input (`tokens[V]`: T ids in [0, V), T changing from step
/// to step, so its shape is [?]; a tensor computed from it per position
/// has the dynamic dimension too), or a `tokens[V]` target: the input's
/// next token at each of its positions (a language model's). `batched`
/// values depend on the input and gain a leading batch dimension in the IR;
/// the others (parameters, constants, losses) do not.
struct ValueType {
  enum Kind { Invalid, Tensor, Class, Tokens, NextTokens };
  Kind kind = Invalid;
  llvm::SmallVector<int64_t, 4> shape; // per-sample shape of a Tensor, Tokens
  int64_t numClasses = 0; // class count of a Class, vocabulary of (Next)Tokens
  bool batched = false;
  /// A model argument that differs between the models of the sweep: a
  /// scalar tensor, never a constant.
  bool perModel = false;

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
  /// A sequence of token ids in [0, vocab): per-sample shape [?].
  static ValueType tokens(int64_t vocab);
  /// A tokens[V] target: the next token id at every position, [?].
  static ValueType nextTokens(int64_t vocab) {
    ValueType t = tokens(vocab);
    t.kind = NextTokens;
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
    Expr_String,
    Expr_Dict,
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

/// A reference to a name, like `x` or `models`; also `true` and `false`.
class VariableExprAST : public ExprAST {
public:
  VariableExprAST(Location loc, llvm::StringRef name)
      : ExprAST(Expr_Var, std::move(loc)), name(name) {}

  llvm::StringRef getName() const { return name; }

  static bool classof(const ExprAST *c) { return c->getKind() == Expr_Var; }

private:
  std::string name;
};

/// A prefix operator: `-e`, or `not e` (op '!') in the condition of an `if`.
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

/// A binary operator: `+`, `-`, `*` or `@` (matmul); in the condition of an
/// `if` also a comparison or `and`/`or`, spelled by the BinaryOp codes below
/// (one character each, so that `getOp()` stays a char). The location is the
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

struct BodyInstance;

/// A call, like `relu(h)`, `linear(x, 10)` or `adam(lr = 1e-3)`. The
/// location is the callee's.
class CallExprAST : public ExprAST {
public:
  CallExprAST(Location loc, llvm::StringRef callee,
              std::vector<ArgumentAST> args);
  ~CallExprAST() override;

  llvm::StringRef getCallee() const { return callee; }
  llvm::ArrayRef<ArgumentAST> getArgs() const { return args; }

  /// Set by Sema on a call of a function of the spec (not a builtin): the
  /// callee's body expanded for this call site, with its own parameters.
  std::unique_ptr<BodyInstance> instance;

  /// Set by Sema on a call of a builtin: which one it is, its tensor
  /// arguments in the builtin's order (however they were passed), and the
  /// values of its constant options (`axis`, `k`, ...), defaults included. An
  /// `axis` is stored normalized: non-negative and counted in the per-sample
  /// shape.
  BuiltinID builtin = BuiltinID::None;
  std::vector<const ExprAST *> builtinArgs;
  llvm::StringMap<ConstScalar> builtinOptions;
  /// Options given as scalar tensor expressions (those a builtin accepts
  /// so, such as a per-model `label_smoothing`), in place of a value.
  llvm::StringMap<const ExprAST *> builtinTensorOptions;
  /// The per-sample result shape of `reshape` and `flatten`.
  llvm::SmallVector<int64_t, 4> builtinShape;

  static bool classof(const ExprAST *c) { return c->getKind() == Expr_Call; }

private:
  std::string callee;
  std::vector<ArgumentAST> args;
};

/// A string literal, like `"*.b"`: only sweep settings that name things
/// (such as `no_decay` and `freeze`) take them.
class StringExprAST : public ExprAST {
public:
  StringExprAST(Location loc, llvm::StringRef value)
      : ExprAST(Expr_String, std::move(loc)), value(value) {}

  llvm::StringRef getValue() const { return value; }

  static bool classof(const ExprAST *c) { return c->getKind() == Expr_String; }

private:
  std::string value;
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

/// The elements of `value` if it is a list literal, else `value` alone: the
/// items of a setting that takes one value or a list of them.
inline std::vector<const ExprAST *> listItems(const ExprAST &value) {
  std::vector<const ExprAST *> items;
  if (const auto *list = llvm::dyn_cast<ListExprAST>(&value))
    for (const auto &element : list->getElements())
      items.push_back(element.get());
  else
    items.push_back(&value);
  return items;
}

/// A dict literal, like `{"fc1.w": "0.weight"}`: the only one the language
/// has is checkpoint's `rename`. The location is the '{'.
class DictExprAST : public ExprAST {
public:
  struct Entry {
    std::unique_ptr<ExprAST> key, value;
  };

  DictExprAST(Location loc, std::vector<Entry> entries)
      : ExprAST(Expr_Dict, std::move(loc)), entries(std::move(entries)) {
    for (const Entry &entry : this->entries) {
      setDepthAbove(entry.key.get());
      setDepthAbove(entry.value.get());
    }
  }

  llvm::ArrayRef<Entry> getEntries() const { return entries; }

  static bool classof(const ExprAST *c) { return c->getKind() == Expr_Dict; }

private:
  std::vector<Entry> entries;
};

/// The one-character codes of the operators that only conditions use.
namespace BinaryOp {
constexpr char Lt = '<', Gt = '>', Le = 'l', Ge = 'g', Eq = 'e', Ne = 'n',
               And = '&', Or = '|';
} // namespace BinaryOp

/// The spelling of a BinaryExprAST or UnaryExprAST operator code, for
/// diagnostics and dumps: "+", "<=", "and", "not".
llvm::StringRef spellOperator(char op, bool unary = false);

} // namespace mbt

#endif // MBT_COMPILER_FRONTEND_ASTEXPR_H
