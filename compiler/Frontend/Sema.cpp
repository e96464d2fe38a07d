//===- Sema.cpp - semantic checks of model and function bodies ------------===//
//
// Checks one expanded body (BodyInstance) at a time. Names are scoped per
// body and must be defined before they are used. Each expression gets a
// per-sample type: values that depend on the input are batched (the IR adds
// a leading batch dimension), parameters and constants are not, and the
// target is a per-sample class index that only the loss and metric
// functions accept. Calls of functions are checked in SemaCall.cpp, calls
// of builtins in SemaBuiltins.cpp.
//
//===----------------------------------------------------------------------===//
#include "compiler/Frontend/Sema.h"
#include "compiler/Frontend/Diagnostics.h"
#include "compiler/Frontend/SemaInternal.h"

#include "dialects/MBT/IR/MBTShapes.h"

#include "mlir/IR/BuiltinTypes.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"

#include <cmath>

using namespace mbt;
using namespace mbt::sema;
using llvm::cast;
using llvm::dyn_cast;
using mlir::failure;
using mlir::LogicalResult;
using mlir::success;

ValueType ValueType::tokens(int64_t vocab) {
  ValueType t;
  t.kind = Tokens;
  t.shape.push_back(mlir::ShapedType::kDynamic);
  t.numClasses = vocab;
  t.batched = true;
  return t;
}

std::string mbt::formatValueType(const ValueType &type) {
  switch (type.kind) {
  case ValueType::Invalid:
    return "<invalid>";
  case ValueType::Class:
    return "class[" + std::to_string(type.numClasses) + "]";
  case ValueType::Tokens:
    return "tokens[B, ?] of " + std::to_string(type.numClasses);
  case ValueType::NextTokens:
    return "next tokens[B, ?] of " + std::to_string(type.numClasses);
  case ValueType::Tensor: {
    std::string text = "f32[";
    if (type.batched)
      text += type.shape.empty() ? "B" : "B, ";
    return text +
           llvm::join(llvm::map_range(type.shape,
                                      [](int64_t d) {
                                        return mlir::ShapedType::isDynamic(d)
                                                   ? std::string("?")
                                                   : std::to_string(d);
                                      }),
                      ", ") +
           "]";
  }
  }
  llvm_unreachable("unknown value type kind");
}

std::string mbt::describeShape(const ValueType &type) {
  if (type.kind == ValueType::Class)
    return "the target's class indices";
  if (type.kind == ValueType::Tokens)
    return "the input's token ids";
  if (type.kind == ValueType::NextTokens)
    return "the target's next-token ids";
  return (type.batched ? "per-sample shape " : "shape ") +
         mlir::mbt::formatShape(type.shape);
}

LogicalResult BodyChecker::checkModel() {
  const ModelAST &model = state.model;
  // Arguments that differ between models are scalar tensors of the body.
  for (const auto &arg : instance.perModelArgs) {
    const std::string &name = arg.first;
    ValueType type = ValueType::tensor({}, /*batched=*/false);
    type.perModel = true;
    const ArgDeclAST *decl = llvm::find_if(
        model.getArgs(), [&](const ArgDeclAST &a) { return a.name == name; });
    declare(name, decl->loc, type);
  }
  collectNames(instance.body);
  checkBody(instance.body);
  llvm::StringRef name = model.getName();
  if (!input)
    error(model.nameLoc()) << "model '" << name << "' has no input (declare "
                           << "one with 'input NAME: f32[N]')";
  if (!state.target)
    error(model.nameLoc()) << "model '" << name << "' has no target (declare "
                           << "one with 'target NAME: class[C]')";
  if (!loss)
    error(model.nameLoc()) << "model '" << name
                           << "' has no loss (assign one with 'loss = ...')";
  checkNextTokenTarget();
  // A call that failed before its parameters were declared says nothing.
  if (state.params.empty() && !state.callFailed)
    error(model.nameLoc()) << "model '" << name
                           << "' has no parameters to train";
  return mlir::success(ok);
}

/// A tokens[V] target is the input's next token at every position: the
/// input must be the token ids of the same vocabulary.
void BodyChecker::checkNextTokenTarget() {
  const DataDeclAST *target = state.target;
  if (!target || !input || target->getType().elementType != "tokens")
    return;
  auto symbol = scope.find(input->getName());
  if (symbol == scope.end() || !symbol->second.type.isValid())
    return; // the input's own error was reported
  const ValueType &x = symbol->second.type;
  int64_t vocab =
      target->getType().dims.empty() ? 0 : target->getType().dims.front();
  if (x.kind == ValueType::Tokens && x.numClasses == vocab)
    return;
  auto diag = error(target->getType().loc);
  diag << "target '" << target->getName() << "' of type tokens[" << vocab
       << "] predicts the next token of the input, so the input must be "
       << "tokens[" << vocab << "], got ";
  if (x.kind == ValueType::Tokens)
    diag << "tokens[" << x.numClasses << "]";
  else
    diag << describeShape(x);
  attachNote(diag, ctx, input->loc(), "the input is declared here");
}

ValueType BodyChecker::checkFunction(
    llvm::ArrayRef<std::pair<const ArgDeclAST *, ValueType>> tensorArgs) {
  for (const auto &[arg, type] : tensorArgs)
    scope.try_emplace(arg->name, Symbol{arg->loc, type});
  collectNames(instance.body);
  checkBody(instance.body);
  return ok ? result : ValueType();
}

/// Calls `fn` on every statement of `body` that defines a name, in both
/// branches of every `if`.
static void forEachDefinition(llvm::ArrayRef<std::unique_ptr<StmtAST>> body,
                              llvm::function_ref<void(const StmtAST &)> fn) {
  for (const auto &stmt : body) {
    if (auto *ifStmt = dyn_cast<IfStmtAST>(stmt.get())) {
      forEachDefinition(ifStmt->getThen(), fn);
      forEachDefinition(ifStmt->getElse(), fn);
    } else if (!stmt->getName().empty()) {
      fn(*stmt);
    }
  }
}

void BodyChecker::collectNames(llvm::ArrayRef<std::unique_ptr<StmtAST>> body) {
  forEachDefinition(body, [&](const StmtAST &stmt) {
    allNames.try_emplace(stmt.getName(), stmt.nameLoc());
  });
}

void BodyChecker::checkBody(llvm::ArrayRef<std::unique_ptr<StmtAST>> body) {
  for (const auto &stmt : body) {
    if (auto *decl = dyn_cast<DataDeclAST>(stmt.get()))
      checkDataDecl(*decl);
    else if (auto *param = dyn_cast<ParamDeclAST>(stmt.get()))
      checkParamDecl(*param);
    else if (auto *assign = dyn_cast<AssignStmtAST>(stmt.get()))
      checkAssignment(*assign);
    else if (auto *ifStmt = dyn_cast<IfStmtAST>(stmt.get()))
      checkIf(*ifStmt);
    else if (auto *assert = dyn_cast<AssertStmtAST>(stmt.get()))
      checkAssert(*assert);
    else // the declaration check put the only `return` last
      result = checkExpr(*cast<ReturnStmtAST>(stmt.get())->getValue());
  }
}

BodyConstants BodyChecker::constants() {
  return BodyConstants(ctx, [this](llvm::StringRef name) -> const ValueType * {
    auto it = scope.find(name);
    return it == scope.end() ? nullptr : &it->second.type;
  });
}

/// if COND { ... } else { ... }: only the branch COND chooses is checked.
void BodyChecker::checkIf(IfStmtAST &ifStmt) {
  auto condition = constants().evaluateAs(
      *ifStmt.getCondition(), ConstScalar::Bool, "the condition of an 'if'");
  if (failed(condition)) {
    ok = false;
    // The names either branch defines exist, with unknown types: their
    // uses are not reported again.
    auto poison = [&](const StmtAST &stmt) {
      scope.try_emplace(stmt.getName(), Symbol{stmt.nameLoc(), ValueType()});
    };
    forEachDefinition(ifStmt.getThen(), poison);
    forEachDefinition(ifStmt.getElse(), poison);
    return;
  }
  ifStmt.taken = condition->boolValue ? IfStmtAST::Then : IfStmtAST::Else;
  checkBody(ifStmt.getTaken());
}

/// assert COND, "message": the message is the error when COND is false.
void BodyChecker::checkAssert(const AssertStmtAST &assert) {
  auto condition =
      constants().evaluateAs(*assert.getCondition(), ConstScalar::Bool,
                             "the condition of an 'assert'");
  if (failed(condition))
    ok = false;
  else if (!condition->boolValue)
    error(assert.loc()) << assert.getMessage();
}

void BodyChecker::declare(llvm::StringRef name, const Location &loc,
                          ValueType type) {
  auto [it, inserted] = scope.try_emplace(name, Symbol{loc, type});
  if (inserted)
    return;
  auto diag = error(loc) << "redefinition of '" << name << "'";
  attachNote(diag, ctx, it->second.loc, "previous definition is here");
}

/// Evaluates the sizes of a declared shape into `type.dims`.
bool BodyChecker::resolveDims(TypeAST &type) {
  bool dimsOk = true;
  llvm::SmallVector<int64_t, 4> dims;
  for (const auto &dimExpr : type.dimExprs) {
    // '/' is true division, so a size computed as a ratio (channels per
    // group, `dim(x, 0) / groups`) is a float: a whole one is a size.
    mlir::FailureOr<ConstScalar> dim =
        constants().evaluateScalar(*dimExpr, "a dimension size");
    if (succeeded(dim) && dim->kind == ConstScalar::Float) {
      double v = dim->floatValue;
      if (v == std::floor(v) && std::fabs(v) < 9.0e15) {
        dim = ConstScalar::integer(static_cast<int64_t>(v));
      } else {
        error(dimExpr->loc())
            << "a dimension size must be a whole number, got " << dim->str();
        dimsOk = false;
        continue;
      }
    } else if (succeeded(dim) && dim->kind == ConstScalar::Bool)
      dim = constants().evaluateAs(*dimExpr, ConstScalar::Int,
                                   "a dimension size"); // reports it
    if (failed(dim)) {
      dimsOk = ok = false;
      continue;
    }
    if (dim->intValue < 1) {
      error(dimExpr->loc())
          << "dimension sizes must be positive, got " << dim->intValue;
      dimsOk = false;
    }
    dims.push_back(dim->intValue);
  }
  if (dimsOk)
    type.dims = std::move(dims);
  return dimsOk;
}

bool BodyChecker::checkFloatType(const TypeAST &type, const std::string &what,
                                 bool allowGeneric) {
  llvm::StringRef element = type.elementType;
  if (element == "float" && allowGeneric)
    return true; // the model's, whichever it is
  if (element == "bf16" || element == "f16") {
    error(type.loc) << what << " has element type " << element
                    << ", which the CPU target cannot compute in; use f32 or "
                    << "f64 (for " << element << " products with f32 weights, "
                    << "set the sweep's precision = " << element << ")";
    return false;
  }
  if (element != "f32" && element != "f64") {
    error(type.loc) << what << " must have element type f32 or f64"
                    << (allowGeneric ? " (or float, the model's)" : "")
                    << ", got '" << element << "'";
    return false;
  }
  if (!state.floatType) {
    state.floatType = ExpansionState::FloatDecl{element.str(), what, type.loc};
    return true;
  }
  if (state.floatType->type == element)
    return true;
  auto diag = error(type.loc)
              << what << " has element type " << element << ", but "
              << state.floatType->what << " is " << state.floatType->type
              << "; a model computes in one float type";
  attachNote(diag, ctx, state.floatType->loc,
             state.floatType->what + " is declared here");
  return false;
}

/// input NAME: f32[N]   target NAME: class[C]
void BodyChecker::checkDataDecl(DataDeclAST &decl) {
  TypeAST &type = decl.getType();
  llvm::StringRef name = decl.getName();
  ValueType result;
  const DataDeclAST *&previous = decl.isInput() ? input : state.target;
  llvm::StringRef what = decl.isInput() ? "input" : "target";
  if (previous) {
    auto diag = error(decl.loc())
                << "model '" << state.model.getName() << "' has more than one "
                << what << "; only one is supported for now";
    attachNote(diag, ctx, previous->loc(),
               "previous " + what.str() + " is here");
  } else {
    previous = &decl;
  }
  bool dimsOk = resolveDims(type);
  if (decl.isInput() && type.elementType == "tokens") {
    // A sequence of token ids: the vocabulary size is the one dimension.
    if (dimsOk && (type.dims.size() != 1 || type.dims.front() < 1))
      error(type.loc) << "input '" << name << "' of token ids must have type "
                      << "tokens[V] (V: the vocabulary size), got tokens"
                      << mlir::mbt::formatShape(type.dims);
    else if (dimsOk)
      result = ValueType::tokens(type.dims.front());
  } else if (decl.isInput()) {
    bool typeOk = checkFloatType(type, "input '" + name.str() + "'",
                                 /*allowGeneric=*/false);
    if (typeOk && dimsOk && type.dims.empty())
      error(type.loc) << "input '" << name << "' must have at least one "
                      << "dimension, such as f32[784] or f32[28, 28]";
    else if (typeOk && dimsOk)
      result = ValueType::tensor(type.dims, /*batched=*/true);
  } else if (dimsOk) {
    bool tokens = type.elementType == "tokens";
    bool values = decl.isValueTarget();
    if (type.dims.size() != 1 || type.dims.front() < 1)
      error(type.loc) << "target '" << name << "' must have type class[C] "
                      << "(C classes), f32[K] (K values to regress) or "
                      << "tokens[V] (the input's next tokens, V its "
                      << "vocabulary), got " << type.elementType
                      << mlir::mbt::formatShape(type.dims);
    else if (tokens)
      result = ValueType::nextTokens(type.dims.front());
    else if (!values)
      result = ValueType::classes(type.dims.front());
    else if (checkFloatType(type, "target '" + name.str() + "'",
                            /*allowGeneric=*/false))
      // K values per sample: a batched float tensor like any other.
      result = ValueType::tensor(type.dims, /*batched=*/true);
  }
  declare(decl.getName(), decl.nameLoc(), result);
}

/// param NAME: f32[dims] = INIT (or buffer NAME: ...); inside a function
/// the parameter is named by the path of the call (`fc1.w`). Parameters
/// and buffers share one namespace, as in a PyTorch state dict.
void BodyChecker::checkParamDecl(ParamDeclAST &decl) {
  TypeAST &type = decl.getType();
  ValueType result;
  std::string path = instance.path.empty()
                         ? decl.getName().str()
                         : instance.path + "." + decl.getName().str();
  llvm::StringRef what = decl.isBuffer() ? "buffer" : "parameter";
  auto [it, inserted] = state.paramNames.try_emplace(path, decl.nameLoc());
  if (!inserted) {
    auto diag = error(decl.nameLoc())
                << "two parameters or buffers of model '"
                << state.model.getName() << "' are named '" << path << "'";
    attachNote(diag, ctx, it->second, "the other is declared here");
  } else {
    (decl.isBuffer() ? state.buffers : state.params).push_back({path, &decl});
  }
  if (checkFloatType(type, (what + " '" + path + "'").str(),
                     /*allowGeneric=*/true) &&
      resolveDims(type)) {
    result = ValueType::tensor(type.dims, /*batched=*/false);
    decl.resolvedInit = resolveInitializer(ctx, decl);
    ok &= decl.resolvedInit.has_value();
  }
  declare(decl.getName(), decl.nameLoc(), result);
  if (decl.isBuffer())
    scope[decl.getName()].buffer = &decl;
}

/// NAME = EXPR, metric NAME = EXPR; `loss = EXPR` is a model's loss. A
/// call of a function assigned whole names the call site.
void BodyChecker::checkAssignment(AssignStmtAST &assign) {
  namedCall = dyn_cast<CallExprAST>(assign.getValue());
  namedCallName = assign.getName();
  bool inModel = !instance.function;
  if (inModel && assign.isMetric())
    splitMetricCall = namedCall;
  ValueType type = checkExpr(*assign.getValue());
  if (splitMetricCall && isSplitMetric(splitMetricCall->builtin))
    splitMetrics.insert(assign.getName());
  namedCall = nullptr;
  splitMetricCall = nullptr;
  if (assign.isMetric() && assign.getName() == "loss")
    error(assign.nameLoc()) << "'loss' is reserved for the loss; give the "
                               "metric another name";
  if (inModel && (assign.isLoss() || assign.isMetric())) {
    if (assign.isLoss() && !loss)
      loss = &assign;
    std::string what = assign.isLoss()
                           ? std::string("loss")
                           : ("metric '" + assign.getName() + "'").str();
    if (type.isValid() &&
        (!type.isTensor() || type.batched || !type.shape.empty()))
      error(assign.getValue()->loc())
          << what << " must be a scalar, got " << describeShape(type);
  }
  declare(assign.getName(), assign.nameLoc(), type);
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

ValueType BodyChecker::checkExpr(ExprAST &expr) {
  ValueType type;
  switch (expr.getKind()) {
  case ExprAST::Expr_Number:
    type = ValueType::tensor({}, /*batched=*/false);
    break;
  case ExprAST::Expr_Var:
    type = checkVariable(cast<VariableExprAST>(expr));
    break;
  case ExprAST::Expr_Unary: {
    ValueType operand = checkExpr(*cast<UnaryExprAST>(expr).getOperand());
    if (operand.isValid() && requireTensor(operand, expr.loc()))
      type = operand;
    break;
  }
  case ExprAST::Expr_Binary: {
    auto &binary = cast<BinaryExprAST>(expr);
    ValueType lhs = checkExpr(*binary.getLHS());
    ValueType rhs = checkExpr(*binary.getRHS());
    if (!lhs.isValid() || !rhs.isValid() ||
        !requireTensor(lhs, binary.getLHS()->loc()) ||
        !requireTensor(rhs, binary.getRHS()->loc()))
      break;
    type = binary.getOp() == '@'
               ? checkMatmul(lhs, rhs, binary.loc())
               : checkElementwise(binary.getOp(), lhs, rhs, binary.loc());
    break;
  }
  case ExprAST::Expr_Call:
    type = checkCall(cast<CallExprAST>(expr));
    break;
  case ExprAST::Expr_List:
    error(expr.loc()) << "lists are not allowed in model expressions";
    break;
  case ExprAST::Expr_String:
    error(expr.loc()) << "strings are not allowed in model expressions";
    break;
  case ExprAST::Expr_Dict:
    error(expr.loc()) << "dicts are not allowed in model expressions";
    break;
  }
  expr.type = type;
  return type;
}

ValueType BodyChecker::checkVariable(const VariableExprAST &var) {
  llvm::StringRef name = var.getName();
  if (splitMetrics.contains(name)) {
    error(var.loc()) << "metric '" << name << "' is computed over a whole "
                     << "split after the steps; an expression cannot use it";
    return ValueType();
  }
  auto it = scope.find(name);
  if (it != scope.end())
    return it->second.type;
  if (name == "true" || name == "false") {
    error(var.loc()) << "'" << name << "' is a bool; it can only be used in "
                     << "conditions and constant arguments";
    return ValueType();
  }
  auto later = allNames.find(name);
  if (later != allNames.end()) {
    // Defined above but not in scope: in a branch of an `if` not taken.
    const Location &def = later->second;
    bool above = def.file == var.loc().file &&
                 std::make_pair(def.line, def.col) <
                     std::make_pair(var.loc().line, var.loc().col);
    auto diag = error(var.loc());
    if (above)
      diag << "'" << name << "' is not defined here: its definition is in "
           << "a branch of an 'if' that is not taken";
    else
      diag << "use of '" << name << "' before its definition";
    attachNote(diag, ctx, def, "defined here");
    return ValueType();
  }
  error(var.loc()) << "use of undeclared name '" << var.getName() << "'";
  return ValueType();
}

bool BodyChecker::requireTensor(const ValueType &type, const Location &loc) {
  if (type.kind == ValueType::Tokens) {
    error(loc) << "the input '" << (input ? input->getName() : "")
               << "' holds token ids; it can only be passed to embedding "
                  "or masked_mean";
    return false;
  }
  if (type.kind == ValueType::NextTokens) {
    error(loc) << "the target '"
               << (state.target ? state.target->getName() : "")
               << "' holds the input's next tokens; it can only be passed to "
                  "cross_entropy or accuracy";
    return false;
  }
  if (type.kind != ValueType::Class)
    return true;
  error(loc) << "the target '" << (state.target ? state.target->getName() : "")
             << "' holds class indices; it can only be passed to "
                "cross_entropy, accuracy, one_hot or embedding";
  return false;
}

ValueType BodyChecker::checkCall(CallExprAST &call) {
  llvm::StringRef name = call.getCallee();
  // A function of the spec binds and checks its arguments itself: constant
  // arguments are not tensor expressions.
  if (const FunctionAST *function = lookupFunction(state.spec, name))
    return checkFunctionCall(call, *function);
  if (name == "dim") {
    error(call.loc()) << "'dim' is a constant; it can only be used in "
                      << "shapes, constant arguments and conditions";
    return ValueType();
  }
  return checkBuiltinCall(call);
}

/// A per-sample vector [K] (batched), a sequence [?, K] (each position's
/// vector), or a vector/matrix (not batched) times a matrix [K, N] that
/// does not depend on the input.
ValueType BodyChecker::checkMatmul(const ValueType &lhs, const ValueType &rhs,
                                   const Location &loc) {
  if (rhs.batched) {
    error(loc) << "matmul's right operand must not depend on the input, got "
               << describeShape(rhs);
    return ValueType();
  }
  if (rhs.shape.size() != 2) {
    error(loc) << "matmul's right operand must be a matrix [K, N], got "
               << describeShape(rhs);
    return ValueType();
  }
  // A sequence [?, K] is a vector per position: position-wise.
  bool sequence = lhs.batched && lhs.shape.size() == 2 &&
                  mlir::ShapedType::isDynamic(lhs.shape[0]);
  if (sequence      ? false
      : lhs.batched ? lhs.shape.size() != 1
                    : lhs.shape.empty() || lhs.shape.size() > 2) {
    error(loc) << "matmul's left operand must be "
               << (lhs.batched ? "a per-sample vector [K]"
                               : "a vector [K] or a matrix [M, K]")
               << ", got " << describeShape(lhs)
               << (lhs.batched && lhs.shape.size() > 1
                       ? " (flatten it first: flatten(x) @ w)"
                       : "");
    return ValueType();
  }
  int64_t k = lhs.shape.back();
  if (k != rhs.shape[0]) {
    error(loc) << "matmul shape mismatch: " << mlir::mbt::formatShape(lhs.shape)
               << " @ " << mlir::mbt::formatShape(rhs.shape)
               << ": inner dimensions " << k << " and " << rhs.shape[0]
               << " differ";
    return ValueType();
  }
  llvm::SmallVector<int64_t, 2> shape(lhs.shape.begin(), lhs.shape.end() - 1);
  shape.push_back(rhs.shape[1]);
  return ValueType::tensor(shape, lhs.batched);
}

/// `+ - * /` broadcast their per-sample shapes with NumPy's rule (shapes
/// aligned at the right). The batch dimension stays in front: a batched
/// operand of lower rank gains its unit dimensions after it.
ValueType BodyChecker::checkElementwise(char op, const ValueType &lhs,
                                        const ValueType &rhs,
                                        const Location &loc) {
  size_t rank = std::max(lhs.shape.size(), rhs.shape.size());
  auto padded = [&](const ValueType &t) {
    llvm::SmallVector<int64_t, 4> shape(rank - t.shape.size(), 1);
    shape.append(t.shape.begin(), t.shape.end());
    return shape;
  };
  auto shape = mlir::mbt::broadcastEqualRankShapes(padded(lhs), padded(rhs));
  // The sequence dimension (changing from step to step) meets only itself
  // or a 1: against a fixed size it would be a shape error at run time.
  llvm::SmallVector<int64_t, 4> lhsShape = padded(lhs), rhsShape = padded(rhs);
  for (auto [a, b] : llvm::zip(lhsShape, rhsShape))
    if (mlir::ShapedType::isDynamic(a) != mlir::ShapedType::isDynamic(b) &&
        a != 1 && b != 1)
      shape = std::nullopt;
  if (!shape) {
    error(loc) << "operands of '" << op
               << "' cannot be broadcast: " << mlir::mbt::formatShape(lhs.shape)
               << " and " << mlir::mbt::formatShape(rhs.shape);
    return ValueType();
  }
  return ValueType::tensor(*shape, lhs.batched || rhs.batched);
}
