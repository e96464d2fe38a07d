//===- SemaCall.cpp - calls of functions and the expansion of models ------===//
//
// A call of a function of the spec binds its arguments (by position or
// keyword, defaults for the rest), checks the tensor arguments in the
// caller's scope and evaluates the constant ones, then copies the callee's
// body with the constants substituted and checks the copy with the tensor
// arguments' types: every call site is checked (and later generated) for
// its own shapes and gets its own parameters, named by the path of call
// sites. Errors inside the copy carry a note at each call on the way
// ("in call to 'linear' here"). Models are expanded the same way, for the
// values the sweep gives their arguments.
//
//===----------------------------------------------------------------------===//
#include "compiler/Frontend/Sema.h"
#include "compiler/Frontend/SemaInternal.h"
#include "compiler/Frontend/SweepEval.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

using namespace mbt;
using namespace mbt::sema;
using mlir::failed;
using mlir::failure;
using mlir::FailureOr;

const FunctionAST *sema::lookupFunction(const ModuleAST &spec,
                                        llvm::StringRef name) {
  for (const auto &function : spec.getFunctions())
    if (function->getName() == name)
      return function.get();
  return nullptr;
}

static ConstScalar::Kind scalarKind(ArgDeclAST::Kind kind) {
  switch (kind) {
  case ArgDeclAST::Int:
    return ConstScalar::Int;
  case ArgDeclAST::Float:
    return ConstScalar::Float;
  default:
    return ConstScalar::Bool;
  }
}

namespace {
/// While alive, adds "in call to 'NAME' here" at the call to every error:
/// the errors of a copied body point into the callee, and the note says
/// which call expanded it. Nested calls add one note per level, innermost
/// first, as the diagnostic passes through their handlers.
class CallNoteScope {
public:
  CallNoteScope(mlir::MLIRContext &ctx, const Location &callLoc,
                llvm::StringRef callee)
      : handler(&ctx, [loc = toMLIRLoc(ctx, callLoc),
                       note = ("in call to '" + callee + "' here").str()](
                          mlir::Diagnostic &diag) {
          if (diag.getSeverity() == mlir::DiagnosticSeverity::Error)
            diag.attachNote(loc) << note;
          return failure(); // on to the next handler, which reports it
        }) {}

private:
  mlir::ScopedDiagnosticHandler handler;
};
} // namespace

std::optional<std::string> BodyChecker::callSiteName(const CallExprAST &call) {
  std::string name;
  if (&call == namedCall) {
    name = namedCallName.str();
  } else {
    unsigned &count = unnamedCalls[call.getCallee()];
    name = (call.getCallee() + "_" + llvm::Twine(count++)).str();
  }
  auto [it, inserted] = callNames.try_emplace(name, call.loc());
  if (inserted)
    return name;
  auto diag = error(call.loc())
              << "this call of '" << call.getCallee() << "' would be named '"
              << name << "' like another call; name it with an assignment "
              << "(NAME = " << call.getCallee() << "(...))";
  attachNote(diag, ctx, it->second, "the other call is here");
  return std::nullopt;
}

bool BodyChecker::reserveNodes(size_t count, const Location &loc) {
  state.nodes += count;
  if (state.nodes <= kMaxExpandedNodes)
    return true;
  ok = false;
  if (!state.budgetReported) {
    state.budgetReported = true;
    error(loc) << "model '" << state.model.getName()
               << "' is too large: its function calls expand to more than "
               << kMaxExpandedNodes << " statements and expressions";
  }
  return false;
}

ValueType BodyChecker::checkFunctionCall(CallExprAST &call,
                                         const FunctionAST &function) {
  auto fail = [&] {
    ok = false;
    state.callFailed = true;
    return ValueType();
  };
  // A function whose declaration is broken has been reported already.
  if (!function.callable)
    return fail();
  llvm::StringRef name = function.getName();
  std::vector<llvm::StringRef> argNames;
  for (const ArgDeclAST &arg : function.getArgs())
    argNames.push_back(arg.name);
  auto bound = bindArguments(ctx, call, argNames,
                             ("function '" + name + "'").str(), "argument");
  if (failed(bound))
    return fail();

  auto callee = std::make_unique<BodyInstance>();
  callee->function = &function;
  ConstBindings bindings;
  std::vector<std::pair<const ArgDeclAST *, ValueType>> tensorArgs;
  bool argsOk = true;
  for (auto [decl, boundExpr] : llvm::zip(function.getArgs(), *bound)) {
    if (!boundExpr) {
      if (decl.defaultScalar) {
        bindings[decl.name] = *decl.defaultScalar;
        callee->constArgs.emplace_back(decl.name, *decl.defaultScalar);
        continue;
      }
      auto diag = error(call.loc())
                  << "call of '" << name << "' is missing argument '"
                  << decl.name << "'";
      attachNote(diag, ctx, decl.loc, "declared here");
      argsOk = false;
      continue;
    }
    // The call owns the argument; find it to annotate it.
    ExprAST *expr = nullptr;
    for (const ArgumentAST &arg : call.getArgs())
      if (arg.value.get() == boundExpr)
        expr = arg.value.get();
    if (decl.kind == ArgDeclAST::Tensor) {
      ValueType type = checkExpr(*expr);
      argsOk &= type.isValid();
      tensorArgs.emplace_back(&decl, type);
      callee->tensorArgs.emplace_back(decl.name, expr);
      continue;
    }
    std::string what = "argument '" + decl.name + "' of '" + name.str() + "'";
    auto value = constants().evaluateAs(*expr, scalarKind(decl.kind), what);
    if (failed(value)) {
      argsOk = ok = false; // reported by the evaluator
      continue;
    }
    bindings[decl.name] = *value;
    callee->constArgs.emplace_back(decl.name, *value);
  }
  if (!argsOk)
    return fail();

  std::optional<std::string> siteName = callSiteName(call);
  if (!siteName)
    return fail();
  if (depth + 1 > kMaxCallDepth) {
    error(call.loc()) << "function calls are nested more than " << kMaxCallDepth
                      << " deep";
    return fail();
  }
  if (!reserveNodes(countNodes(function.getBody()), call.loc()))
    return fail();
  callee->path =
      instance.path.empty() ? *siteName : instance.path + "." + *siteName;
  callee->body = cloneBody(function.getBody(), bindings);

  ValueType type;
  {
    CallNoteScope notes(ctx, call.loc(), name);
    BodyChecker checker(ctx, state, *callee, depth + 1);
    type = checker.checkFunction(tensorArgs);
  }
  call.instance = std::move(callee);
  if (!type.isValid())
    return fail();
  return type;
}

//===----------------------------------------------------------------------===//
// Models
//===----------------------------------------------------------------------===//

mlir::LogicalResult mbt::evaluateModelArgs(mlir::MLIRContext &ctx,
                                           const ModelAST &model,
                                           const CallExprAST &call,
                                           SweepEvaluator &eval,
                                           std::vector<ModelArgValue> &args) {
  std::vector<llvm::StringRef> names;
  for (const ArgDeclAST &arg : model.getArgs())
    names.push_back(arg.name);
  auto bound = bindArguments(
      ctx, call, names, ("model '" + model.getName() + "'").str(), "argument");
  if (failed(bound))
    return failure();
  bool ok = true;
  for (auto [name, expr] : llvm::zip(names, *bound)) {
    if (!expr)
      continue;
    ModelArgValue arg{name.str(), expr->loc(), {}};
    std::string what =
        ("argument '" + name + "' of model '" + model.getName() + "'").str();
    auto value = eval.evaluate(*expr);
    if (failed(value)) {
      ok = false;
      continue;
    }
    const std::vector<ConstScalar> &elements = value->elements;
    if (value->isList) {
      // One value per model (a list or a grid axis).
      std::optional<int64_t> models = eval.modelCount();
      if (!models) {
        ok = false; // the model count has been reported
        continue;
      }
      if (static_cast<int64_t>(elements.size()) != *models) {
        emitError(ctx, expr->loc()) << what << " has " << elements.size()
                                    << " values for " << *models << " models";
        ok = false;
        continue;
      }
      const ConstScalar &first = elements.front();
      bool same = llvm::all_of(elements, [&](const ConstScalar &v) {
        return v.kind == first.kind && v.intValue == first.intValue &&
               v.floatValue == first.floatValue &&
               v.boolValue == first.boolValue;
      });
      if (!same &&
          !llvm::all_of(elements, std::mem_fn(&ConstScalar::isNumber))) {
        emitError(ctx, expr->loc())
            << what << " differs between the models, which only a number "
            << "can (a bool chooses the model's code)";
        ok = false;
        continue;
      }
      if (!same)
        arg.perModel = elements;
    }
    arg.value = elements.front();
    args.push_back(std::move(arg));
  }
  return mlir::success(ok);
}

FailureOr<ModelExpansion> mbt::expandModel(mlir::MLIRContext &ctx,
                                           const ModelAST &model,
                                           llvm::ArrayRef<ModelArgValue> args,
                                           const Location &useLoc) {
  // Broken argument declarations have been reported by checkModule.
  if (!model.spec || !model.argsChecked)
    return failure();
  std::string owner = ("model '" + model.getName() + "'").str();
  auto argNames = llvm::map_range(
      model.getArgs(), [](const ArgDeclAST &arg) { return arg.name; });
  ConstBindings bindings;
  llvm::StringMap<std::vector<double>> perModel;
  llvm::StringSet<> given;
  auto instance = std::make_unique<BodyInstance>();
  bool ok = true;
  for (const ModelArgValue &arg : args) {
    const ArgDeclAST *decl =
        llvm::find_if(model.getArgs(),
                      [&](const ArgDeclAST &d) { return d.name == arg.name; });
    if (decl == model.getArgs().end()) {
      auto diag = emitError(ctx, arg.loc)
                  << "unknown argument '" << arg.name << "' for " << owner;
      if (model.getArgs().empty())
        diag << " (it takes no arguments)";
      else
        diag << " (known: " << llvm::join(argNames, ", ") << ")";
      ok = false;
      continue;
    }
    if (!given.insert(arg.name).second) {
      emitError(ctx, arg.loc) << "argument '" << arg.name << "' is given twice";
      ok = false;
      continue;
    }
    std::string what = "argument '" + arg.name + "' of " + owner;
    if (!arg.perModel.empty()) {
      // Differs between models: a scalar tensor of the body, not a constant.
      std::vector<double> values;
      for (const ConstScalar &v : arg.perModel) {
        auto converted =
            convertScalar(ctx, v, scalarKind(decl->kind), arg.loc, what);
        if (failed(converted)) {
          ok = false;
          break;
        }
        values.push_back(converted->floatValue);
      }
      perModel[arg.name] = std::move(values);
      continue;
    }
    auto value =
        convertScalar(ctx, arg.value, scalarKind(decl->kind), arg.loc, what);
    if (failed(value)) {
      ok = false;
      continue;
    }
    bindings[arg.name] = *value;
  }
  for (const ArgDeclAST &decl : model.getArgs()) {
    auto it = bindings.find(decl.name);
    if (it != bindings.end()) {
      instance->constArgs.emplace_back(decl.name, it->second);
      continue;
    }
    auto varying = perModel.find(decl.name);
    if (varying != perModel.end()) {
      instance->perModelArgs.emplace_back(decl.name, varying->second);
      continue;
    }
    if (given.contains(decl.name))
      continue; // given, with an error
    if (decl.defaultScalar) {
      bindings[decl.name] = *decl.defaultScalar;
      instance->constArgs.emplace_back(decl.name, *decl.defaultScalar);
      continue;
    }
    auto diag = emitError(ctx, useLoc)
                << owner << " needs a value for argument '" << decl.name
                << "' (in the sweep: model = " << model.getName() << "("
                << decl.name << " = ...))";
    attachNote(diag, ctx, decl.loc, "declared here");
    ok = false;
  }
  if (!ok)
    return failure();

  ExpansionState state{*model.spec, model};
  state.nodes = countNodes(model.getBody());
  if (state.nodes > kMaxExpandedNodes) {
    emitError(ctx, model.nameLoc())
        << owner << " is too large (more than " << kMaxExpandedNodes
        << " statements and expressions)";
    return failure();
  }
  instance->body = cloneBody(model.getBody(), bindings);
  BodyChecker checker(ctx, state, *instance, /*depth=*/0);
  if (failed(checker.checkModel()))
    return failure();
  return ModelExpansion{std::move(instance), std::move(state.params),
                        std::move(state.buffers),
                        state.floatType ? state.floatType->type : "f32"};
}
