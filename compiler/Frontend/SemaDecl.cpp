//===- SemaDecl.cpp - declarations, and the order of the whole check ------===//
//
// Before anything is expanded, every function and model is checked on its
// own: its arguments (names, types, defaults), where its `return` is, the
// names and functions its body uses (in both branches of every `if`, so
// that a function nobody calls is checked too) and, over all functions,
// that no function calls itself. Then the sweep is checked, and the models
// are expanded: the sweep's with the sweep's arguments, the others with
// their defaults.
//
// An error that does not depend on the call site is found before expansion
// and again in every copy; a diagnostic handler drops the repeats.
//
//===----------------------------------------------------------------------===//
#include "compiler/Frontend/Sema.h"
#include "compiler/Frontend/SemaData.h"
#include "compiler/Frontend/SemaInternal.h"
#include "compiler/Frontend/SemaOptim.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/raw_ostream.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/GlobPattern.h"

#include <functional>

#include <set>

using namespace mbt;
using namespace mbt::sema;
using llvm::dyn_cast;
using mlir::failed;
using mlir::LogicalResult;

/// The metrics an expanded body declares (in the branches taken).
static void collectMetrics(llvm::ArrayRef<std::unique_ptr<StmtAST>> body,
                           std::vector<std::string> &names) {
  for (const auto &stmt : body) {
    if (const auto *assign = llvm::dyn_cast<AssignStmtAST>(stmt.get()))
      if (assign->isMetric())
        names.push_back(assign->getName().str());
    if (const auto *branch = llvm::dyn_cast<IfStmtAST>(stmt.get()))
      collectMetrics(branch->getTaken(), names);
  }
}

/// rank_by names an output of the swept model: its loss or a metric.
static bool checkRankBy(mlir::MLIRContext &ctx, const SweepConfig &config,
                        const ModelAST &model) {
  if (config.rankBy.empty())
    return true;
  std::vector<std::string> outputs = {"loss"};
  collectMetrics(model.instance->body, outputs);
  if (llvm::is_contained(outputs, config.rankBy))
    return true;
  emitError(ctx, config.rankByLoc)
      << "rank_by = " << config.rankBy << ": model '" << model.getName()
      << "' has no such output (it has " << llvm::join(outputs, ", ") << ")";
  return false;
}

/// Every no_decay and freeze pattern of the sweep must match a parameter of
/// its model (a typo would otherwise silently decay, or train, everything),
/// and freeze must leave a parameter to train.
static bool checkParamPatterns(mlir::MLIRContext &ctx,
                               const SweepConfig &config,
                               llvm::ArrayRef<FlatParam> params) {
  std::vector<std::string> names;
  for (const FlatParam &p : params)
    names.push_back(p.name);
  auto matches = [&](const std::string &text, const std::string &name) {
    auto pattern = llvm::GlobPattern::create(text);
    if (!pattern) {
      llvm::consumeError(pattern.takeError()); // reported by the sweep's check
      return true;
    }
    return pattern->match(name);
  };
  bool ok = true;
  for (auto [key, patterns] : {std::pair("no_decay", &config.noDecay),
                               std::pair("freeze", &config.freeze)})
    for (const auto &pattern : *patterns) {
      const std::string &text = pattern.first;
      if (llvm::any_of(names, [&](const std::string &name) {
            return matches(text, name);
          }))
        continue;
      emitError(ctx, pattern.second)
          << key << " pattern '" << text << "' matches no parameter of model '"
          << config.model << "' (parameters: " << llvm::join(names, ", ")
          << ")";
      ok = false;
    }
  bool trains = llvm::any_of(names, [&](const std::string &name) {
    return llvm::none_of(config.freeze, [&](const auto &pattern) {
      return matches(pattern.first, name);
    });
  });
  if (ok && !config.freeze.empty() && !trains) {
    emitError(ctx, config.freeze.front().second)
        << "freeze matches every parameter of model '" << config.model << "' ("
        << llvm::join(names, ", ") << "): nothing would train";
    ok = false;
  }
  return ok;
}

namespace {
/// While alive, drops an error whose location and text equal those of an
/// error reported before.
class DuplicateFilter {
public:
  explicit DuplicateFilter(mlir::MLIRContext &ctx)
      : handler(&ctx, [this](mlir::Diagnostic &diag) {
          if (diag.getSeverity() != mlir::DiagnosticSeverity::Error)
            return mlir::failure();
          std::string key;
          llvm::raw_string_ostream os(key);
          os << diag.getLocation() << ": " << diag.str();
          return mlir::success(!seen.insert(os.str()).second);
        }) {}

private:
  std::set<std::string> seen;
  mlir::ScopedDiagnosticHandler handler;
};

/// The checks before expansion.
class DeclChecker {
public:
  DeclChecker(mlir::MLIRContext &ctx, ModuleAST &spec) : ctx(ctx), spec(spec) {}

  bool check();

private:
  /// A call of a function of the spec, for the recursion check.
  struct CallEdge {
    const FunctionAST *callee;
    Location loc;
  };

  void checkFunctionNames();
  bool checkArgs(std::vector<ArgDeclAST> &args, llvm::StringRef owner,
                 bool isModel);
  bool checkReturns(const FunctionAST &function);
  /// Checks the names a body uses and defines, given the arguments.
  void checkNames(llvm::ArrayRef<std::unique_ptr<StmtAST>> body,
                  llvm::ArrayRef<ArgDeclAST> args,
                  std::vector<CallEdge> *edges);
  void collectDefined(llvm::ArrayRef<std::unique_ptr<StmtAST>> body,
                      const llvm::StringMap<Location> &args);
  void walkStmts(llvm::ArrayRef<std::unique_ptr<StmtAST>> body);
  void walkExpr(const ExprAST &expr);
  void checkRecursion();

  mlir::InFlightDiagnostic error(const Location &loc) {
    ok = false;
    return emitError(ctx, loc);
  }

  mlir::MLIRContext &ctx;
  ModuleAST &spec;
  /// The names defined in the body being walked, and where its calls go.
  llvm::StringSet<> defined;
  std::vector<CallEdge> *edges = nullptr;
  llvm::DenseMap<const FunctionAST *, std::vector<CallEdge>> callGraph;
  bool ok = true;
};
} // namespace

bool DeclChecker::check() {
  checkFunctionNames();
  for (const auto &function : spec.getFunctions()) {
    auto *fn = const_cast<FunctionAST *>(function.get());
    std::string owner = ("function '" + fn->getName() + "'").str();
    bool callable = checkArgs(fn->getArgs(), owner, /*isModel=*/false);
    callable &= checkReturns(*fn);
    checkNames(fn->getBody(), fn->getArgs(), &callGraph[fn]);
    fn->callable = callable && fn->callable;
  }
  checkRecursion();
  for (const auto &model : spec.getModels()) {
    std::string owner = ("model '" + model->getName() + "'").str();
    model->spec = &spec;
    model->argsChecked = checkArgs(model->getArgs(), owner, /*isModel=*/true);
    checkNames(model->getBody(), model->getArgs(), nullptr);
  }
  return ok;
}

/// Function names are unique and differ from the builtins'. The first
/// definition of a name is the one calls use.
void DeclChecker::checkFunctionNames() {
  llvm::StringMap<const FunctionAST *> seen;
  for (const auto &function : spec.getFunctions()) {
    auto *fn = const_cast<FunctionAST *>(function.get());
    llvm::StringRef name = fn->getName();
    fn->callable = true;
    if (isBuiltinFunction(name) || name == "dim") {
      error(fn->nameLoc()) << "function '" << name
                           << "' has the name of a builtin function";
      fn->callable = false;
      continue;
    }
    auto [it, inserted] = seen.try_emplace(name, fn);
    if (inserted)
      continue;
    auto diag = error(fn->nameLoc())
                << "redefinition of function '" << name << "'";
    attachNote(diag, ctx, it->second->nameLoc(), "previous definition is here");
    fn->callable = false;
  }
}

/// `x` (a tensor; functions only), `n: int`, `p: float = 0.1`, `b = true`.
bool DeclChecker::checkArgs(std::vector<ArgDeclAST> &args,
                            llvm::StringRef owner, bool isModel) {
  bool argsOk = true;
  llvm::StringMap<Location> seen;
  BodyConstants eval(ctx, [](llvm::StringRef) -> const ValueType * {
    return nullptr; // a default refers to nothing
  });
  for (ArgDeclAST &arg : args) {
    auto [it, inserted] = seen.try_emplace(arg.name, arg.loc);
    if (!inserted) {
      auto diag = error(arg.loc)
                  << "redefinition of argument '" << arg.name << "'";
      attachNote(diag, ctx, it->second, "previous definition is here");
      argsOk = false;
    }
    std::optional<ConstScalar::Kind> kind;
    if (arg.typeName == "int")
      kind = ConstScalar::Int;
    else if (arg.typeName == "float")
      kind = ConstScalar::Float;
    else if (arg.typeName == "bool")
      kind = ConstScalar::Bool;
    else if (!arg.typeName.empty()) {
      error(arg.typeLoc) << "unknown argument type '" << arg.typeName
                         << "' (known: int, float, bool; a tensor argument "
                         << "has no type)";
      argsOk = false;
      continue;
    }
    std::string what = ("the default of argument '" + arg.name + "'");
    if (arg.defaultValue) {
      auto value = kind ? eval.evaluateAs(*arg.defaultValue, *kind, what)
                        : eval.evaluateScalar(*arg.defaultValue, what);
      if (failed(value)) {
        ok = argsOk = false;
        continue;
      }
      arg.defaultScalar = *value;
      kind = value->kind;
    }
    if (!kind) {
      if (isModel) {
        error(arg.loc) << "argument '" << arg.name << "' of " << owner
                       << " needs a type (int, float or bool) or a default";
        argsOk = false;
      }
      arg.kind = ArgDeclAST::Tensor;
      continue;
    }
    arg.kind = *kind == ConstScalar::Int     ? ArgDeclAST::Int
               : *kind == ConstScalar::Float ? ArgDeclAST::Float
                                             : ArgDeclAST::Bool;
  }
  return argsOk;
}

/// A function ends with its only `return`.
bool DeclChecker::checkReturns(const FunctionAST &function) {
  auto body = function.getBody();
  bool returnsOk = true;
  std::function<void(llvm::ArrayRef<std::unique_ptr<StmtAST>>, bool)> walk =
      [&](llvm::ArrayRef<std::unique_ptr<StmtAST>> stmts, bool top) {
        for (const auto &stmt : stmts) {
          if (auto *ifStmt = dyn_cast<IfStmtAST>(stmt.get())) {
            walk(ifStmt->getThen(), false);
            walk(ifStmt->getElse(), false);
          } else if (llvm::isa<ReturnStmtAST>(stmt.get()) &&
                     !(top && stmt == stmts.back())) {
            error(stmt->loc()) << "'return' must be the last statement of "
                               << "function '" << function.getName() << "'";
            returnsOk = false;
          }
        }
      };
  walk(body, true);
  if (body.empty() || !llvm::isa<ReturnStmtAST>(body.back().get())) {
    error(function.nameLoc()) << "function '" << function.getName()
                              << "' must end with 'return EXPR'";
    returnsOk = false;
  }
  return returnsOk;
}

void DeclChecker::checkNames(llvm::ArrayRef<std::unique_ptr<StmtAST>> body,
                             llvm::ArrayRef<ArgDeclAST> args,
                             std::vector<CallEdge> *callEdges) {
  llvm::StringMap<Location> argLocs;
  for (const ArgDeclAST &arg : args)
    argLocs.try_emplace(arg.name, arg.loc);
  defined.clear();
  for (const ArgDeclAST &arg : args)
    defined.insert(arg.name);
  collectDefined(body, argLocs);
  edges = callEdges;
  walkStmts(body);
  edges = nullptr;
}

/// Collects the names a body defines; a name that redefines an argument is
/// an error.
void DeclChecker::collectDefined(llvm::ArrayRef<std::unique_ptr<StmtAST>> body,
                                 const llvm::StringMap<Location> &args) {
  for (const auto &stmt : body) {
    if (auto *ifStmt = dyn_cast<IfStmtAST>(stmt.get())) {
      collectDefined(ifStmt->getThen(), args);
      collectDefined(ifStmt->getElse(), args);
      continue;
    }
    llvm::StringRef name = stmt->getName();
    if (name.empty())
      continue;
    auto arg = args.find(name);
    if (arg != args.end()) {
      auto diag = error(stmt->nameLoc()) << "redefinition of '" << name << "'";
      attachNote(diag, ctx, arg->second, "previous definition is here");
    }
    defined.insert(name);
  }
}

void DeclChecker::walkStmts(llvm::ArrayRef<std::unique_ptr<StmtAST>> body) {
  for (const auto &stmt : body) {
    if (auto *decl = dyn_cast<DataDeclAST>(stmt.get())) {
      for (const auto &dim : decl->getType().dimExprs)
        walkExpr(*dim);
    } else if (auto *param = dyn_cast<ParamDeclAST>(stmt.get())) {
      for (const auto &dim : param->getType().dimExprs)
        walkExpr(*dim);
      // The initializer's name is not a value; its arguments are.
      if (auto *init = dyn_cast<CallExprAST>(param->getInit()))
        for (const ArgumentAST &arg : init->getArgs())
          walkExpr(*arg.value);
    } else if (auto *assign = dyn_cast<AssignStmtAST>(stmt.get())) {
      walkExpr(*assign->getValue());
    } else if (auto *ret = dyn_cast<ReturnStmtAST>(stmt.get())) {
      walkExpr(*ret->getValue());
    } else if (auto *ifStmt = dyn_cast<IfStmtAST>(stmt.get())) {
      walkExpr(*ifStmt->getCondition());
      walkStmts(ifStmt->getThen());
      walkStmts(ifStmt->getElse());
    } else if (auto *assert = dyn_cast<AssertStmtAST>(stmt.get())) {
      walkExpr(*assert->getCondition());
    }
  }
}

void DeclChecker::walkExpr(const ExprAST &expr) {
  if (auto *var = dyn_cast<VariableExprAST>(&expr)) {
    llvm::StringRef name = var->getName();
    if (name != "true" && name != "false" && !defined.contains(name))
      error(var->loc()) << "use of undeclared name '" << name << "'";
  } else if (auto *unary = dyn_cast<UnaryExprAST>(&expr)) {
    walkExpr(*unary->getOperand());
  } else if (auto *binary = dyn_cast<BinaryExprAST>(&expr)) {
    walkExpr(*binary->getLHS());
    walkExpr(*binary->getRHS());
  } else if (auto *call = dyn_cast<CallExprAST>(&expr)) {
    llvm::StringRef callee = call->getCallee();
    if (const FunctionAST *function = lookupFunction(spec, callee)) {
      if (edges)
        edges->push_back({function, call->loc()});
    } else if (!isBuiltinFunction(callee) && callee != "dim") {
      error(call->loc()) << unknownFunctionMessage(callee, spec);
    }
    for (const ArgumentAST &arg : call->getArgs())
      walkExpr(*arg.value);
  } else if (auto *list = dyn_cast<ListExprAST>(&expr)) {
    for (const auto &element : list->getElements())
      walkExpr(*element);
  }
}

/// Finds every cycle of calls with a depth-first search (iterative: the
/// number of functions is not bounded) and reports it at the call that
/// closes it; the functions on it cannot be expanded.
void DeclChecker::checkRecursion() {
  enum Color { White, Gray, Black };
  llvm::DenseMap<const FunctionAST *, Color> color;
  for (const auto &root : spec.getFunctions()) {
    if (color.lookup(root.get()) != White)
      continue;
    // The path from the root: each function and the next edge to follow.
    std::vector<std::pair<const FunctionAST *, size_t>> path{{root.get(), 0}};
    color[root.get()] = Gray;
    while (!path.empty()) {
      auto &[function, next] = path.back();
      const std::vector<CallEdge> &out = callGraph[function];
      if (next == out.size()) {
        color[function] = Black;
        path.pop_back();
        continue;
      }
      const CallEdge &edge = out[next++];
      Color calleeColor = color.lookup(edge.callee);
      if (calleeColor == White) {
        color[edge.callee] = Gray;
        path.push_back({edge.callee, 0});
        continue;
      }
      if (calleeColor == Black)
        continue;
      // A cycle: from the callee's place on the path to here.
      auto start = llvm::find_if(
          path, [&](const auto &entry) { return entry.first == edge.callee; });
      std::string chain;
      for (auto it = start; it != path.end(); ++it) {
        chain += it->first->getName().str() + " -> ";
        const_cast<FunctionAST *>(it->first)->callable = false;
      }
      chain += edge.callee->getName().str();
      error(edge.loc) << "recursive call of '" << edge.callee->getName()
                      << "' (" << chain << "); a function cannot call itself";
    }
  }
}

//===----------------------------------------------------------------------===//
// The spec
//===----------------------------------------------------------------------===//

LogicalResult mbt::checkModule(mlir::MLIRContext &ctx, ModuleAST &module) {
  DuplicateFilter duplicates(ctx);
  bool ok = DeclChecker(ctx, module).check();
  ok &= checkOptimizers(ctx, module);
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
  }
  auto sweeps = module.getSweeps();
  for (size_t i = 1; i < sweeps.size(); ++i) {
    auto diag = emitError(ctx, sweeps[i]->loc())
                << "a spec can have only one sweep";
    attachNote(diag, ctx, sweeps.front()->loc(), "previous sweep is here");
    ok = false;
  }
  const SweepConfig *config = nullptr;
  Location sweepModelLoc;
  if (!sweeps.empty()) {
    ok &= succeeded(checkSweep(ctx, *sweeps.front(), module.getModels(),
                               module.getOptimizers()));
    if (sweeps.front()->config) {
      config = &*sweeps.front()->config;
      sweepModelLoc =
          config->modelLoc.file ? config->modelLoc : sweeps.front()->loc();
    }
  }

  // Expand the models: the sweep's with its arguments (the first model of
  // that name), the others that can be with their defaults.
  const ModelAST *swept = nullptr;
  if (config)
    if (const ModelAST *model = modelNames.lookup(config->model))
      swept = model;
  for (const auto &model : module.getModels()) {
    if (!model->argsChecked)
      continue;
    bool isSwept = model.get() == swept;
    if (!isSwept && !llvm::all_of(model->getArgs(), [](const ArgDeclAST &a) {
          return a.defaultScalar.has_value();
        }))
      continue;
    auto expansion =
        isSwept ? expandModel(ctx, *model, config->modelArgs, sweepModelLoc)
                : expandModel(ctx, *model, {}, model->nameLoc());
    if (failed(expansion)) {
      model->expansionFailed = true;
      ok = false;
      continue;
    }
    model->instance = std::move(expansion->instance);
    model->params = std::move(expansion->params);
    model->buffers = std::move(expansion->buffers);
    model->floatType = expansion->floatType;
    if (isSwept) {
      ok &= checkParamPatterns(ctx, *config, model->params);
      ok &= checkRankBy(ctx, *config, *model);
      ok &= succeeded(checkDataFitsInput(ctx, *config, *model));
      // bf16 products are rounded f32 values: an f64 model has none.
      if (config->precision && model->floatType == "f64") {
        auto diag = emitError(ctx, config->precisionLoc)
                    << "precision = "
                    << mlir::mbt::stringifyPrecision(*config->precision)
                    << " rounds the products of an f32 model, but model '"
                    << model->getName() << "' computes in f64";
        attachNote(diag, ctx, model->nameLoc(), "the model is declared here");
        ok = false;
      }
    }
  }
  return mlir::success(ok);
}
