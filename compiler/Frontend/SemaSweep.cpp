//===- SemaSweep.cpp - checks of the sweep block --------------------------===//
//
// Resolves the sweep's model, evaluates the grid, `models`, the seeds, the
// optimizer and its per-model hyperparameters (SemaOptim.cpp binds them to
// an `optim` of the spec), the data set and the epochs into a SweepConfig.
//
//===----------------------------------------------------------------------===//
#include "compiler/Frontend/Diagnostics.h"
#include "compiler/Frontend/Sema.h"
#include "compiler/Frontend/SemaData.h"
#include "compiler/Frontend/SemaOptim.h"
#include "compiler/Frontend/SemaPrecision.h"
#include "compiler/Frontend/SweepEval.h"

#include "dialects/MBT/IR/ScheduleRules.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/GlobPattern.h"
#include <cmath>
#include <optional>

using namespace mbt;
using llvm::dyn_cast;
using mlir::failure;
using mlir::LogicalResult;
using mlir::success;

namespace {
/// The settings a sweep understands.
const llvm::StringRef kSweepKeys[] = {
    "models", "model",     "seed",       "optim",   "data",     "epochs",
    "grid",   "draw_seed", "fold",       "clip",    "schedule", "no_decay",
    "freeze", "precision", "loss_scale", "rank_by", "init"};

/// The arguments every data set of samples takes (after a data set of
/// files' own, SemaDataSource.cpp).
const llvm::StringRef kDataArgs[] = {"batch",     "shuffle_seed", "folds",
                                     "bootstrap", "validation",   "crop",
                                     "flip"};

std::string join(llvm::ArrayRef<llvm::StringRef> names) {
  return llvm::join(names, ", ");
}

class SweepChecker {
public:
  SweepChecker(mlir::MLIRContext &ctx, SweepAST &sweep,
               llvm::ArrayRef<std::unique_ptr<ModelAST>> models,
               llvm::ArrayRef<std::unique_ptr<OptimizerAST>> optimizers)
      : ctx(ctx), sweep(sweep), models(models), optimizers(optimizers) {}

  LogicalResult check();

private:
  void collectSettings();
  void checkGrid();
  void checkModels();
  void checkModel(SweepEvaluator &eval);
  void checkSeeds(SweepEvaluator &eval);
  void checkOptimizer(SweepEvaluator &eval);
  void checkData(SweepEvaluator &eval);
  void checkDataArgs(SweepEvaluator &eval,
                     llvm::ArrayRef<const ExprAST *> args);
  void checkFolds(SweepEvaluator &eval);
  void checkEpochs(SweepEvaluator &eval);
  void checkClip(SweepEvaluator &eval);
  void checkSchedule(SweepEvaluator &eval);
  void
  checkParamPatterns(llvm::StringRef key,
                     std::vector<std::pair<std::string, Location>> &patterns);
  void checkRankBy();
  void checkPrecision(SweepEvaluator &eval);

  /// The value of setting `key`, or null when it is absent.
  const ExprAST *lookup(llvm::StringRef key) const {
    const SweepSettingAST *setting = settings.lookup(key);
    return setting ? setting->value.get() : nullptr;
  }

  mlir::InFlightDiagnostic error(const Location &loc) {
    ok = false;
    return emitError(ctx, loc);
  }

  mlir::MLIRContext &ctx;
  SweepAST &sweep;
  llvm::ArrayRef<std::unique_ptr<ModelAST>> models;
  llvm::ArrayRef<std::unique_ptr<OptimizerAST>> optimizers;
  llvm::StringMap<const SweepSettingAST *> settings;
  SweepConfig config;
  /// The number of models, once `models` has been checked successfully.
  std::optional<int64_t> numModels;
  /// The grid's axes (name, values), each expanded to one value per model.
  std::vector<std::pair<std::string, ConstValue>> gridAxes;
  /// The number of grid points, when the sweep has a valid grid.
  std::optional<int64_t> gridSize;
  bool ok = true;
};
} // namespace

LogicalResult SweepChecker::check() {
  collectSettings();
  checkGrid();
  checkModels();
  SweepEvaluator eval(ctx, numModels, /*modelsBroken=*/!numModels);
  for (auto &[name, values] : gridAxes)
    eval.define(name, values);
  if (const ExprAST *seed = lookup("draw_seed")) {
    SweepEvaluator plain(ctx, std::nullopt);
    auto value = plain.evaluateInteger(*seed, "draw_seed");
    if (failed(value))
      ok = false;
    else if (*value < 0)
      error(seed->loc()) << "draw_seed must not be negative, got " << *value;
    else
      eval.setDrawSeed(static_cast<uint64_t>(*value));
  }
  checkModel(eval);
  checkSeeds(eval);
  checkOptimizer(eval);
  checkData(eval);
  checkFolds(eval);
  checkEpochs(eval);
  checkClip(eval);
  checkSchedule(eval);
  checkParamPatterns("no_decay", config.noDecay);
  checkParamPatterns("freeze", config.freeze);
  checkRankBy();
  checkPrecision(eval);
  if (const ExprAST *init = lookup("init"))
    ok &= succeeded(
        checkInitCheckpoint(ctx, *init, numModels.value_or(1), config));
  // A schedule scales `lr`, and no_decay zeroes `weight_decay`: the
  // optimizer must have them.
  if (ok && !config.optimizer.empty()) {
    auto requires_ = [&](llvm::StringRef setting, llvm::StringRef hyper) {
      if (const SweepSettingAST *s = settings.lookup(setting))
        if (!llvm::is_contained(config.hyperNames, hyper))
          error(s->loc) << "'" << setting << "' needs an optimizer with a '"
                        << hyper << "' hyperparameter, and '"
                        << config.optimizer << "' has none";
    };
    requires_("schedule", "lr");
    requires_("no_decay", "weight_decay");
  }
  if (!ok)
    return failure();
  sweep.config = std::move(config);
  return success();
}

void SweepChecker::collectSettings() {
  for (const SweepSettingAST &setting : sweep.getSettings()) {
    if (!llvm::is_contained(kSweepKeys, setting.key)) {
      error(setting.loc) << "unknown sweep setting '" << setting.key
                         << "' (known: " << join(kSweepKeys) << ")";
      continue;
    }
    auto [it, inserted] = settings.try_emplace(setting.key, &setting);
    if (!inserted) {
      auto diag = error(setting.loc)
                  << "sweep setting '" << setting.key << "' is given twice";
      attachNote(diag, ctx, it->second->loc, "previous setting is here");
    }
  }
}

/// grid = grid(NAME = VALUES, ...): one model per point of the cartesian
/// product, the first axis varying slowest (as itertools.product). Each
/// NAME then stands, in the sweep's other settings, for its value in every
/// model.
void SweepChecker::checkGrid() {
  const ExprAST *value = lookup("grid");
  if (!value)
    return;
  const auto *call = dyn_cast<CallExprAST>(value);
  if (!call || call->getCallee() != "grid") {
    error(value->loc())
        << "grid must be grid(NAME = VALUES, ...), for "
           "example grid(lr = [0.1, 0.01], momentum = [0, 0.9])";
    return;
  }
  if (call->getArgs().empty()) {
    error(call->loc()) << "grid needs at least one axis";
    return;
  }
  SweepEvaluator eval(ctx, std::nullopt);
  std::vector<std::pair<std::string, std::vector<ConstScalar>>> axes;
  llvm::StringMap<const ArgumentAST *> seen;
  int64_t points = 1;
  bool axesOk = true;
  for (const ArgumentAST &arg : call->getArgs()) {
    if (arg.name.empty()) {
      error(arg.value->loc()) << "grid axes must be named: grid(NAME = VALUES)";
      axesOk = false;
      continue;
    }
    if (arg.name == "models" || llvm::is_contained(kSweepKeys, arg.name)) {
      error(arg.nameLoc) << "grid axis '" << arg.name
                         << "' would hide the sweep setting of that name";
      axesOk = false;
      continue;
    }
    auto [it, inserted] = seen.try_emplace(arg.name, &arg);
    if (!inserted) {
      auto diag = error(arg.nameLoc)
                  << "grid axis '" << arg.name << "' is given twice";
      attachNote(diag, ctx, it->second->nameLoc, "previous axis is here");
      axesOk = false;
      continue;
    }
    auto values = eval.evaluate(*arg.value);
    if (failed(values)) {
      ok = axesOk = false;
      continue;
    }
    if (values->elements.empty()) {
      error(arg.value->loc()) << "grid axis '" << arg.name << "' has no values";
      axesOk = false;
      continue;
    }
    points *= static_cast<int64_t>(values->elements.size());
    if (points > kMaxListLength) {
      error(call->loc()) << "grid has more than " << kMaxListLength
                         << " points";
      return;
    }
    axes.push_back({arg.name, values->elements});
  }
  if (!axesOk)
    return;
  // Expand: axis k repeats each value `stride` times, where stride is the
  // product of the sizes of the axes after it.
  int64_t stride = points;
  for (auto &[name, values] : axes) {
    stride /= static_cast<int64_t>(values.size());
    ConstValue expanded;
    expanded.isList = true;
    for (int64_t m = 0; m < points; ++m)
      expanded.elements.push_back(values[(m / stride) % values.size()]);
    gridAxes.push_back({name, std::move(expanded)});
  }
  gridSize = points;
}

/// models = INT (at least 1); inside the sweep, `models` names this count.
/// With a grid, `models` may be omitted (it is the number of grid points)
/// and otherwise must equal it.
void SweepChecker::checkModels() {
  const ExprAST *value = lookup("models");
  if (!value && gridSize) {
    numModels = *gridSize;
    config.models = *gridSize;
    return;
  }
  if (!value) {
    if (!lookup("grid"))
      error(sweep.loc()) << "sweep has no 'models' setting (the number of "
                            "models to train)";
    return;
  }
  SweepEvaluator eval(ctx, std::nullopt);
  auto n = eval.evaluateInteger(*value, "models");
  if (failed(n)) {
    ok = false;
    return;
  }
  if (*n < 1 || *n > kMaxListLength) {
    error(value->loc()) << "models must be between 1 and " << kMaxListLength
                        << ", got " << *n;
    return;
  }
  if (gridSize && *n != *gridSize) {
    auto diag = error(value->loc())
                << "models = " << *n << " but the grid has " << *gridSize
                << " points (omit 'models' to train one model per point)";
    attachNote(diag, ctx, lookup("grid")->loc(), "grid is here");
    return;
  }
  numModels = *n;
  config.models = *n;
}

/// model = NAME or NAME(args); optional when the spec defines exactly one
/// model. The arguments go to SweepConfig::modelArgs, with which Sema
/// expands the model.
void SweepChecker::checkModel(SweepEvaluator &eval) {
  std::vector<llvm::StringRef> names;
  for (const auto &model : models)
    names.push_back(model->getName());
  const ExprAST *value = lookup("model");
  if (!value) {
    if (models.size() == 1)
      config.model = names.front().str();
    else if (models.empty())
      error(sweep.loc()) << "the spec defines no model for the sweep to train";
    else
      error(sweep.loc()) << "sweep must choose its model with 'model = NAME' "
                            "(the spec defines "
                         << models.size() << " models: " << join(names) << ")";
    return;
  }
  const auto *call = dyn_cast<CallExprAST>(value);
  const auto *var = dyn_cast<VariableExprAST>(value);
  if (!var && !call) {
    error(value->loc()) << "model must name a model of the spec";
    return;
  }
  llvm::StringRef name = call ? call->getCallee() : var->getName();
  if (!llvm::is_contained(names, name)) {
    auto diag = error(value->loc()) << "unknown model '" << name << "'";
    if (names.empty())
      diag << " (the spec defines no model)";
    else
      diag << " (known: " << join(names) << ")";
    return;
  }
  config.model = name.str();
  config.modelLoc = value->loc();
  const auto &model = *llvm::find_if(
      models, [&](const auto &m) { return m->getName() == name; });
  if (call &&
      failed(evaluateModelArgs(ctx, *model, *call, eval, config.modelArgs)))
    ok = false;
}

/// seed = LIST of `models` non-negative integers; default 0, 1, ..., N-1.
void SweepChecker::checkSeeds(SweepEvaluator &eval) {
  const ExprAST *value = lookup("seed");
  if (!value) {
    for (int64_t i = 0; i < config.models; ++i)
      config.seeds.push_back(i);
    return;
  }
  auto seeds = eval.evaluate(*value);
  if (failed(seeds)) {
    ok = false;
    return;
  }
  if (!seeds->isList) {
    error(value->loc()) << "seed must be a list of one integer per model, "
                           "such as range(models)";
    return;
  }
  for (const ConstScalar &seed : seeds->elements) {
    if (seed.kind != ConstScalar::Int || seed.intValue < 0) {
      error(value->loc()) << "seeds must be non-negative integers, got "
                          << seed.str();
      return;
    }
    config.seeds.push_back(seed.intValue);
  }
  if (numModels && static_cast<int64_t>(config.seeds.size()) != *numModels)
    error(value->loc()) << "seed has " << config.seeds.size() << " values for "
                        << *numModels << " models";
}

/// The name in `name` or `name(args...)`: optimizers and data sets may be
/// written bare when every argument has its default.
static std::optional<llvm::StringRef> calleeName(const ExprAST *value) {
  if (const auto *call = dyn_cast<CallExprAST>(value))
    return call->getCallee();
  if (const auto *var = dyn_cast<VariableExprAST>(value))
    return var->getName();
  return std::nullopt;
}

/// optim = NAME | NAME(args): an optimizer of the spec (stdlib/optim.mbt's
/// are always there); each hyperparameter a number or one per model, each
/// flag true or false; absent ones take their defaults.
void SweepChecker::checkOptimizer(SweepEvaluator &eval) {
  const ExprAST *value = lookup("optim");
  if (!value) {
    error(sweep.loc()) << "sweep has no 'optim' setting (for example "
                          "optim = sgd(lr = 0.1))";
    return;
  }
  const auto *call = dyn_cast<CallExprAST>(value);
  std::optional<llvm::StringRef> callee = calleeName(value);
  if (!callee) {
    error(value->loc()) << "optim must be an optimizer such as "
                           "adam(lr = 1e-3)";
    return;
  }
  llvm::StringRef name = *callee;
  const OptimizerAST *optimizer = nullptr;
  for (const auto &o : optimizers)
    if (o->getName() == name && !optimizer)
      optimizer = o.get(); // the first; a redefinition has been reported
  if (!optimizer) {
    std::vector<llvm::StringRef> known;
    for (const auto &o : optimizers)
      known.push_back(o->getName());
    error(value->loc()) << "unknown optimizer '" << name
                        << "' (known: " << join(known) << ")";
    return;
  }
  if (!bindOptimizer(ctx, *optimizer, call, value->loc(), eval, config))
    ok = false;
}

/// data = fashion_mnist | fashion_mnist(batch = N, shuffle_seed = S, ...)
/// | fortunes(batching = dynamic, token_budget = N, ...) (SemaData.cpp)
/// | npz(...) | npy(...) | csv(...) | image_folder(...) | safetensors(...)
/// (SemaDataSource.cpp)
void SweepChecker::checkData(SweepEvaluator &eval) {
  const ExprAST *value = lookup("data");
  if (!value)
    return; // fashion_mnist with the default batch and shuffle seed
  const auto *call = dyn_cast<CallExprAST>(value);
  std::optional<llvm::StringRef> callee = calleeName(value);
  if (!callee) {
    error(value->loc()) << "data must be a data set such as "
                           "fashion_mnist(batch = 64)";
    return;
  }
  std::optional<mlir::mbt::DataSet> data = mlir::mbt::symbolizeDataSet(*callee);
  if (!data) {
    std::vector<llvm::StringRef> known;
    for (uint32_t i = 0; i <= mlir::mbt::getMaxEnumValForDataSet(); ++i)
      known.push_back(
          mlir::mbt::stringifyDataSet(*mlir::mbt::symbolizeDataSet(i)));
    error(value->loc()) << "unknown data set '" << *callee
                        << "' (known: " << join(known) << ")";
    return;
  }
  config.data = *data;
  config.dataLoc = value->loc();
  if (mlir::mbt::isSequenceDataSet(*data)) {
    ok &= succeeded(checkSequenceData(ctx, call, eval, config));
    return;
  }
  bool files = mlir::mbt::isFileDataSet(*data);
  if (!call) {
    if (files)
      error(value->loc()) << "data set '" << *callee
                          << "' needs its files: " << *callee
                          << "(...) (docs/data.md)";
    return;
  }
  llvm::SmallVector<llvm::StringRef> params = dataSourceParams(*data);
  size_t common = params.size();
  params.append(std::begin(kDataArgs), std::end(kDataArgs));
  auto bound = bindArguments(ctx, *call, params,
                             ("data set '" + *callee + "'").str(), "argument");
  if (failed(bound)) {
    ok = false;
    return;
  }
  if (files && failed(checkDataSource(ctx, *call, *bound, eval, config)))
    ok = false;
  llvm::ArrayRef<const ExprAST *> args =
      llvm::ArrayRef(*bound).drop_front(common);
  checkDataArgs(eval, args);
}

/// The arguments every data set of samples takes: batch, shuffle_seed,
/// folds, bootstrap, validation, crop, flip (kDataArgs).
void SweepChecker::checkDataArgs(SweepEvaluator &eval,
                                 llvm::ArrayRef<const ExprAST *> args) {
  if (const ExprAST *batch = args[0]) {
    auto n = eval.evaluateInteger(*batch, "batch");
    if (failed(n))
      ok = false;
    else if (*n < 1)
      error(batch->loc()) << "batch must be a positive integer, got " << *n;
    else
      config.batchSize = *n;
  }
  if (const ExprAST *seed = args[1]) {
    auto n = eval.evaluateInteger(*seed, "shuffle_seed");
    if (failed(n))
      ok = false;
    else if (*n < 0)
      error(seed->loc()) << "shuffle_seed must be non-negative, got " << *n;
    else
      config.shuffleSeed = *n;
  }
  const ExprAST *folds = args[2], *bootstrap = args[3];
  if (folds && bootstrap) {
    error(bootstrap->loc()) << "a model cannot both hold out a fold and "
                               "train on a bootstrap resample";
    return;
  }
  if (folds) {
    auto n = eval.evaluateInteger(*folds, "folds");
    if (failed(n))
      ok = false;
    else if (*n < 2 || *n > 1000)
      error(folds->loc()) << "folds must be between 2 and 1000, got " << *n;
    else {
      config.routing = mlir::mbt::Routing::kfold;
      config.folds = *n;
    }
  }
  if (const ExprAST *validation = args[4]) {
    auto v = eval.evaluateNumber(*validation, "validation");
    if (failed(v))
      ok = false;
    else if (folds)
      error(validation->loc())
          << "k-fold routing validates each model on its held-out fold; "
             "give either folds or validation";
    else if (!(v->floatValue > 0 && v->floatValue < 1))
      error(validation->loc())
          << "validation must be a fraction between 0 and 1 (exclusive), got "
          << v->str();
    else
      config.validation = v->floatValue;
  }
  if (const ExprAST *crop = args[5]) {
    auto n = eval.evaluateInteger(*crop, "crop");
    if (failed(n))
      ok = false;
    else if (*n < 0 || *n > 64)
      error(crop->loc()) << "crop must be the padding of a random crop, "
                            "between 0 and 64, got "
                         << *n;
    else
      config.crop = *n;
  }
  if (const ExprAST *flip = args[6]) {
    const auto *var = llvm::dyn_cast<VariableExprAST>(flip);
    if (!var || (var->getName() != "true" && var->getName() != "false"))
      error(flip->loc()) << "flip must be true or false";
    else
      config.flip = var->getName() == "true";
  }
  if (bootstrap) {
    auto n = eval.evaluateInteger(*bootstrap, "bootstrap");
    if (failed(n))
      ok = false;
    else if (*n != 0 && *n != 1)
      error(bootstrap->loc()) << "bootstrap must be 0 or 1, got " << *n;
    else if (*n == 1)
      config.routing = mlir::mbt::Routing::bootstrap;
  }
}

/// fold = LIST: the fold each model holds out under k-fold routing;
/// default model m holds out fold m mod folds.
void SweepChecker::checkFolds(SweepEvaluator &eval) {
  const ExprAST *value = lookup("fold");
  if (config.routing != mlir::mbt::Routing::kfold) {
    if (value)
      error(value->loc()) << "'fold' needs k-fold data, for example "
                             "data = fashion_mnist(folds = 5)";
    return;
  }
  if (!value) {
    for (int64_t m = 0; m < config.models; ++m)
      config.fold.push_back(m % config.folds);
    return;
  }
  auto folds = eval.evaluatePerModel(*value, "fold");
  if (failed(folds)) {
    ok = false;
    return;
  }
  for (double f : *folds) {
    if (f != std::floor(f) || f < 0 || f >= static_cast<double>(config.folds)) {
      error(value->loc()) << "fold indices must be integers in [0, "
                          << config.folds << "), got " << formatNumber(f);
      return;
    }
    config.fold.push_back(static_cast<int64_t>(f));
  }
}

/// epochs = INT (at least 1); default 1.
void SweepChecker::checkEpochs(SweepEvaluator &eval) {
  const ExprAST *value = lookup("epochs");
  if (!value)
    return;
  auto n = eval.evaluateInteger(*value, "epochs");
  if (failed(n))
    ok = false;
  else if (*n < 1)
    error(value->loc()) << "epochs must be a positive integer, got " << *n;
  else
    config.epochs = *n;
}

/// clip = MAX_NORM: each model's gradient is scaled so its global norm
/// (over all its parameters) is at most MAX_NORM, a positive number or one
/// per model; default no clipping.
void SweepChecker::checkClip(SweepEvaluator &eval) {
  const ExprAST *value = lookup("clip");
  if (!value)
    return;
  auto values = eval.evaluatePerModel(*value, "clip");
  if (failed(values)) {
    ok = false;
    return;
  }
  for (double v : *values)
    if (!(v > 0)) {
      error(value->loc()) << "clip must be a positive gradient norm, got "
                          << formatNumber(v);
      return;
    }
  config.clipNorm = std::move(*values);
}

/// schedule = RULE(args): a learning-rate schedule of ScheduleRules.h,
/// each parameter a number or one per model; default none (constant).
void SweepChecker::checkSchedule(SweepEvaluator &eval) {
  const ExprAST *value = lookup("schedule");
  if (!value)
    return;
  const auto *call = dyn_cast<CallExprAST>(value);
  std::optional<llvm::StringRef> callee = calleeName(value);
  const mlir::mbt::ScheduleRule *rule =
      callee ? mlir::mbt::lookupScheduleRule(*callee) : nullptr;
  if (!rule) {
    std::vector<llvm::StringRef> known;
    for (const auto &r : mlir::mbt::allScheduleRules())
      known.push_back(r.name());
    auto diag = error(value->loc());
    if (callee)
      diag << "unknown schedule '" << *callee << "'";
    else
      diag << "schedule must be a schedule such as cosine(total = 1000)";
    diag << " (known: " << join(known) << ")";
    return;
  }
  std::vector<llvm::StringRef> params;
  for (const auto &param : rule->params)
    params.push_back(param.name);
  llvm::SmallVector<const ExprAST *> bound(params.size(), nullptr);
  if (call) {
    auto args =
        bindArguments(ctx, *call, params,
                      ("schedule '" + rule->name() + "'").str(), "parameter");
    if (failed(args)) {
      ok = false;
      return;
    }
    bound = *args;
  }
  std::vector<std::vector<double>> table;
  bool valid = true;
  for (auto [param, arg] : llvm::zip(rule->params, bound)) {
    std::string what =
        ("parameter '" + param.name + "' of schedule '" + rule->name() + "'")
            .str();
    if (!arg && !param.defaultValue) {
      error(value->loc()) << "schedule '" << rule->name() << "' needs "
                          << "parameter '" << param.name << "'";
      valid = false;
      continue;
    }
    std::vector<double> values(config.models, param.defaultValue.value_or(0.0));
    if (arg) {
      auto perModel = eval.evaluatePerModel(*arg, what);
      if (failed(perModel)) {
        ok = false;
        valid = false;
        continue;
      }
      values = std::move(*perModel);
      for (double v : values) {
        bool bad = param.isSteps ? (v < 1 || v != std::floor(v)) : v < 0;
        if (bad) {
          error(arg->loc()) << what << " must be "
                            << (param.isSteps ? "a positive whole number of "
                                                "steps"
                                              : "non-negative")
                            << ", got " << formatNumber(v);
          valid = false;
          break;
        }
      }
    }
    table.push_back(std::move(values));
  }
  if (!valid)
    return;
  // Rules whose formulas need more than non-negative parameters.
  for (int64_t m = 0; m < config.models; ++m) {
    auto at = [&](size_t j) { return table[j][m]; };
    std::string problem;
    using mlir::mbt::Schedule;
    Schedule kind = rule->kind;
    if ((kind == Schedule::step && at(1) <= 0) ||
        (kind == Schedule::exponential && at(0) <= 0))
      problem = "gamma must be positive";
    else if ((kind == Schedule::cosine || kind == Schedule::linear) &&
             (at(1) > at(0) || at(2) > 1))
      problem = "warmup must not exceed total, and the final factor must be "
                "at most 1";
    else if (kind == Schedule::one_cycle &&
             (at(1) * at(0) - 1 <= 0 || at(1) >= 1 || at(2) <= 0 || at(3) <= 0))
      problem = "pct_start * total must exceed 1 step, pct_start be below "
                "1, and the div factors be positive";
    if (!problem.empty()) {
      error(value->loc()) << "schedule '" << rule->name() << "' for model " << m
                          << ": " << problem;
      return;
    }
  }
  config.schedule = rule->kind;
  config.scheduleParams = std::move(table);
}

/// precision and loss_scale (SemaPrecision.cpp).
void SweepChecker::checkPrecision(SweepEvaluator &eval) {
  if (!checkPrecisionSettings(ctx, lookup("precision"), lookup("loss_scale"),
                              eval, config))
    ok = false;
}

/// rank_by = OUTPUT: the loss or a metric of the model (checked against
/// the model once it is expanded, SemaDecl.cpp), by name or in quotes.
void SweepChecker::checkRankBy() {
  const ExprAST *value = lookup("rank_by");
  if (!value)
    return;
  if (const auto *var = dyn_cast<VariableExprAST>(value))
    config.rankBy = var->getName().str();
  else if (const auto *text = dyn_cast<StringExprAST>(value))
    config.rankBy = text->getValue().str();
  else
    error(value->loc()) << "rank_by must name the loss or a metric of the "
                           "model, such as rank_by = acc";
  config.rankByLoc = value->loc();
}

/// no_decay (or freeze) = "PATTERN" or ["PATTERN", ...]: parameters whose
/// names match a glob pattern (`*` any text, `?` one character, `[...]` a
/// set) get no weight decay (or do not train). Sema checks each against
/// the model's parameters once it is expanded (SemaDecl.cpp).
void SweepChecker::checkParamPatterns(
    llvm::StringRef key,
    std::vector<std::pair<std::string, Location>> &patterns) {
  const ExprAST *value = lookup(key);
  if (!value)
    return;
  for (const ExprAST *item : listItems(*value)) {
    const auto *string = dyn_cast<StringExprAST>(item);
    if (!string) {
      error(item->loc()) << key
                         << " must list parameter name patterns in quotes, "
                            "such as [\"*.b\", \"norm.*\"]";
      return;
    }
    if (auto pattern = llvm::GlobPattern::create(string->getValue());
        !pattern) {
      error(item->loc()) << "invalid pattern '" << string->getValue()
                         << "': " << llvm::toString(pattern.takeError());
      return;
    }
    patterns.emplace_back(string->getValue().str(), item->loc());
  }
}

LogicalResult
mbt::checkSweep(mlir::MLIRContext &ctx, SweepAST &sweep,
                llvm::ArrayRef<std::unique_ptr<ModelAST>> models,
                llvm::ArrayRef<std::unique_ptr<OptimizerAST>> optimizers) {
  return SweepChecker(ctx, sweep, models, optimizers).check();
}
