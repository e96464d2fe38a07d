//===- SemaOptim.cpp - checks of optimizers written in the language -------===//
//
// An optimizer body is checked for one set of flag values (the branches of
// its `if`s that they take): every expression is a number or a condition,
// and either a per-model scalar (made of hyperparameters, the step and
// numbers, computed in double as Python floats are in torch.optim) or a
// per-element value (touching `param`, `grad` or a state slot, in f32).
// MLIRGen splits the rule along that line (mbt.optimizer's two regions).
//
//===----------------------------------------------------------------------===//
#include "compiler/Frontend/SemaOptim.h"
#include "compiler/Frontend/Diagnostics.h"
#include "compiler/Frontend/SweepEval.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"

#include <functional>
#include <optional>

using namespace mbt;
using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;

static const OptimizerBuiltin kBuiltins[] = {
    {"sqrt", 1}, {"abs", 1},     {"sign", 1},    {"exp", 1},   {"log", 1},
    {"pow", 2},  {"maximum", 2}, {"minimum", 2}, {"where", 3},
};

llvm::ArrayRef<OptimizerBuiltin> mbt::optimizerBuiltins() { return kBuiltins; }

namespace {

bool isLiteralName(llvm::StringRef name) {
  return name == "true" || name == "false";
}

/// Whether `expr` is made of numbers, names and operators only (no calls,
/// lists, strings or '@'): what an optimizer's `if` and assert conditions
/// may use, since they are decided before the optimizer runs.
bool isOperatorExpression(const ExprAST &expr) {
  if (isa<NumberExprAST, VariableExprAST>(expr))
    return true;
  if (const auto *unary = dyn_cast<UnaryExprAST>(&expr))
    return isOperatorExpression(*unary->getOperand());
  if (const auto *binary = dyn_cast<BinaryExprAST>(&expr))
    return binary->getOp() != '@' && isOperatorExpression(*binary->getLHS()) &&
           isOperatorExpression(*binary->getRHS());
  return false;
}

/// Evaluates an optimizer's conditions, whose names are its flags and, in
/// the asserts a sweep checks, its hyperparameters, each a column of one value
/// per model (so that a million models cost one evaluation). Names it does not
/// hold count as false, like absent flags.
class OptimizerConditions final : public ConstEvaluator {
public:
  OptimizerConditions(mlir::MLIRContext &ctx,
                      const llvm::StringMap<bool> &flags)
      : ConstEvaluator(ctx) {
    for (const auto &flag : flags)
      names[flag.getKey()] =
          ConstValue::scalar(ConstScalar::boolean(flag.getValue()));
  }

  /// Binds a hyperparameter to its values, one per model.
  void defineColumn(llvm::StringRef name, llvm::ArrayRef<double> values) {
    std::vector<ConstScalar> column;
    column.reserve(values.size());
    for (double value : values)
      column.push_back(ConstScalar::real(value));
    names[name] = ConstValue::list(std::move(column));
  }

private:
  mlir::FailureOr<ConstValue> lookup(const VariableExprAST &var) override {
    auto it = names.find(var.getName());
    if (it == names.end())
      return ConstValue::scalar(ConstScalar::boolean(false));
    return it->second;
  }
  mlir::FailureOr<ConstValue> call(const CallExprAST &call) override {
    // isOperatorExpression keeps calls out of the conditions evaluated.
    emitError(ctx, call.loc()) << subject() << " cannot call a function";
    return mlir::failure();
  }

  llvm::StringMap<ConstValue> names;
};

/// Whether `ifStmt`, whose condition is an operator expression, takes its
/// `then` branch with the flag values `flags`.
mlir::FailureOr<bool> takesThen(mlir::MLIRContext &ctx, const IfStmtAST &ifStmt,
                                const llvm::StringMap<bool> &flags) {
  OptimizerConditions constants(ctx, flags);
  auto condition = constants.evaluateAs(
      *ifStmt.getCondition(), ConstScalar::Bool, "the condition of an 'if'");
  if (mlir::failed(condition))
    return mlir::failure();
  return condition->boolValue;
}

/// The first name in `expr` for which `pred` holds, or null.
const VariableExprAST *
findName(const ExprAST &expr,
         llvm::function_ref<bool(const VariableExprAST &)> pred) {
  if (const auto *var = dyn_cast<VariableExprAST>(&expr))
    return pred(*var) ? var : nullptr;
  if (const auto *unary = dyn_cast<UnaryExprAST>(&expr))
    return findName(*unary->getOperand(), pred);
  if (const auto *binary = dyn_cast<BinaryExprAST>(&expr)) {
    if (const auto *found = findName(*binary->getLHS(), pred))
      return found;
    return findName(*binary->getRHS(), pred);
  }
  if (const auto *call = dyn_cast<CallExprAST>(&expr))
    for (const ArgumentAST &arg : call->getArgs())
      if (const auto *found = findName(*arg.value, pred))
        return found;
  return nullptr;
}

/// What an optimizer expression is.
struct OptType {
  bool valid = true;
  bool element = false; // per element (else a per-model scalar)
  bool condition = false;
  static OptType invalid() { return {false, false, false}; }
};

/// Checks an optimizer's body for one set of flag values.
class BodyChecker {
public:
  BodyChecker(mlir::MLIRContext &ctx, const OptimizerAST &optimizer,
              const llvm::StringMap<bool> &flags)
      : ctx(ctx), optimizer(optimizer), flags(flags) {}

  bool check();

private:
  void checkStatements(llvm::ArrayRef<std::unique_ptr<StmtAST>> body);
  void checkAssign(const AssignStmtAST &assign);
  OptType checkExpr(const ExprAST &expr);
  OptType checkCall(const CallExprAST &call);

  mlir::InFlightDiagnostic error(const Location &loc) {
    ok = false;
    return emitError(ctx, loc);
  }

  mlir::MLIRContext &ctx;
  const OptimizerAST &optimizer;
  const llvm::StringMap<bool> &flags;
  llvm::StringMap<OptType> names;
  /// The state slots, in order, with whether each has been assigned.
  llvm::SmallVector<std::pair<const StmtAST *, bool>> slots;
  bool paramAssigned = false;
  /// An `if` whose condition is wrong, so that neither branch is checked.
  bool skippedBranch = false;
  bool ok = true;
};

} // namespace

bool BodyChecker::check() {
  for (const ArgDeclAST &arg : optimizer.getArgs())
    names[arg.name] = {true, false, isOptimizerFlag(arg)};
  names["param"] = {true, true, false};
  names["grad"] = {true, true, false};
  names["step"] = {true, false, false};
  checkStatements(optimizer.getBody());
  // Assignments may hide in a branch no condition chose.
  if (skippedBranch)
    return ok;
  if (!paramAssigned)
    error(optimizer.nameLoc())
        << "optimizer '" << optimizer.getName()
        << "' never assigns 'param' (param = EXPR gives the updated "
           "parameter)";
  for (auto [decl, assigned] : slots)
    if (!assigned)
      error(decl->nameLoc()) << "state '" << decl->getName()
                             << "' is never assigned, so it stays 0";
  return ok;
}

void BodyChecker::checkStatements(
    llvm::ArrayRef<std::unique_ptr<StmtAST>> body) {
  for (const auto &stmt : body) {
    if (const auto *state = dyn_cast<StateDeclAST>(stmt.get())) {
      if (names.count(state->getName())) {
        error(state->nameLoc())
            << "'" << state->getName()
            << "' is already a name of the optimizer; a state slot needs "
               "a new one";
        continue;
      }
      names[state->getName()] = {true, true, false};
      slots.push_back({state, false});
    } else if (const auto *assign = dyn_cast<AssignStmtAST>(stmt.get())) {
      checkAssign(*assign);
    } else if (const auto *ifStmt = dyn_cast<IfStmtAST>(stmt.get())) {
      const VariableExprAST *notFlag =
          findName(*ifStmt->getCondition(), [&](const VariableExprAST &v) {
            return !isLiteralName(v.getName()) && !flags.count(v.getName());
          });
      if (notFlag) {
        error(notFlag->loc())
            << "an optimizer's 'if' is decided when compiling, from flags "
               "(bool arguments) and numbers; '"
            << notFlag->getName()
            << "' is not a flag (where(cond, a, b) chooses per model or "
               "per element)";
        skippedBranch = true;
        continue;
      }
      if (!isOperatorExpression(*ifStmt->getCondition())) {
        error(ifStmt->getCondition()->loc())
            << "an optimizer's 'if' condition may only use flags, numbers, "
               "comparisons, 'and', 'or' and 'not'";
        skippedBranch = true;
        continue;
      }
      mlir::FailureOr<bool> then = takesThen(ctx, *ifStmt, flags);
      if (mlir::failed(then)) {
        ok = false;
        skippedBranch = true;
        continue;
      }
      checkStatements(*then ? ifStmt->getThen() : ifStmt->getElse());
    } else if (const auto *assert = dyn_cast<AssertStmtAST>(stmt.get())) {
      const VariableExprAST *notArg =
          findName(*assert->getCondition(), [&](const VariableExprAST &v) {
            return !isLiteralName(v.getName()) &&
                   !llvm::any_of(optimizer.getArgs(), [&](const ArgDeclAST &a) {
                     return a.name == v.getName();
                   });
          });
      if (notArg)
        error(notArg->loc()) << "an optimizer's assert may only use its "
                                "arguments and numbers, not '"
                             << notArg->getName() << "'";
      else if (!isOperatorExpression(*assert->getCondition()))
        error(assert->getCondition()->loc())
            << "an optimizer's assert condition may only use arguments, "
               "numbers, + - * /, comparisons, 'and', 'or' and 'not'";
    } else {
      error(stmt->loc()) << "this statement has no meaning in an optimizer";
    }
  }
}

void BodyChecker::checkAssign(const AssignStmtAST &assign) {
  llvm::StringRef name = assign.getName();
  OptType type = checkExpr(*assign.getValue());
  if (flags.count(name)) {
    error(assign.nameLoc()) << "'" << name << "' is a flag (it chooses "
                            << "code) and cannot be assigned";
    return;
  }
  auto slot = llvm::find_if(
      slots, [&](const auto &s) { return s.first->getName() == name; });
  bool isResult = name == "param" || slot != slots.end();
  // Assigned, even if wrongly (the error is reported once, here).
  if (name == "param")
    paramAssigned = true;
  if (slot != slots.end())
    slot->second = true;
  if (!type.valid) {
    names[name] = {true, isResult, false}; // no errors at later uses
    return;
  }
  if (isResult && type.condition) {
    error(assign.nameLoc())
        << "'" << name << "' must be assigned a number, not a condition";
    return;
  }
  // A result stays per element; other names take the value's kind.
  if (isResult)
    type.element = true;
  names[name] = type;
}

OptType BodyChecker::checkExpr(const ExprAST &expr) {
  auto need = [&](const OptType &t, bool condition, const Location &loc,
                  llvm::StringRef what) {
    if (!t.valid)
      return false;
    if (t.condition != condition) {
      error(loc) << what << " needs " << (condition ? "conditions" : "numbers")
                 << ", got " << (t.condition ? "a condition" : "a number");
      return false;
    }
    return true;
  };
  switch (expr.getKind()) {
  case ExprAST::Expr_Number:
    return {true, false, false};
  case ExprAST::Expr_Var: {
    const auto &var = cast<VariableExprAST>(expr);
    if (isLiteralName(var.getName()))
      return {true, false, true};
    auto it = names.find(var.getName());
    if (it == names.end()) {
      error(var.loc()) << "unknown name '" << var.getName()
                       << "' in optimizer '" << optimizer.getName() << "'";
      return OptType::invalid();
    }
    return it->second;
  }
  case ExprAST::Expr_Unary: {
    const auto &unary = cast<UnaryExprAST>(expr);
    OptType t = checkExpr(*unary.getOperand());
    bool isNot = unary.getOp() != '-';
    if (!need(t, isNot, unary.loc(), isNot ? "'not'" : "'-'"))
      return OptType::invalid();
    return t;
  }
  case ExprAST::Expr_Binary: {
    const auto &binary = cast<BinaryExprAST>(expr);
    char op = binary.getOp();
    if (op == '@') {
      error(binary.loc()) << "'@' has no meaning in an optimizer, which "
                             "updates one element at a time";
      return OptType::invalid();
    }
    OptType l = checkExpr(*binary.getLHS());
    OptType r = checkExpr(*binary.getRHS());
    bool logic = op == BinaryOp::And || op == BinaryOp::Or;
    bool compare = !logic && op != '+' && op != '-' && op != '*' && op != '/';
    std::string what = ("'" + spellOperator(op) + "'").str();
    bool lOk = need(l, logic, binary.getLHS()->loc(), what);
    bool rOk = need(r, logic, binary.getRHS()->loc(), what);
    if (!lOk || !rOk)
      return OptType::invalid();
    return {true, l.element || r.element, logic || compare};
  }
  case ExprAST::Expr_Call:
    return checkCall(cast<CallExprAST>(expr));
  case ExprAST::Expr_List:
  case ExprAST::Expr_String:
  case ExprAST::Expr_Dict:
    error(expr.loc())
        << "lists, strings and dicts have no meaning in an optimizer";
    return OptType::invalid();
  }
  return OptType::invalid();
}

OptType BodyChecker::checkCall(const CallExprAST &call) {
  const OptimizerBuiltin *builtin =
      llvm::find_if(kBuiltins, [&](const OptimizerBuiltin &b) {
        return b.name == call.getCallee();
      });
  if (builtin == std::end(kBuiltins)) {
    std::string known;
    for (const OptimizerBuiltin &b : kBuiltins)
      known += (known.empty() ? "" : ", ") + b.name.str();
    error(call.loc()) << "unknown function '" << call.getCallee()
                      << "' in an optimizer (known: " << known << ")";
    return OptType::invalid();
  }
  if (call.getArgs().size() != builtin->arity) {
    error(call.loc()) << "'" << builtin->name << "' takes " << builtin->arity
                      << " argument" << (builtin->arity == 1 ? "" : "s")
                      << ", got " << call.getArgs().size();
    return OptType::invalid();
  }
  OptType result{true, false, false};
  for (auto [i, arg] : llvm::enumerate(call.getArgs())) {
    if (!arg.name.empty()) {
      error(arg.nameLoc) << "'" << builtin->name
                         << "' takes its arguments by position";
      return OptType::invalid();
    }
    OptType t = checkExpr(*arg.value);
    if (!t.valid)
      return OptType::invalid();
    bool wantCondition = builtin->name == "where" && i == 0;
    if (t.condition != wantCondition) {
      error(arg.value->loc())
          << "argument " << i + 1 << " of '" << builtin->name << "' must be "
          << (wantCondition ? "a condition" : "a number") << ", got "
          << (t.condition ? "a condition" : "a number");
      return OptType::invalid();
    }
    result.element |= t.element;
  }
  return result;
}

//===----------------------------------------------------------------------===//
// Declarations
//===----------------------------------------------------------------------===//

std::vector<const StmtAST *>
mbt::takenOptimizerStatements(mlir::MLIRContext &ctx,
                              const OptimizerAST &optimizer,
                              const llvm::StringMap<bool> &flags) {
  std::vector<const StmtAST *> taken;
  std::function<void(llvm::ArrayRef<std::unique_ptr<StmtAST>>)> walk =
      [&](llvm::ArrayRef<std::unique_ptr<StmtAST>> body) {
        for (const auto &stmt : body) {
          const auto *ifStmt = dyn_cast<IfStmtAST>(stmt.get());
          if (!ifStmt) {
            taken.push_back(stmt.get());
            continue;
          }
          // Checked with these flags: the condition evaluates.
          mlir::FailureOr<bool> then = takesThen(ctx, *ifStmt, flags);
          walk(succeeded(then) && *then ? ifStmt->getThen()
                                        : ifStmt->getElse());
        }
      };
  walk(optimizer.getBody());
  return taken;
}

/// Checks the argument declarations of `optimizer`; sets each argument's
/// kind and default.
static bool checkOptimizerArgs(mlir::MLIRContext &ctx,
                               OptimizerAST &optimizer) {
  bool ok = true;
  llvm::StringSet<> seen;
  for (ArgDeclAST &arg : optimizer.getArgs()) {
    if (arg.name == "param" || arg.name == "grad" || arg.name == "step") {
      emitError(ctx, arg.loc) << "'" << arg.name
                              << "' is a name every optimizer has; a "
                                 "hyperparameter needs another";
      ok = false;
      continue;
    }
    if (!seen.insert(arg.name).second) {
      emitError(ctx, arg.loc)
          << "hyperparameter '" << arg.name << "' is declared twice";
      ok = false;
      continue;
    }
    bool isBool = arg.typeName == "bool";
    if (!arg.typeName.empty() && !isBool && arg.typeName != "float" &&
        arg.typeName != "int") {
      emitError(ctx, arg.typeLoc) << "unknown argument type '" << arg.typeName
                                  << "' (an optimizer takes float or bool)";
      ok = false;
      continue;
    }
    if (const ExprAST *def = arg.defaultValue.get()) {
      const auto *var = dyn_cast<VariableExprAST>(def);
      bool boolDefault = var && isLiteralName(var->getName());
      if (arg.typeName.empty())
        isBool = boolDefault;
      if (isBool != boolDefault) {
        emitError(ctx, def->loc())
            << "the default of '" << arg.name << "' must be "
            << (isBool ? "true or false" : "a number");
        ok = false;
        continue;
      }
      // A default refers to no name: the evaluator outside a sweep.
      SweepEvaluator constants(ctx, std::nullopt);
      auto value = constants.evaluateAs(
          *def, isBool ? ConstScalar::Bool : ConstScalar::Float,
          "the default of '" + arg.name + "'");
      if (mlir::failed(value)) {
        ok = false;
        continue;
      }
      arg.defaultScalar = *value;
    }
    arg.kind = isBool ? ArgDeclAST::Bool : ArgDeclAST::Float;
  }
  return ok;
}

static llvm::StringMap<bool> defaultFlags(const OptimizerAST &optimizer) {
  llvm::StringMap<bool> flags;
  for (const ArgDeclAST &arg : optimizer.getArgs())
    if (isOptimizerFlag(arg))
      flags[arg.name] = arg.defaultScalar && arg.defaultScalar->boolValue;
  return flags;
}

bool mbt::checkOptimizers(mlir::MLIRContext &ctx, ModuleAST &module) {
  bool ok = true;
  llvm::StringMap<const OptimizerAST *> seen;
  for (const auto &optimizer : module.getOptimizers()) {
    auto [it, inserted] =
        seen.try_emplace(optimizer->getName(), optimizer.get());
    if (!inserted) {
      auto diag = emitError(ctx, optimizer->nameLoc())
                  << "redefinition of optimizer '" << optimizer->getName()
                  << "'";
      attachNote(diag, ctx, it->second->nameLoc(),
                 "previous definition is here");
      ok = false;
      continue;
    }
    if (!checkOptimizerArgs(ctx, *optimizer)) {
      ok = false;
      continue;
    }
    llvm::StringMap<bool> flags = defaultFlags(*optimizer);
    optimizer->checked = BodyChecker(ctx, *optimizer, flags).check();
    ok &= optimizer->checked;
  }
  return ok;
}

//===----------------------------------------------------------------------===//
// The sweep's optim = NAME(args)
//===----------------------------------------------------------------------===//

bool mbt::bindOptimizer(mlir::MLIRContext &ctx, const OptimizerAST &optimizer,
                        const CallExprAST *call, const Location &useLoc,
                        SweepEvaluator &eval, SweepConfig &config) {
  std::vector<llvm::StringRef> argNames;
  for (const ArgDeclAST &arg : optimizer.getArgs())
    argNames.push_back(arg.name);
  llvm::SmallVector<const ExprAST *> bound(argNames.size(), nullptr);
  std::string callee = ("optimizer '" + optimizer.getName() + "'").str();
  if (call) {
    auto args = bindArguments(ctx, *call, argNames, callee, "hyperparameter");
    if (mlir::failed(args))
      return false;
    bound = *args;
  }
  bool ok = true;
  llvm::StringMap<bool> flags;
  llvm::StringMap<std::vector<double>> values;
  llvm::StringMap<Location> given; // where the sweep gives each argument
  config.optimizer = optimizer.getName().str();
  for (auto [arg, expr] : llvm::zip(optimizer.getArgs(), bound)) {
    if (!expr && !arg.defaultScalar) {
      emitError(ctx, useLoc)
          << callee << " needs a value for '" << arg.name << "'";
      ok = false;
      continue;
    }
    if (expr)
      given[arg.name] = expr->loc();
    if (isOptimizerFlag(arg)) {
      bool value = arg.defaultScalar && arg.defaultScalar->boolValue;
      if (expr) {
        const auto *var = dyn_cast<VariableExprAST>(expr);
        if (!var || !isLiteralName(var->getName())) {
          emitError(ctx, expr->loc())
              << "'" << arg.name << "' is a flag: true or false, the same "
              << "for every model (it chooses the optimizer's code)";
          ok = false;
          continue;
        }
        value = var->getName() == "true";
      }
      flags[arg.name] = value;
      config.optimizerFlags.push_back({arg.name, value});
      continue;
    }
    std::vector<double> perModel(
        config.models, arg.defaultScalar ? arg.defaultScalar->floatValue : 0);
    if (expr) {
      auto evaluated =
          eval.evaluatePerModel(*expr, "hyperparameter '" + arg.name + "'");
      if (mlir::failed(evaluated)) {
        ok = false;
        continue;
      }
      perModel = std::move(*evaluated);
    }
    values[arg.name] = perModel;
    config.hyperNames.push_back(arg.name);
    config.hyper.push_back(std::move(perModel));
  }
  if (!ok || !optimizer.checked)
    return false;
  // Flags other than the defaults take other branches: check them too.
  if (flags != defaultFlags(optimizer) &&
      !BodyChecker(ctx, optimizer, flags).check()) {
    emitError(ctx, useLoc) << "with these flags, " << callee
                           << " has the errors above";
    return false;
  }
  // Every assert on the way, for every model.
  for (const StmtAST *stmt : takenOptimizerStatements(ctx, optimizer, flags)) {
    const auto *assert = dyn_cast<AssertStmtAST>(stmt);
    if (!assert)
      continue;
    // The condition over the columns of all the models at once.
    OptimizerConditions constants(ctx, flags);
    for (const auto &column : values)
      constants.defineColumn(column.getKey(), column.getValue());
    const ExprAST &condition = *assert->getCondition();
    std::string what = "the condition of an 'assert'";
    auto holds = constants.evaluate(condition, what);
    if (mlir::failed(holds) ||
        (!holds->elements.empty() &&
         mlir::failed(convertScalar(ctx, holds->elements.front(),
                                    ConstScalar::Bool, condition.loc(),
                                    what)))) {
      ok = false;
      continue;
    }
    for (int64_t m = 0; m < config.models; ++m) {
      if (holds->elements[holds->isList ? m : 0].boolValue)
        continue;
      // Name the values the condition reads; report at the first of them
      // that the sweep gives.
      std::string shown;
      const Location *at = nullptr;
      llvm::StringSet<> listed;
      findName(condition, [&](const VariableExprAST &v) {
        auto it = values.find(v.getName());
        if (it != values.end() && listed.insert(v.getName()).second)
          shown += (shown.empty() ? "" : ", ") + v.getName().str() + " = " +
                   formatNumber(it->second[m]);
        auto where = given.find(v.getName());
        if (!at && where != given.end())
          at = &where->second;
        return false;
      });
      auto diag = emitError(ctx, at ? *at : useLoc)
                  << callee << ": " << assert->getMessage();
      if (!shown.empty())
        diag << " (model " << m << " has " << shown << ")";
      attachNote(diag, ctx, assert->loc(), "checked here");
      ok = false;
      break;
    }
  }
  return ok;
}
