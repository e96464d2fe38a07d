//===- Sema.cpp - semantic checks of models -------------------------------===//
//
// Names are scoped per model and must be defined before they are used. Each
// expression gets a per-sample type: values that depend on the input are
// batched (the IR adds a leading batch dimension), parameters and constants
// are not, and the target is a per-sample class index that only the loss
// and metric functions accept.
//
//===----------------------------------------------------------------------===//
#include "compiler/Frontend/Sema.h"
#include "compiler/Frontend/Diagnostics.h"

#include "dialects/MBT/IR/MBTShapes.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"

using namespace mbt;
using llvm::cast;
using llvm::dyn_cast;
using mlir::failure;
using mlir::LogicalResult;
using mlir::success;

std::string mbt::formatValueType(const ValueType &type) {
  switch (type.kind) {
  case ValueType::Invalid:
    return "<invalid>";
  case ValueType::Class:
    return "class[" + std::to_string(type.numClasses) + "]";
  case ValueType::Tensor: {
    std::string text = "f32[";
    if (type.batched)
      text += type.shape.empty() ? "B" : "B, ";
    return text +
           llvm::join(
               llvm::map_range(type.shape,
                               [](int64_t d) { return std::to_string(d); }),
               ", ") +
           "]";
  }
  }
  llvm_unreachable("unknown value type kind");
}

std::string mbt::describeShape(const ValueType &type) {
  if (type.kind == ValueType::Class)
    return "the target's class indices";
  return (type.batched ? "per-sample shape " : "shape ") +
         mlir::mbt::formatShape(type.shape);
}

namespace {
/// The functions a model expression can call, with their arity.
struct FunctionInfo {
  llvm::StringLiteral name;
  unsigned arity;
};
const FunctionInfo kFunctions[] = {{"matmul", 2},
                                   {"relu", 1},
                                   {"tanh", 1},
                                   {"sigmoid", 1},
                                   {"silu", 1},
                                   {"gelu", 1},
                                   {"cross_entropy", 2},
                                   {"accuracy", 2}};

/// A name defined in a model.
struct Symbol {
  const StmtAST *decl;
  ValueType type;
};

/// Checks one model.
class ModelChecker {
public:
  ModelChecker(mlir::MLIRContext &ctx, ModelAST &model)
      : ctx(ctx), model(model) {}

  LogicalResult check();

private:
  void checkDataDecl(DataDeclAST &decl);
  void checkParamDecl(ParamDeclAST &decl);
  void checkAssignment(AssignStmtAST &assign);
  bool checkDims(const TypeAST &type);
  void declare(const StmtAST &stmt, ValueType type);

  /// Computes, records and returns the type of `expr`; an invalid type
  /// means an error has been reported.
  ValueType checkExpr(ExprAST &expr);
  ValueType checkVariable(const VariableExprAST &var);
  ValueType checkCall(CallExprAST &call);
  ValueType checkMatmul(const ValueType &lhs, const ValueType &rhs,
                        const Location &loc);
  ValueType checkElementwise(char op, const ValueType &lhs,
                             const ValueType &rhs, const Location &loc);
  ValueType checkClassification(llvm::StringRef name, const ValueType &logits,
                                const ValueType &target, const CallExprAST &c);
  /// Reports the use of the target where a float tensor is needed.
  bool requireTensor(const ValueType &type, const Location &loc);

  mlir::InFlightDiagnostic error(const Location &loc) {
    ok = false;
    return emitError(ctx, loc);
  }

  mlir::MLIRContext &ctx;
  ModelAST &model;
  llvm::StringMap<Symbol> scope;
  /// Every name the model defines, to tell "defined later" from "undefined".
  llvm::StringMap<const StmtAST *> allNames;
  const DataDeclAST *input = nullptr;
  const DataDeclAST *target = nullptr;
  const AssignStmtAST *loss = nullptr;
  unsigned numParams = 0;
  bool ok = true;
};
} // namespace

LogicalResult ModelChecker::check() {
  for (const auto &stmt : model.getBody())
    allNames.try_emplace(stmt->getName(), stmt.get());
  for (const auto &stmt : model.getBody()) {
    if (auto *decl = dyn_cast<DataDeclAST>(stmt.get()))
      checkDataDecl(*decl);
    else if (auto *param = dyn_cast<ParamDeclAST>(stmt.get()))
      checkParamDecl(*param);
    else
      checkAssignment(*cast<AssignStmtAST>(stmt.get()));
  }
  llvm::StringRef name = model.getName();
  if (!input)
    error(model.nameLoc()) << "model '" << name << "' has no input (declare "
                           << "one with 'input NAME: f32[N]')";
  if (!target)
    error(model.nameLoc()) << "model '" << name << "' has no target (declare "
                           << "one with 'target NAME: class[C]')";
  if (!loss)
    error(model.nameLoc()) << "model '" << name
                           << "' has no loss (assign one with 'loss = ...')";
  if (numParams == 0)
    error(model.nameLoc()) << "model '" << name
                           << "' has no parameters to train";
  return mlir::success(ok);
}

void ModelChecker::declare(const StmtAST &stmt, ValueType type) {
  auto [it, inserted] = scope.try_emplace(stmt.getName(), Symbol{&stmt, type});
  if (inserted)
    return;
  auto diag = error(stmt.nameLoc())
              << "redefinition of '" << stmt.getName() << "'";
  attachNote(diag, ctx, it->second.decl->nameLoc(),
             "previous definition is here");
}

bool ModelChecker::checkDims(const TypeAST &type) {
  bool dimsOk = true;
  for (auto [dim, loc] : llvm::zip(type.dims, type.dimLocs))
    if (dim < 1) {
      error(loc) << "dimension sizes must be positive, got " << dim;
      dimsOk = false;
    }
  return dimsOk;
}

/// input NAME: f32[N]   target NAME: class[C]
void ModelChecker::checkDataDecl(DataDeclAST &decl) {
  const TypeAST &type = decl.getType();
  llvm::StringRef name = decl.getName();
  ValueType result;
  const DataDeclAST *&previous = decl.isInput() ? input : target;
  llvm::StringRef what = decl.isInput() ? "input" : "target";
  if (previous) {
    auto diag = error(decl.loc())
                << "model '" << model.getName() << "' has more than one "
                << what << "; only one is supported for now";
    attachNote(diag, ctx, previous->loc(),
               "previous " + what.str() + " is here");
  } else {
    previous = &decl;
  }
  if (decl.isInput()) {
    if (type.elementType != "f32")
      error(type.loc) << "input '" << name << "' must have element type f32, "
                      << "got '" << type.elementType << "'";
    else if (type.dims.size() != 1)
      error(type.loc) << "input '" << name << "' must have a rank-1 "
                      << "per-sample shape for now, got "
                      << mlir::mbt::formatShape(type.dims);
    else if (checkDims(type))
      result = ValueType::tensor(type.dims, /*batched=*/true);
  } else {
    if (type.elementType != "class" || type.dims.size() != 1)
      error(type.loc) << "target '" << name << "' must have type class[C] "
                      << "(C classes), got " << type.elementType
                      << mlir::mbt::formatShape(type.dims);
    else if (checkDims(type))
      result = ValueType::classes(type.dims.front());
  }
  declare(decl, result);
}

/// param NAME: f32[dims] = INIT
void ModelChecker::checkParamDecl(ParamDeclAST &decl) {
  ++numParams;
  const TypeAST &type = decl.getType();
  ValueType result;
  if (type.elementType != "f32") {
    error(type.loc) << "parameter '" << decl.getName()
                    << "' must have element type f32, got '" << type.elementType
                    << "'";
  } else if (checkDims(type)) {
    result = ValueType::tensor(type.dims, /*batched=*/false);
    decl.resolvedInit = resolveInitializer(ctx, decl);
    ok &= decl.resolvedInit.has_value();
  }
  declare(decl, result);
}

/// NAME = EXPR, metric NAME = EXPR; `loss = EXPR` is the loss.
void ModelChecker::checkAssignment(AssignStmtAST &assign) {
  ValueType type = checkExpr(*assign.getValue());
  if (assign.isMetric() && assign.getName() == "loss")
    error(assign.nameLoc()) << "'loss' is reserved for the loss; give the "
                               "metric another name";
  if (assign.isLoss() || assign.isMetric()) {
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
  declare(assign, type);
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

ValueType ModelChecker::checkExpr(ExprAST &expr) {
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
  }
  expr.type = type;
  return type;
}

ValueType ModelChecker::checkVariable(const VariableExprAST &var) {
  auto it = scope.find(var.getName());
  if (it != scope.end())
    return it->second.type;
  if (const StmtAST *later = allNames.lookup(var.getName())) {
    auto diag = error(var.loc())
                << "use of '" << var.getName() << "' before its definition";
    attachNote(diag, ctx, later->nameLoc(), "defined here");
    return ValueType();
  }
  error(var.loc()) << "use of undeclared name '" << var.getName() << "'";
  return ValueType();
}

bool ModelChecker::requireTensor(const ValueType &type, const Location &loc) {
  if (type.kind != ValueType::Class)
    return true;
  error(loc) << "the target '" << (target ? target->getName() : "")
             << "' holds class indices; it can only be passed to "
                "cross_entropy or accuracy";
  return false;
}

ValueType ModelChecker::checkCall(CallExprAST &call) {
  llvm::StringRef name = call.getCallee();
  llvm::SmallVector<ValueType, 2> args;
  bool argsOk = true;
  for (const ArgumentAST &arg : call.getArgs()) {
    args.push_back(checkExpr(*arg.value));
    argsOk &= args.back().isValid();
  }
  const FunctionInfo *info = llvm::find_if(
      kFunctions, [&](const FunctionInfo &f) { return f.name == name; });
  if (info == std::end(kFunctions)) {
    error(call.loc()) << "unknown function '" << name << "' (known: "
                      << llvm::join(llvm::map_range(kFunctions,
                                                    [](const FunctionInfo &f) {
                                                      return f.name.str();
                                                    }),
                                    ", ")
                      << ")";
    return ValueType();
  }
  for (const ArgumentAST &arg : call.getArgs())
    if (!arg.name.empty()) {
      error(arg.nameLoc) << "'" << name << "' takes no keyword arguments";
      return ValueType();
    }
  if (args.size() != info->arity) {
    error(call.loc()) << "'" << name << "' takes " << info->arity
                      << (info->arity == 1 ? " argument" : " arguments")
                      << ", got " << args.size();
    return ValueType();
  }
  if (!argsOk)
    return ValueType();
  if (name == "cross_entropy" || name == "accuracy")
    return checkClassification(name, args[0], args[1], call);
  for (auto [arg, type] : llvm::zip(call.getArgs(), args))
    if (!requireTensor(type, arg.value->loc()))
      return ValueType();
  if (name == "matmul")
    return checkMatmul(args[0], args[1], call.loc());
  return args[0]; // elementwise activations keep the shape
}

/// A per-sample vector [K] (batched) or a vector/matrix (not batched) times
/// a matrix [K, N] that does not depend on the input.
ValueType ModelChecker::checkMatmul(const ValueType &lhs, const ValueType &rhs,
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
  if (lhs.batched ? lhs.shape.size() != 1
                  : lhs.shape.empty() || lhs.shape.size() > 2) {
    error(loc) << "matmul's left operand must be "
               << (lhs.batched ? "a per-sample vector [K]"
                               : "a vector [K] or a matrix [M, K]")
               << ", got " << describeShape(lhs);
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

/// `+ - *` broadcast their per-sample shapes with NumPy's rule. The batch
/// dimension stays in front, so a batched operand cannot gain dimensions.
ValueType ModelChecker::checkElementwise(char op, const ValueType &lhs,
                                         const ValueType &rhs,
                                         const Location &loc) {
  size_t rank = std::max(lhs.shape.size(), rhs.shape.size());
  auto padded = [&](const ValueType &t) {
    llvm::SmallVector<int64_t, 4> shape(rank - t.shape.size(), 1);
    shape.append(t.shape.begin(), t.shape.end());
    return shape;
  };
  auto shape = mlir::mbt::broadcastEqualRankShapes(padded(lhs), padded(rhs));
  if (!shape) {
    error(loc) << "operands of '" << op
               << "' cannot be broadcast: " << mlir::mbt::formatShape(lhs.shape)
               << " and " << mlir::mbt::formatShape(rhs.shape);
    return ValueType();
  }
  for (const ValueType *t : {&lhs, &rhs})
    if (t->batched && t->shape.size() != rank) {
      error(loc) << "'" << op << "' would broadcast a value of "
                 << describeShape(*t) << " to rank " << rank
                 << ", which is not supported yet";
      return ValueType();
    }
  return ValueType::tensor(*shape, lhs.batched || rhs.batched);
}

/// cross_entropy(logits, target) and accuracy(logits, target): logits are a
/// per-sample vector with one entry per class of the target.
ValueType ModelChecker::checkClassification(llvm::StringRef name,
                                            const ValueType &logits,
                                            const ValueType &labels,
                                            const CallExprAST &call) {
  const ExprAST &logitsExpr = *call.getArgs()[0].value;
  if (!requireTensor(logits, logitsExpr.loc()))
    return ValueType();
  if (!logits.batched || logits.shape.size() != 1) {
    error(logitsExpr.loc())
        << "the logits of '" << name << "' must be a per-sample vector [C] "
        << "(computed from the input), got " << describeShape(logits);
    return ValueType();
  }
  if (labels.kind != ValueType::Class) {
    error(call.getArgs()[1].value->loc())
        << "the second argument of '" << name << "' must be the target, got "
        << describeShape(labels);
    return ValueType();
  }
  if (logits.shape[0] != labels.numClasses) {
    error(call.loc()) << "'" << name << "' logits have " << logits.shape[0]
                      << " classes but the target has " << labels.numClasses;
    return ValueType();
  }
  return ValueType::tensor({}, /*batched=*/false);
}

//===----------------------------------------------------------------------===//
// The spec
//===----------------------------------------------------------------------===//

LogicalResult mbt::checkModule(mlir::MLIRContext &ctx, ModuleAST &module) {
  bool ok = true;
  llvm::StringMap<const ModelAST *> modelNames;
  for (const auto &model : module.getModels()) {
    auto [it, inserted] = modelNames.try_emplace(model->getName(), model.get());
    if (!inserted) {
      auto diag = emitError(ctx, model->nameLoc())
                  << "redefinition of model '" << model->getName() << "'";
      attachNote(diag, ctx, it->second->nameLoc(),
                 "previous definition is here");
      ok = false;
    }
    ok &= succeeded(ModelChecker(ctx, *model).check());
  }
  auto sweeps = module.getSweeps();
  for (size_t i = 1; i < sweeps.size(); ++i) {
    auto diag = emitError(ctx, sweeps[i]->loc())
                << "a spec can have only one sweep";
    attachNote(diag, ctx, sweeps.front()->loc(), "previous sweep is here");
    ok = false;
  }
  if (!sweeps.empty())
    ok &= succeeded(checkSweep(ctx, *sweeps.front(), module.getModels()));
  return mlir::success(ok);
}
