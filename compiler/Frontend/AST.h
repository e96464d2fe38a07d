//===- AST.h - abstract syntax tree of the mbt language ---------*- C++ -*-===//
//
// The AST of a spec: imports, functions (layers that declare their own
// parameters), models (declarations and assignments over tensor expressions)
// and a sweep (settings whose values are constant expressions). As in the
// Toy tutorial, nodes carry a kind and implement classof for LLVM RTTI.
//
// Sema expands every model for its argument values into a BodyInstance (a
// copy of its body with the constant arguments substituted), and every call
// of a function into a BodyInstance of the callee's body hung on the call;
// it annotates these copies in place (expression types, resolved shapes and
// initializers, the branch each `if` takes) and the sweep with its evaluated
// SweepConfig. MLIRGen reads only checked instances.
//
//===----------------------------------------------------------------------===//
#ifndef MBT_COMPILER_FRONTEND_AST_H
#define MBT_COMPILER_FRONTEND_AST_H

#include "compiler/Frontend/ASTExpr.h"
#include "dialects/MBT/IR/LossScaleRules.h"
#include "dialects/MBT/IR/MBTEnums.h"
#include "mbt/common/Manifest.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Casting.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mbt {

//===----------------------------------------------------------------------===//
// Model statements
//===----------------------------------------------------------------------===//

/// A declared type, like `f32[784, 128]`, `class[10]` or `f32[dim(x), out]`.
struct TypeAST {
  std::string elementType;
  Location loc;
  /// The sizes as written: constant integer expressions.
  ExprASTList dimExprs;
  /// Their values, set by Sema.
  llvm::SmallVector<int64_t, 4> dims;
};

/// A parameter initializer resolved by Sema: its kind and its float
/// arguments in the order of its rule (InitRules.h), as #mbt.init holds them.
struct ResolvedInit {
  mlir::mbt::InitKind kind;
  llvm::SmallVector<double, 2> args;
};

/// Base class of the statements of a model body.
class StmtAST {
public:
  enum StmtASTKind {
    Stmt_Input,
    Stmt_Target,
    Stmt_Param,
    Stmt_Assign,
    Stmt_Return,
    Stmt_If,
    Stmt_Assert,
    Stmt_State
  };

  StmtAST(StmtASTKind kind, Location location, llvm::StringRef name,
          Location nameLoc)
      : kind(kind), location(std::move(location)), name(name),
        nameLocation(std::move(nameLoc)) {}
  virtual ~StmtAST() = default;

  StmtASTKind getKind() const { return kind; }
  /// Where the statement starts.
  const Location &loc() const { return location; }
  /// The name the statement defines (empty for `return` and `if`).
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
  /// A target of values to regress (f32[K]), not of classes (class[C]) or
  /// of next tokens (tokens[V]).
  bool isValueTarget() const {
    return !isInput() && type.elementType != "class" &&
           type.elementType != "tokens";
  }
  const TypeAST &getType() const { return type; }
  TypeAST &getType() { return type; }

  static bool classof(const StmtAST *s) {
    return s->getKind() == Stmt_Input || s->getKind() == Stmt_Target;
  }

private:
  TypeAST type;
};

/// `param NAME: TYPE = INIT`, or `buffer NAME: TYPE = INIT`: a per-model
/// tensor that is not trained but that the train step may update (a
/// batch_norm's running statistics).
class ParamDeclAST : public StmtAST {
public:
  ParamDeclAST(Location loc, llvm::StringRef name, Location nameLoc,
               TypeAST type, std::unique_ptr<ExprAST> init, bool buffer = false)
      : StmtAST(Stmt_Param, std::move(loc), name, std::move(nameLoc)),
        type(std::move(type)), init(std::move(init)), buffer(buffer) {}

  const TypeAST &getType() const { return type; }
  TypeAST &getType() { return type; }
  ExprAST *getInit() const { return init.get(); }
  /// Whether this declares a buffer rather than a trained parameter.
  bool isBuffer() const { return buffer; }

  /// Set by Sema.
  std::optional<ResolvedInit> resolvedInit;

  static bool classof(const StmtAST *s) { return s->getKind() == Stmt_Param; }

private:
  TypeAST type;
  std::unique_ptr<ExprAST> init;
  bool buffer;
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

using StmtASTList = std::vector<std::unique_ptr<StmtAST>>;

/// `return EXPR`: the value of a function, its last statement.
class ReturnStmtAST : public StmtAST {
public:
  ReturnStmtAST(Location loc, std::unique_ptr<ExprAST> value)
      : StmtAST(Stmt_Return, loc, "", loc), value(std::move(value)) {}

  ExprAST *getValue() const { return value.get(); }

  static bool classof(const StmtAST *s) { return s->getKind() == Stmt_Return; }

private:
  std::unique_ptr<ExprAST> value;
};

/// `if COND { ... } else { ... }`, decided when the body is expanded: COND
/// is a constant condition (constant arguments, comparisons, and/or/not),
/// the branch it chooses is checked and generated, and the names it defines
/// stay visible after the `if`; the other branch is not checked. `else if`
/// is an else branch holding one IfStmtAST.
class IfStmtAST : public StmtAST {
public:
  IfStmtAST(Location loc, std::unique_ptr<ExprAST> condition,
            StmtASTList thenBody, StmtASTList elseBody)
      : StmtAST(Stmt_If, loc, "", loc), condition(std::move(condition)),
        thenBody(std::move(thenBody)), elseBody(std::move(elseBody)) {}

  ExprAST *getCondition() const { return condition.get(); }
  llvm::ArrayRef<std::unique_ptr<StmtAST>> getThen() const { return thenBody; }
  llvm::ArrayRef<std::unique_ptr<StmtAST>> getElse() const { return elseBody; }

  /// Set by Sema: the branch the condition chose, if it was decided.
  enum Branch { Undecided, Then, Else };
  Branch taken = Undecided;
  /// The statements of the branch taken (none while undecided).
  llvm::ArrayRef<std::unique_ptr<StmtAST>> getTaken() const {
    if (taken == Then)
      return thenBody;
    if (taken == Else)
      return elseBody;
    return {};
  }

  static bool classof(const StmtAST *s) { return s->getKind() == Stmt_If; }

private:
  std::unique_ptr<ExprAST> condition;
  StmtASTList thenBody, elseBody;
};

/// `assert COND, "message"`: an error with the message, at expansion, when
/// the constant condition is false (a layer rejecting its arguments).
class AssertStmtAST : public StmtAST {
public:
  AssertStmtAST(Location loc, std::unique_ptr<ExprAST> condition,
                std::string message)
      : StmtAST(Stmt_Assert, loc, "", loc), condition(std::move(condition)),
        message(std::move(message)) {}

  ExprAST *getCondition() const { return condition.get(); }
  llvm::StringRef getMessage() const { return message; }

  static bool classof(const StmtAST *s) { return s->getKind() == Stmt_Assert; }

private:
  std::unique_ptr<ExprAST> condition;
  std::string message;
};

/// `state NAME` in an optimizer: one value per parameter element, 0 before
/// the first step.
class StateDeclAST : public StmtAST {
public:
  StateDeclAST(Location loc, llvm::StringRef name, Location nameLoc)
      : StmtAST(Stmt_State, std::move(loc), name, std::move(nameLoc)) {}
  static bool classof(const StmtAST *s) { return s->getKind() == Stmt_State; }
};

//===----------------------------------------------------------------------===//
// Functions, models and their expansion
//===----------------------------------------------------------------------===//

/// A declared argument of a function or a model: `x` (a tensor), `out: int`,
/// `rate: float = 0.1`, `bias = true` (the type follows from the default).
struct ArgDeclAST {
  enum Kind { Tensor, Int, Float, Bool };

  std::string name;
  Location loc;
  /// The type as written ("int", "float", "bool"), or empty.
  std::string typeName;
  Location typeLoc;
  std::unique_ptr<ExprAST> defaultValue;

  /// Set by Sema: the kind, and the value of the default if there is one.
  Kind kind = Tensor;
  std::optional<ConstScalar> defaultScalar;
};

/// What functions, models and optimizers declare alike: a name, arguments
/// and a body of statements.
class BodyDeclAST {
public:
  BodyDeclAST(Location loc, llvm::StringRef name, Location nameLoc,
              std::vector<ArgDeclAST> args, StmtASTList body)
      : location(std::move(loc)), name(name), nameLocation(std::move(nameLoc)),
        args(std::move(args)), body(std::move(body)) {}

  const Location &loc() const { return location; }
  llvm::StringRef getName() const { return name; }
  const Location &nameLoc() const { return nameLocation; }
  llvm::ArrayRef<ArgDeclAST> getArgs() const { return args; }
  std::vector<ArgDeclAST> &getArgs() { return args; }
  llvm::ArrayRef<std::unique_ptr<StmtAST>> getBody() const { return body; }

private:
  Location location;
  std::string name;
  Location nameLocation;
  std::vector<ArgDeclAST> args;
  StmtASTList body;
};

/// `fn NAME(args) { body }`: a layer that declares its own parameters.
/// Every call expands the body with its own copy of them.
class FunctionAST : public BodyDeclAST {
public:
  using BodyDeclAST::BodyDeclAST;

  /// Set by Sema: whether the declaration is sound enough to expand (its
  /// arguments and defaults check, it ends with `return`, no recursion).
  bool callable = false;
};

/// A body expanded for one set of argument values: a model's, or a
/// function's at one call site. The statements are copies of the source's
/// with every constant argument replaced by its value (a number, or `true`
/// / `false`); Sema annotates them.
struct BodyInstance {
  /// The function called, or null for a model.
  const FunctionAST *function = nullptr;
  /// The prefix of the parameter names: "" for a model, "fc1" for a call
  /// `fc1 = linear(...)` in the model, "enc.fc1" for one in a call `enc`.
  std::string path;
  /// The constant arguments and their values, in declaration order.
  std::vector<std::pair<std::string, ConstScalar>> constArgs;
  /// A model's arguments that differ between the models of the sweep, with
  /// one value per model: in the body they are scalar tensors.
  std::vector<std::pair<std::string, std::vector<double>>> perModelArgs;
  /// The tensor arguments: the caller's expressions, in declaration order.
  std::vector<std::pair<std::string, const ExprAST *>> tensorArgs;
  StmtASTList body;
};

/// A trained parameter of an expanded model, named by its path
/// (`w1`, `fc1.w`, `encoder.fc1.w`).
struct FlatParam {
  std::string name;
  const ParamDeclAST *decl;
};

class ModuleAST;

/// `model NAME { ... }` or `model NAME(args) { ... }`.
class ModelAST : public BodyDeclAST {
public:
  using BodyDeclAST::BodyDeclAST;

  /// Set by Sema: the spec the model belongs to (for its functions), and
  /// whether the argument declarations check.
  const ModuleAST *spec = nullptr;
  bool argsChecked = false;
  /// Set by Sema when the model is expanded for its argument values (by
  /// the sweep's `model = NAME(args)`, or with the defaults): the checked
  /// body and every trained parameter, in the order of the func arguments.
  /// MLIRGen generates the models that have an instance.
  std::unique_ptr<BodyInstance> instance;
  std::vector<FlatParam> params;
  /// Its buffers (`buffer NAME: ...`), in the order of the func arguments
  /// after the parameters.
  std::vector<FlatParam> buffers;
  /// The float type the expanded model computes in ("f32" or "f64"): its
  /// input's, which every parameter shares.
  std::string floatType = "f32";
  /// Set by Sema when an expansion was tried and reported errors.
  bool expansionFailed = false;
};

/// `optim NAME(args) { body }`: an update rule. Numeric arguments are
/// hyperparameters (one value per model); `bool` arguments are flags that
/// choose code with `if` and must agree between the models.
class OptimizerAST : public BodyDeclAST {
public:
  using BodyDeclAST::BodyDeclAST;

  /// Set by Sema: whether the declaration checks (its arguments, and its
  /// body with the flags' defaults).
  bool checked = false;
  /// Whether it comes from the standard optimizers every spec with a sweep
  /// imports without asking (the AST dump leaves those out).
  bool implicitlyImported = false;
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

/// A value the sweep gives a model argument: `hidden = 64` in
/// `model = mlp(hidden = 64)`, or one value per model, `gain = [0.5, 1.0]`
/// (a list or a grid axis whose values differ).
struct ModelArgValue {
  std::string name;
  Location loc;
  ConstScalar value;
  /// One value per model when they differ (then `value` is unused).
  std::vector<ConstScalar> perModel;
};

/// The evaluated sweep: one value per model for every per-model setting.
struct SweepConfig {
  std::string model;
  /// The arguments of `model = NAME(args)`; Sema expands the model with
  /// them (the other arguments take their defaults).
  std::vector<ModelArgValue> modelArgs;
  /// Where the sweep names its model (the sweep's location if it does not).
  Location modelLoc;
  int64_t models = 0;
  std::string optimizer;
  /// The optimizer's flags (its `bool` arguments), in declaration order.
  std::vector<std::pair<std::string, bool>> optimizerFlags;
  /// The optimizer's hyperparameters (its numeric arguments), in
  /// declaration order, and one value per model for each.
  std::vector<std::string> hyperNames;
  std::vector<std::vector<double>> hyper;
  std::vector<int64_t> seeds;
  mlir::mbt::DataSet data = mlir::mbt::DataSet::fashion_mnist;
  /// The output the leaderboard ranks by (the loss or a metric; empty: the
  /// last accuracy, else the loss), and where the sweep says so.
  std::string rankBy;
  Location rankByLoc;
  /// The files of the user's own data (mlir::mbt::isFileDataSet(data)).
  ::mbt::DataSource source;
  /// init = checkpoint(...): the files the models start from (one for all,
  /// or one per model; empty: the spec's initializers), the parameters
  /// stored transposed in them, the file's names of those named otherwise
  /// there (spec name -> file name), and whether a file may lack
  /// parameters (which keep their initializers) and hold others (ignored).
  std::vector<std::string> initFiles;
  std::vector<std::string> initTranspose;
  std::map<std::string, std::string> initRename;
  bool initPartial = false;
  /// Where the sweep chooses its data set (unset without a `data` setting).
  Location dataLoc;
  int64_t batchSize = 64;
  /// A sequence data set's batching (LengthBatching.h): the runtime's
  /// strategy (none for other data), the padded tokens a step may hold,
  /// the samples sorted together, and the cut of longer samples (0: none).
  std::optional<mlir::mbt::Batching> batching;
  int64_t tokenBudget = 8192;
  int64_t window = 1024;
  int64_t maxLength = 0;
  int64_t epochs = 1;
  int64_t shuffleSeed = 0;
  /// Which samples each model trains on.
  mlir::mbt::Routing routing = mlir::mbt::Routing::shared;
  /// The fraction of the training data held out as a validation split
  /// (0: none); not with kfold, which validates on the held-out folds.
  double validation = 0;
  /// Training-time augmentation of image inputs: a random crop of the image
  /// padded by `crop` zeros on each side (0: none), and a random
  /// horizontal flip. Drawn per model from its seed.
  int64_t crop = 0;
  bool flip = false;
  /// The format of the model's products (mixed precision), or none for
  /// the model's own float type.
  std::optional<mlir::mbt::Precision> precision;
  Location precisionLoc;
  /// Under f16: the settings of each model's dynamic loss scale.
  std::optional<mlir::mbt::LossScaleSettings> lossScale;
  /// kfold: the number of folds and each model's held-out fold.
  int64_t folds = 0;
  std::vector<int64_t> fold;
  /// Each model's gradient-norm bound; empty without clipping.
  std::vector<double> clipNorm;
  /// The learning-rate schedule (none: constant) and, per parameter of it
  /// in the rule's order (ScheduleRules.h), one value per model.
  std::optional<mlir::mbt::Schedule> schedule;
  std::vector<std::vector<double>> scheduleParams;
  /// Glob patterns of parameter names that get no weight decay, and of
  /// those that do not train (`freeze`), with the location of each (to
  /// report one that matches no parameter).
  std::vector<std::pair<std::string, Location>> noDecay, freeze;
};

/// `sweep { ... }`.
class SweepAST {
public:
  SweepAST(Location loc, std::vector<SweepSettingAST> settings)
      : location(std::move(loc)), settings(std::move(settings)) {}

  const Location &loc() const { return location; }
  llvm::ArrayRef<SweepSettingAST> getSettings() const { return settings; }
  /// Replaces the setting of the same key, or adds it (a setting given
  /// from outside the spec: mbtc --set, the Python module's settings=).
  void overrideSetting(SweepSettingAST setting) {
    for (SweepSettingAST &existing : settings)
      if (existing.key == setting.key) {
        existing = std::move(setting);
        return;
      }
    settings.push_back(std::move(setting));
  }

  /// Set by Sema.
  std::optional<SweepConfig> config;

private:
  Location location;
  std::vector<SweepSettingAST> settings;
};

/// `import "nn"` (a module of the standard library) or `import "path.mbt"`
/// (a file, relative to the importing one).
struct ImportAST {
  Location loc;
  std::string path;
  /// The standard optimizers' import, which the spec does not write.
  bool implicit = false;
};

/// A whole spec: the main file and, merged in, the files it imports.
class ModuleAST {
public:
  ModuleAST(std::vector<ImportAST> imports,
            std::vector<std::unique_ptr<FunctionAST>> functions,
            std::vector<std::unique_ptr<ModelAST>> models,
            std::vector<std::unique_ptr<OptimizerAST>> optimizers,
            std::vector<std::unique_ptr<SweepAST>> sweeps)
      : imports(std::move(imports)), functions(std::move(functions)),
        models(std::move(models)), optimizers(std::move(optimizers)),
        sweeps(std::move(sweeps)) {}

  /// The imports of the main file (those of imported files are resolved
  /// when they are merged).
  llvm::ArrayRef<ImportAST> getImports() const { return imports; }
  llvm::ArrayRef<std::unique_ptr<FunctionAST>> getFunctions() const {
    return functions;
  }
  llvm::ArrayRef<std::unique_ptr<ModelAST>> getModels() const { return models; }
  llvm::ArrayRef<std::unique_ptr<OptimizerAST>> getOptimizers() const {
    return optimizers;
  }
  llvm::ArrayRef<std::unique_ptr<SweepAST>> getSweeps() const { return sweeps; }
  void markOptimizersImplicit() {
    for (auto &optimizer : optimizers)
      optimizer->implicitlyImported = true;
  }
  /// The optimizer named `name`, or null.
  const OptimizerAST *lookupOptimizer(llvm::StringRef name) const {
    for (const auto &optimizer : optimizers)
      if (optimizer->getName() == name)
        return optimizer.get();
    return nullptr;
  }
  /// The sweep, or null when the spec has none.
  SweepAST *getSweep() const {
    return sweeps.empty() ? nullptr : sweeps.front().get();
  }

  /// Moves the functions, models and optimizers of an imported file into
  /// this spec,
  /// before the ones already there: a definition that clashes with an
  /// imported one is the redefinition.
  void merge(ModuleAST &&imported) {
    functions.insert(functions.begin(),
                     std::make_move_iterator(imported.functions.begin()),
                     std::make_move_iterator(imported.functions.end()));
    models.insert(models.begin(),
                  std::make_move_iterator(imported.models.begin()),
                  std::make_move_iterator(imported.models.end()));
    optimizers.insert(optimizers.begin(),
                      std::make_move_iterator(imported.optimizers.begin()),
                      std::make_move_iterator(imported.optimizers.end()));
    imported.functions.clear();
    imported.models.clear();
    imported.optimizers.clear();
  }

private:
  std::vector<ImportAST> imports;
  std::vector<std::unique_ptr<FunctionAST>> functions;
  std::vector<std::unique_ptr<ModelAST>> models;
  std::vector<std::unique_ptr<OptimizerAST>> optimizers;
  std::vector<std::unique_ptr<SweepAST>> sweeps;
};

} // namespace mbt

#endif // MBT_COMPILER_FRONTEND_AST_H
