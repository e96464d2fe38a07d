//===- MBTOps.cpp - verifiers and builders of the mbt ops -----------------===//
#include "dialects/MBT/IR/MBTOps.h"
#include "dialects/MBT/IR/LossScaleRules.h"
#include "dialects/MBT/IR/MBTShapes.h"
#include "dialects/MBT/IR/ScheduleRules.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

#include "llvm/Support/GlobPattern.h"

using namespace mlir;
using namespace mlir::mbt;

llvm::SmallVector<int64_t> mlir::mbt::nonUnitDims(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> dims;
  for (int64_t d : shape)
    if (d != 1)
      dims.push_back(d);
  return dims;
}

bool mlir::mbt::reshapeKeepsDynamicPrefix(ArrayRef<int64_t> in,
                                          ArrayRef<int64_t> out) {
  auto staticFrom = [](ArrayRef<int64_t> shape) {
    size_t p = 0;
    for (size_t d = 0; d < shape.size(); ++d)
      if (ShapedType::isDynamic(shape[d]))
        p = d + 1;
    return p;
  };
  size_t p = staticFrom(in), q = staticFrom(out);
  if (p != q || in.take_front(p) != out.take_front(q))
    return false;
  auto product = [](ArrayRef<int64_t> dims) {
    int64_t n = 1;
    for (int64_t d : dims)
      n *= d;
    return n;
  };
  return product(in.drop_front(p)) == product(out.drop_front(q));
}

LogicalResult ReshapeOp::verify() {
  auto in = getInput().getType();
  auto out = getResult().getType();
  if (!in.hasStaticShape() || !out.hasStaticShape()) {
    // Dynamic sizes (a batch) stay where they are: the reshape may move
    // unit dims past them, or regroup the static dims after the last one.
    if (nonUnitDims(in.getShape()) != nonUnitDims(out.getShape()) &&
        !reshapeKeepsDynamicPrefix(in.getShape(), out.getShape()))
      return emitOpError("with dynamic sizes can only insert or remove "
                         "unit dimensions or regroup the static dimensions "
                         "after the last dynamic one, got ")
             << formatShape(in.getShape()) << " -> "
             << formatShape(out.getShape());
    return success();
  }
  if (in.getNumElements() != out.getNumElements())
    return emitOpError("cannot reshape ")
           << formatShape(in.getShape()) << " (" << in.getNumElements()
           << " elements) to " << formatShape(out.getShape()) << " ("
           << out.getNumElements() << " elements)";
  return success();
}

LogicalResult UnbroadcastOp::verify() {
  auto in = getInput().getType();
  auto out = getResult().getType();
  if (in.getRank() != out.getRank())
    return emitOpError("input and result ranks differ: ")
           << formatShape(in.getShape()) << " and "
           << formatShape(out.getShape());
  for (int64_t d = 0; d < in.getRank(); ++d) {
    int64_t o = out.getDimSize(d), i = in.getDimSize(d);
    if (o != 1 && o != i)
      return emitOpError("result ")
             << formatShape(out.getShape()) << " is not a broadcast source of "
             << formatShape(in.getShape()) << " (dimension " << d << ")";
  }
  return success();
}

/// Checks the shapes of an update's hyperparameters and step against each
/// other; the counts against the rule are checked with the symbol (see
/// OptimizerOps.cpp).
static LogicalResult verifyHyperAndStep(Operation *op, RankedTensorType hyper,
                                        RankedTensorType step) {
  if (hyper.getRank() < 1)
    return op->emitOpError("hyper must have a hyperparameter dimension, got ")
           << formatShape(hyper.getShape());
  if (hyper.getShape().drop_back() != step.getShape())
    return op->emitOpError("hyper ")
           << formatShape(hyper.getShape()) << " and step "
           << formatShape(step.getShape()) << " disagree on the models";
  return success();
}

void UpdateOp::build(OpBuilder &builder, OperationState &state, StringRef rule,
                     Value param, Value grad, ValueRange slots, Value hyper,
                     Value step) {
  llvm::SmallVector<Type> slotTypes(slots.size(), param.getType());
  build(builder, state, param.getType(), slotTypes, rule, param, grad, slots,
        hyper, step);
}

LogicalResult UpdateOp::verify() {
  if (getGrad().getType() != getParam().getType())
    return emitOpError("gradient type ")
           << getGrad().getType() << " differs from parameter type "
           << getParam().getType();
  for (Value s : getState())
    if (s.getType() != getParam().getType())
      return emitOpError("state slot type ")
             << s.getType() << " differs from parameter type "
             << getParam().getType();
  auto paramType = getParam().getType();
  auto lead = getHyper().getType().getShape().drop_back();
  if (paramType.getRank() < static_cast<int64_t>(lead.size()) ||
      paramType.getShape().take_front(lead.size()) != lead)
    return emitOpError("parameter ")
           << formatShape(paramType.getShape())
           << " does not start with the model dimensions of hyper "
           << formatShape(getHyper().getType().getShape());
  return verifyHyperAndStep(*this, getHyper().getType(), getStep().getType());
}

void FusedUpdateOp::build(OpBuilder &builder, OperationState &state,
                          StringRef rule, Value params, Value grads,
                          ValueRange slots, Value hyper, Value step,
                          Value decayMask) {
  build(builder, state, params.getType(), slots.getTypes(), rule, params, grads,
        slots, hyper, step, decayMask);
}

LogicalResult FusedUpdateOp::verify() {
  auto params = getParams().getType();
  if (params.getRank() != 2)
    return emitOpError("params must be [models, P], got ")
           << formatShape(params.getShape());
  for (Value slot : getState())
    if (slot.getType() != params)
      return emitOpError("each state slot must be ")
             << formatShape(params.getShape()) << " as params, got "
             << formatShape(cast<RankedTensorType>(slot.getType()).getShape());
  if (Value mask = getDecayMask()) {
    auto maskType = cast<RankedTensorType>(mask.getType());
    if (maskType.getRank() != 1 ||
        maskType.getDimSize(0) != params.getDimSize(1))
      return emitOpError("decay_mask must be [")
             << params.getDimSize(1) << "], got "
             << formatShape(maskType.getShape());
  }
  auto step = getStep().getType();
  if (step.getRank() != 1 || step.getDimSize(0) != params.getDimSize(0))
    return emitOpError("step must be [")
           << params.getDimSize(0) << "], got " << formatShape(step.getShape());
  return verifyHyperAndStep(*this, getHyper().getType(), step);
}

ArrayRef<double> SweepOp::getHyperValues(StringRef name) {
  for (auto [n, values] : llvm::zip(getHyperNames(), getHyper()))
    if (cast<StringAttr>(n).getValue() == name)
      return cast<DenseF64ArrayAttr>(values).asArrayRef();
  return {};
}

LossScaleSettings SweepOp::getLossScaleSettings() {
  LossScaleSettings settings;
  if (auto v = getInitScale())
    settings.initScale = v->convertToDouble();
  if (auto v = getGrowthFactor())
    settings.growthFactor = v->convertToDouble();
  if (auto v = getBackoffFactor())
    settings.backoffFactor = v->convertToDouble();
  if (auto v = getGrowthInterval())
    settings.growthInterval = static_cast<int64_t>(*v);
  return settings;
}

/// Whether one of `patterns` (globs, which the verifier checked) matches
/// `name`; false without patterns.
static bool matchesAnyPattern(std::optional<ArrayAttr> patterns,
                              StringRef name) {
  if (!patterns)
    return false;
  for (Attribute p : *patterns) {
    auto glob = llvm::GlobPattern::create(cast<StringAttr>(p).getValue());
    if (!glob)
      llvm::consumeError(glob.takeError());
    else if (glob->match(name))
      return true;
  }
  return false;
}

bool SweepOp::isExcludedFromDecay(StringRef name) {
  return matchesAnyPattern(getNoDecay(), name);
}

bool SweepOp::isFrozen(StringRef name) {
  return matchesAnyPattern(getFreeze(), name);
}

/// no_decay and freeze hold glob patterns of parameter names.
static LogicalResult verifyParamPatterns(SweepOp sweep) {
  for (auto [key, patterns] :
       {std::pair(StringRef("no_decay"), sweep.getNoDecay()),
        std::pair(StringRef("freeze"), sweep.getFreeze())}) {
    if (!patterns)
      continue;
    for (Attribute p : *patterns) {
      StringRef text = cast<StringAttr>(p).getValue();
      if (auto glob = llvm::GlobPattern::create(text); !glob)
        return sweep.emitOpError(key)
               << " pattern '" << text
               << "' is invalid: " << llvm::toString(glob.takeError());
    }
  }
  return success();
}

/// The dynamic loss scale's settings: only under precision = "f16", and
/// within what torch.amp.GradScaler accepts.
static LogicalResult verifyLossScale(SweepOp sweep, bool scaled) {
  if (!scaled) {
    std::pair<StringRef, bool> settings[] = {
        {"init_scale", sweep.getInitScale().has_value()},
        {"growth_factor", sweep.getGrowthFactor().has_value()},
        {"backoff_factor", sweep.getBackoffFactor().has_value()},
        {"growth_interval", sweep.getGrowthInterval().has_value()}};
    for (auto [name, present] : settings)
      if (present)
        return sweep.emitOpError(name)
               << " applies to precision = \"f16\" (a loss scale) only";
    return success();
  }
  if (std::optional<std::string> problem =
          lossScaleProblem(sweep.getLossScaleSettings()))
    return sweep.emitOpError(*problem);
  return success();
}

/// The settings of a data set of files (`data_source`) and what each kind
/// takes; the runtime's manifest reader checks the same (common/).
namespace {
enum class SourceValue { Text, Texts, Bool, Count, Numbers };
struct SourceSetting {
  llvm::StringLiteral key;
  SourceValue value;
  /// The kinds that take it, spaced ("npz csv").
  llvm::StringLiteral kinds;
};
constexpr SourceSetting kSourceSettings[] = {
    {"train", SourceValue::Text, "npz csv image_folder safetensors"},
    {"test", SourceValue::Text, "npz csv image_folder safetensors"},
    {"train_x", SourceValue::Text, "npy"},
    {"train_y", SourceValue::Text, "npy"},
    {"test_x", SourceValue::Text, "npy"},
    {"test_y", SourceValue::Text, "npy"},
    {"x", SourceValue::Text, "npz safetensors"},
    {"y", SourceValue::Text, "npz safetensors"},
    {"target", SourceValue::Text, "csv"},
    {"columns", SourceValue::Texts, "csv"},
    {"header", SourceValue::Bool, "csv"},
    {"skip_rows", SourceValue::Count, "csv"},
    {"delimiter", SourceValue::Text, "csv"},
    {"missing", SourceValue::Text, "csv"},
    {"standardize", SourceValue::Bool, "csv"},
    {"mean", SourceValue::Numbers, "image_folder"},
    {"std", SourceValue::Numbers, "image_folder"}};

bool holdsSourceValue(Attribute attr, SourceValue value) {
  switch (value) {
  case SourceValue::Text:
    return isa<StringAttr>(attr);
  case SourceValue::Texts: {
    auto list = dyn_cast<ArrayAttr>(attr);
    return list &&
           llvm::all_of(list, [](Attribute a) { return isa<StringAttr>(a); });
  }
  case SourceValue::Bool:
    return isa<BoolAttr>(attr);
  case SourceValue::Count: {
    auto n = dyn_cast<IntegerAttr>(attr);
    return n && !isa<BoolAttr>(attr) && n.getInt() >= 0;
  }
  case SourceValue::Numbers:
    return isa<DenseF64ArrayAttr>(attr);
  }
  return false;
}
} // namespace

static LogicalResult verifyDataSource(SweepOp sweep) {
  StringRef kind = stringifyDataSet(sweep.getData());
  DictionaryAttr source = sweep.getDataSourceAttr();
  if (!isFileDataSet(sweep.getData())) {
    if (source)
      return sweep.emitOpError("data set ")
             << kind << " is built in and takes no data_source";
    return success();
  }
  if (!source)
    return sweep.emitOpError("data set ") << kind << " needs a data_source";
  for (NamedAttribute entry : source) {
    const auto *setting = llvm::find_if(kSourceSettings, [&](const auto &s) {
      return s.key == entry.getName().getValue();
    });
    SmallVector<StringRef> kinds;
    if (setting != std::end(kSourceSettings))
      setting->kinds.split(kinds, ' ');
    if (!llvm::is_contained(kinds, kind))
      return sweep.emitOpError("data_source: '")
             << entry.getName().getValue() << "' is not a setting of " << kind
             << " data";
    if (!holdsSourceValue(entry.getValue(), setting->value))
      return sweep.emitOpError("data_source: '")
             << entry.getName().getValue() << "' has a value of the wrong kind";
  }
  bool npy = sweep.getData() == DataSet::npy;
  for (StringRef key : npy ? SmallVector<StringRef>{"train_x", "train_y"}
                           : SmallVector<StringRef>{"train"})
    if (!source.get(key))
      return sweep.emitOpError("data_source of ")
             << kind << " data needs '" << key << "'";
  if (sweep.getData() == DataSet::csv && !source.get("target"))
    return sweep.emitOpError("data_source of csv data needs 'target'");
  if (npy && !source.get("test_x") != !source.get("test_y"))
    return sweep.emitOpError("data_source of npy data needs both test_x and "
                             "test_y, or neither");
  return success();
}

/// init_checkpoint: {files = [one, or one per model], transpose = [...]?,
/// rename = {name = "file's name", ...}?, partial = bool?} and nothing else.
static LogicalResult verifyInitCheckpoint(SweepOp sweep, int64_t models) {
  DictionaryAttr init = sweep.getInitCheckpointAttr();
  if (!init)
    return success();
  auto strings = [](Attribute attr) {
    auto list = dyn_cast_or_null<ArrayAttr>(attr);
    return list &&
           llvm::all_of(list, [](Attribute a) { return isa<StringAttr>(a); });
  };
  auto renames = [](Attribute attr) {
    auto dict = dyn_cast<DictionaryAttr>(attr);
    return dict && llvm::all_of(dict, [](NamedAttribute entry) {
             return isa<StringAttr>(entry.getValue());
           });
  };
  auto files = init.getAs<ArrayAttr>("files");
  if (!strings(files) || files.empty() ||
      (files.size() != 1 && static_cast<int64_t>(files.size()) != models))
    return sweep.emitOpError("init_checkpoint needs 'files': one path, or one "
                             "per model (")
           << models << ")";
  for (NamedAttribute entry : init) {
    StringRef key = entry.getName().getValue();
    bool fits = key == "files" ||
                (key == "transpose" && strings(entry.getValue())) ||
                (key == "rename" && renames(entry.getValue())) ||
                (key == "partial" && isa<BoolAttr>(entry.getValue()));
    if (!fits)
      return sweep.emitOpError("init_checkpoint has a bad entry '")
             << key
             << "' (files, transpose: strings; rename: a dictionary of "
                "strings; partial: a bool)";
  }
  return success();
}

LogicalResult SweepOp::verify() {
  int64_t models = static_cast<int64_t>(getModels());
  if (models < 1)
    return emitOpError("needs at least one model, got ") << models;
  if (failed(verifyInitCheckpoint(*this, models)))
    return failure();
  if (failed(verifyLossScale(*this, getPrecision() == Precision::f16)))
    return failure();
  if (getHyperNames().size() != getHyper().size())
    return emitOpError("has ") << getHyperNames().size() << " hyper_names but "
                               << getHyper().size() << " hyper arrays";
  for (auto [name, values] : llvm::zip(getHyperNames(), getHyper()))
    if (static_cast<int64_t>(cast<DenseF64ArrayAttr>(values).size()) != models)
      return emitOpError("hyperparameter '")
             << cast<StringAttr>(name).getValue() << "' has "
             << cast<DenseF64ArrayAttr>(values).size() << " values for "
             << models << " models";
  if (getModelArgNames().has_value() != getModelArgs().has_value() ||
      (getModelArgNames() &&
       getModelArgNames()->size() != getModelArgs()->size()))
    return emitOpError("needs one model_args array per model_arg_names name");
  if (auto args = getModelArgs())
    for (auto [name, values] : llvm::zip(*getModelArgNames(), *args))
      if (static_cast<int64_t>(cast<DenseF64ArrayAttr>(values).size()) !=
          models)
        return emitOpError("model argument '")
               << cast<StringAttr>(name).getValue() << "' has "
               << cast<DenseF64ArrayAttr>(values).size() << " values for "
               << models << " models";
  if (auto clip = getClipNorm()) {
    if (static_cast<int64_t>(clip->size()) != models)
      return emitOpError("clip_norm has ")
             << clip->size() << " values for " << models << " models";
    for (double v : *clip)
      if (!(v > 0))
        return emitOpError("clip_norm must be positive, got ") << v;
  }
  if (auto schedule = getSchedule()) {
    const ScheduleRule &rule = getScheduleRule(*schedule);
    auto params = getScheduleParams();
    if (!params || params->size() != rule.params.size())
      return emitOpError("schedule '")
             << stringifySchedule(*schedule) << "' needs " << rule.params.size()
             << " parameter arrays";
    for (Attribute values : *params)
      if (static_cast<int64_t>(cast<DenseF64ArrayAttr>(values).size()) !=
          models)
        return emitOpError("a parameter of schedule '")
               << stringifySchedule(*schedule)
               << "' does not have one value per model";
  }
  if (static_cast<int64_t>(getSeeds().size()) != models)
    return emitOpError("has ")
           << getSeeds().size() << " seeds for " << models << " models";
  // (The counts are read signed: an I64Attr's getter returns uint64_t, in
  // which a negative count would pass.)
  int64_t firstModel = static_cast<int64_t>(getFirstModel());
  int64_t sweepModels =
      getSweepModels() ? static_cast<int64_t>(*getSweepModels()) : models;
  if (firstModel < 0 || firstModel + models > sweepModels)
    return emitOpError("models [")
           << firstModel << ", " << firstModel + models
           << ") are not a slice of the sweep's " << sweepModels;
  if (static_cast<int64_t>(getCrop()) < 0)
    return emitOpError("crop must not be negative, got ")
           << static_cast<int64_t>(getCrop());
  // A sequence data set's fixed steps may take budget // longest (0).
  int64_t batchSize = static_cast<int64_t>(getBatchSize());
  if (batchSize < (getBatching() ? 0 : 1))
    return emitOpError("batch_size must be positive, got ") << batchSize;
  if (static_cast<int64_t>(getEpochs()) < 0)
    return emitOpError("epochs must not be negative, got ")
           << static_cast<int64_t>(getEpochs());
  Routing routing = getRouting();
  if (routing == Routing::kfold) {
    int64_t folds = static_cast<int64_t>(getFolds());
    if (folds < 2)
      return emitOpError("kfold routing needs at least 2 folds, got ") << folds;
    auto fold = getFold();
    if (!fold || static_cast<int64_t>(fold->size()) != models)
      return emitOpError("kfold routing needs one fold index per model");
    for (int64_t f : *fold)
      if (f < 0 || f >= folds)
        return emitOpError("fold index ")
               << f << " out of range [0, " << folds << ")";
  } else if (getFold()) {
    return emitOpError("fold indices given without kfold routing");
  }
  if (failed(verifyDataSource(*this)) || failed(verifyParamPatterns(*this)))
    return failure();
  bool sequences = isSequenceDataSet(getData());
  if (sequences != getBatching().has_value())
    return emitOpError(sequences ? "needs" : "must not have")
           << " a batching strategy for data set "
           << stringifyDataSet(getData());
  if (getBatching()) {
    if (static_cast<int64_t>(getTokenBudget()) < 1 ||
        static_cast<int64_t>(getWindow()) < 1 ||
        static_cast<int64_t>(getMaxLength()) < 0)
      return emitOpError("needs a positive token_budget and window and a "
                         "max_length of at least 0");
    if (routing != Routing::shared)
      return emitOpError("sequence data supports shared routing only");
  }
  auto model =
      SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(*this, getModelAttr());
  if (!model)
    return emitOpError("model '") << getModel() << "' is not a function";
  // Once the pipeline has made the sweep name its train and eval steps,
  // the outputs are no longer on the model: the check applies before.
  if (auto rankBy = getRankByAttr()) {
    auto outputs = model->getAttrOfType<ArrayAttr>(
        MBTDialect::OutputsAttrHelper::getNameStr());
    if (outputs && !llvm::is_contained(outputs, rankBy))
      return emitOpError("rank_by '")
             << rankBy.getValue() << "' is not an output of model '"
             << getModel() << "'";
  }
  return success();
}

/// An enum attribute as its bare keyword (`cosine`), or as a string where
/// the spelling is not an identifier; `custom<EnumKeyword>($attr)`.
template <typename EnumAttrT>
static ParseResult parseEnumKeyword(OpAsmParser &parser, EnumAttrT &attr) {
  using Enum = decltype(std::declval<EnumAttrT>().getValue());
  SMLoc loc = parser.getCurrentLocation();
  std::string spelling;
  if (parser.parseKeywordOrString(&spelling))
    return failure();
  std::optional<Enum> value = symbolizeEnum<Enum>(spelling);
  if (!value)
    return parser.emitError(loc)
           << "unknown " << EnumAttrT::getMnemonic() << " '" << spelling << "'";
  attr = EnumAttrT::get(parser.getContext(), *value);
  return success();
}

template <typename EnumAttrT>
static void printEnumKeyword(OpAsmPrinter &printer, Operation *,
                             EnumAttrT attr) {
  printer.printKeywordOrString(stringifyEnum(attr.getValue()));
}

#define GET_OP_CLASSES
#include "dialects/MBT/IR/MBTOps.cpp.inc"

LogicalResult ModelConstantOp::verify() {
  if (getValues().empty())
    return emitOpError("needs at least one value");
  return success();
}

LogicalResult ClipGradNormOp::verify() {
  auto grads = getGrads().getType();
  auto maxNorm = getMaxNorm().getType();
  if (grads.getRank() != 2 || maxNorm.getRank() != 1 ||
      grads.getDimSize(0) != maxNorm.getDimSize(0))
    return emitOpError("needs grads [M, P] and max_norm [M], got ")
           << formatShape(grads.getShape()) << " and "
           << formatShape(maxNorm.getShape());
  return success();
}

LogicalResult GuardStepOp::verify() {
  auto step = getStep().getType();
  auto grads = getGrads().getType();
  if (step.getRank() != 1 || grads.getRank() != 2 ||
      step.getDimSize(0) != grads.getDimSize(0))
    return emitOpError("needs step [M] and grads [M, P], got ")
           << formatShape(step.getShape()) << " and "
           << formatShape(grads.getShape());
  auto lossType = getLoss().getType();
  if (lossType.getShape() != step.getShape() ||
      lossType.getElementType() != grads.getElementType())
    return emitOpError("needs a loss [M] of the gradients' type, got ")
           << lossType;
  return success();
}

LogicalResult LRScheduleOp::verify() {
  const ScheduleRule *rule = &getScheduleRule(getRule());
  auto hyper = getHyper().getType();
  auto step = getStep().getType();
  auto params = getParams().getType();
  int64_t k = static_cast<int64_t>(rule->params.size());
  if (hyper.getRank() != 2 || step.getRank() != 1 || params.getRank() != 2 ||
      step.getDimSize(0) != hyper.getDimSize(0) ||
      params.getDimSize(0) != hyper.getDimSize(0) || params.getDimSize(1) != k)
    return emitOpError("needs hyper [M, H], step [M] and params [M, ")
           << k << "] for schedule '" << stringifySchedule(getRule())
           << "', got " << formatShape(hyper.getShape()) << ", "
           << formatShape(step.getShape()) << " and "
           << formatShape(params.getShape());
  int64_t column = static_cast<int64_t>(getColumn());
  if (column < 0 || column >= hyper.getDimSize(1))
    return emitOpError("column ") << column << " is not a column of hyper "
                                  << formatShape(hyper.getShape());
  return success();
}
