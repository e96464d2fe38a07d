//===- BuildManifest.cpp - the artifact's manifest from the module --------===//
//
// Fills the manifest's schema (mbt/common/Manifest.h, which the runtime
// reads back) from the sweep, the optimizer rule, the train step's
// signature and the module attributes mbt-fuse-optimizer records, one part
// per function, and writes it with writeManifest().
//
//===----------------------------------------------------------------------===//
#include "compiler/Manifest/Manifest.h"

#include "dialects/MBT/IR/InitRules.h"
#include "dialects/MBT/IR/LossScaleRules.h"
#include "dialects/MBT/IR/MBTOps.h"
#include "dialects/MBT/IR/ScheduleRules.h"

#include "mbt/common/Abi.h"
#include "mbt/common/Manifest.h"

using namespace mlir;
using mlir::mbt::MBTDialect;

namespace {

::mbt::InitSpec toInitSpec(mlir::mbt::InitAttr init) {
  using Kind = ::mbt::InitSpec::Kind;
  ::mbt::InitSpec spec; // zeros where the layout gives none
  if (!init)
    return spec;
  switch (init.getKind()) {
  case mlir::mbt::InitKind::zeros:
    spec.kind = Kind::Zeros;
    break;
  case mlir::mbt::InitKind::ones:
    spec.kind = Kind::Ones;
    break;
  case mlir::mbt::InitKind::constant:
    spec.kind = Kind::Constant;
    spec.value = init.getArg("value");
    break;
  case mlir::mbt::InitKind::normal:
    spec.kind = Kind::Normal;
    spec.mean = init.getArg("mean");
    spec.stddev = init.getArg("std");
    break;
  case mlir::mbt::InitKind::uniform:
    spec.kind = Kind::Uniform;
    spec.low = init.getArg("low");
    spec.high = init.getArg("high");
    break;
  case mlir::mbt::InitKind::xavier_uniform:
    spec.kind = Kind::XavierUniform;
    break;
  case mlir::mbt::InitKind::kaiming_uniform:
    spec.kind = Kind::KaimingUniform;
    break;
  }
  return spec;
}

/// The tensors of a layout (mbt.layout or mbt.buffer_layout) in [M, P] or
/// [M, Q]; returns their total size and that of the trainable ones.
std::pair<int64_t, int64_t> readLayout(ArrayAttr layout,
                                       std::vector<::mbt::ParamSpec> &out) {
  int64_t count = 0, trainable = 0;
  for (Attribute a : layout) {
    auto entry = cast<DictionaryAttr>(a);
    ::mbt::ParamSpec p;
    p.name = cast<StringAttr>(entry.get("name")).getValue().str();
    ArrayRef<int64_t> shape =
        cast<DenseI64ArrayAttr>(entry.get("shape")).asArrayRef();
    p.shape.assign(shape.begin(), shape.end());
    p.offset = cast<IntegerAttr>(entry.get("offset")).getInt();
    p.size = cast<IntegerAttr>(entry.get("size")).getInt();
    p.init = toInitSpec(entry.getAs<mlir::mbt::InitAttr>("init"));
    if (auto decay = entry.getAs<BoolAttr>("decay"))
      p.decay = decay.getValue();
    if (auto flag = entry.getAs<BoolAttr>("trainable"))
      p.trainable = flag.getValue();
    count += p.size;
    trainable += p.trainable ? p.size : 0;
    out.push_back(std::move(p));
  }
  return {count, trainable};
}

std::vector<std::string> strings(ArrayAttr names) {
  std::vector<std::string> out;
  for (Attribute n : names)
    out.push_back(cast<StringAttr>(n).getValue().str());
  return out;
}

/// One row per model of column m of each per-model array in `table`.
std::vector<std::vector<double>> perModelRows(ArrayAttr table, int64_t models) {
  std::vector<std::vector<double>> rows(models);
  for (int64_t m = 0; m < models; ++m)
    if (table)
      for (Attribute values : table)
        rows[m].push_back(cast<DenseF64ArrayAttr>(values)[m]);
  return rows;
}

void readOptimizer(mlir::mbt::OptimizerOp rule, mlir::mbt::SweepOp sweep,
                   ::mbt::Manifest &m) {
  m.dtype =
      rule.getElementType().isF64() ? ::mbt::DType::F64 : ::mbt::DType::F32;
  m.optimizerRule = rule.getSymName().str();
  m.slots = strings(rule.getSlots());
  m.hyperNames = strings(rule.getHyper());
  for (int64_t i = 0; i < m.models; ++i) {
    std::vector<double> row;
    for (const std::string &h : m.hyperNames)
      row.push_back(sweep.getHyperValues(h)[i]);
    m.hyperValues.push_back(std::move(row));
  }
  // The flags (bool arguments) that chose the rule's code.
  if (auto flags = rule.getFlags())
    for (NamedAttribute flag : *flags)
      m.optimizerFlags[flag.getName().str()] =
          cast<BoolAttr>(flag.getValue()).getValue();
}

/// The model's arguments, gradient-norm bounds and learning-rate schedule
/// as the sweep set them per model (the artifact applies the last two).
void readPerModelSettings(mlir::mbt::SweepOp sweep, ::mbt::Manifest &m) {
  for (int64_t s : sweep.getSeeds())
    m.seeds.push_back(static_cast<uint64_t>(s));
  if (auto names = sweep.getModelArgNames())
    m.modelArgNames = strings(*names);
  m.modelArgValues = perModelRows(sweep.getModelArgsAttr(), m.models);
  if (auto clip = sweep.getClipNorm())
    m.clipNorm.assign(clip->begin(), clip->end());
  if (auto kind = sweep.getSchedule()) {
    const mlir::mbt::ScheduleRule &rule = mlir::mbt::getScheduleRule(*kind);
    m.scheduleName = rule.name().str();
    for (const mlir::mbt::ScheduleParam &param : rule.params)
      m.scheduleParamNames.push_back(param.name.str());
    m.scheduleValues = perModelRows(sweep.getScheduleParamsAttr(), m.models);
  }
}

template <typename AttrT> AttrT moduleAttr(ModuleOp module, StringRef name) {
  return module->getAttrOfType<AttrT>(name);
}

/// x [M, B, F] is the train step's sixth argument (params, buffers, state,
/// hyper, step, x, ...); a tokens input is i32 [M, B, T], T set by each step.
/// y [M, B] holds class indices, y [M, B, T] the input's next tokens.
void readInputAndTarget(ModuleOp module, func::FuncOp train,
                        ::mbt::Manifest &m) {
  auto xType = cast<ShapedType>(train.getArgumentTypes()[5]);
  auto inputName =
      moduleAttr<StringAttr>(module, MBTDialect::InputAttrHelper::getNameStr());
  m.inputName = inputName ? inputName.getValue().str() : "x";
  if (xType.getElementType().isInteger(32)) {
    m.inputKind = ::mbt::Manifest::InputKind::Tokens;
    auto vocab = moduleAttr<IntegerAttr>(
        module, MBTDialect::VocabAttrHelper::getNameStr());
    m.vocab = vocab ? vocab.getInt() : 0;
  } else {
    m.features = xType.getDimSize(2);
    if (auto shape = moduleAttr<DenseI64ArrayAttr>(
            module, MBTDialect::InputShapeAttrHelper::getNameStr()))
      m.inputShape.assign(shape.asArrayRef().begin(), shape.asArrayRef().end());
    else
      m.inputShape = {m.features};
  }
  auto targetName = moduleAttr<StringAttr>(
      module, MBTDialect::TargetAttrHelper::getNameStr());
  m.targetName = targetName ? targetName.getValue().str() : "y";
  auto classes = moduleAttr<IntegerAttr>(
      module, MBTDialect::ClassesAttrHelper::getNameStr());
  m.classes = classes ? classes.getInt() : 0;
  // y: class indices [M, B], next tokens [M, B, T] (i32), or values
  // [M, B, K] (floats).
  auto yType = cast<ShapedType>(train.getArgumentTypes()[6]);
  if (isa<FloatType>(yType.getElementType())) {
    m.targetKind = ::mbt::Manifest::TargetKind::Values;
    m.targetWidth = yType.getDimSize(2);
    m.classes = 0;
  } else if (yType.getRank() == 3) {
    m.targetKind = ::mbt::Manifest::TargetKind::NextTokens;
  }
}

/// The sweep's `data_source` (the verifier checked its keys and kinds).
::mbt::DataSource readDataSource(DictionaryAttr dict) {

  ::mbt::DataSource s;
  for (auto [key, member] : ::mbt::kDataSourceTexts)
    if (auto value = dict.getAs<StringAttr>(key))
      s.*member = value.getValue().str();
  if (auto columns = dict.getAs<ArrayAttr>("columns"))
    for (Attribute column : columns)
      s.columns.push_back(cast<StringAttr>(column).getValue().str());
  if (auto header = dict.getAs<BoolAttr>("header"))
    s.header = header.getValue();
  if (auto standardize = dict.getAs<BoolAttr>("standardize"))
    s.standardize = standardize.getValue();
  if (auto skip = dict.getAs<IntegerAttr>("skip_rows"))
    s.skipRows = skip.getInt();
  if (auto mean = dict.getAs<DenseF64ArrayAttr>("mean"))
    s.mean.assign(mean.asArrayRef().begin(), mean.asArrayRef().end());
  if (auto stddev = dict.getAs<DenseF64ArrayAttr>("std"))
    s.stddev.assign(stddev.asArrayRef().begin(), stddev.asArrayRef().end());
  return s;
}

void readData(mlir::mbt::SweepOp sweep, ::mbt::Manifest &m) {
  ::mbt::DataSpec &d = m.data;
  d.name = stringifyDataSet(sweep.getData()).str();
  if (DictionaryAttr source = sweep.getDataSourceAttr())
    d.source = readDataSource(source);
  if (auto rankBy = sweep.getRankBy())
    m.rankBy = rankBy->str();
  d.batch = static_cast<int64_t>(sweep.getBatchSize());
  d.shuffleSeed = sweep.getShuffleSeed();
  switch (sweep.getRouting()) {
  case mlir::mbt::Routing::shared:
    d.routing = ::mbt::DataSpec::Routing::Shared;
    break;
  case mlir::mbt::Routing::bootstrap:
    d.routing = ::mbt::DataSpec::Routing::Bootstrap;
    break;
  case mlir::mbt::Routing::kfold:
    d.routing = ::mbt::DataSpec::Routing::KFold;
    d.folds = static_cast<int64_t>(sweep.getFolds());
    if (auto fold = sweep.getFoldAttr())
      d.fold.assign(fold.asArrayRef().begin(), fold.asArrayRef().end());
    break;
  }
  // A sequence data set's grouping of samples into steps (docs/data.md).
  if (auto batching = sweep.getBatching())
    d.batching = {stringifyBatching(*batching).str(),
                  static_cast<int64_t>(sweep.getTokenBudget()),
                  static_cast<int64_t>(sweep.getWindow()),
                  static_cast<int64_t>(sweep.getMaxLength())};
  d.validation = sweep.getValidation().convertToDouble();
  d.crop = static_cast<int64_t>(sweep.getCrop());
  d.flip = sweep.getFlip();
}

/// Mixed precision (mbt-autocast): the format the artifact rounds its
/// products to; under f16, each model's loss scale, whose state is in the
/// buffers amp.*.
void readPrecision(mlir::mbt::SweepOp sweep, ::mbt::Manifest &m) {
  auto precision = sweep.getPrecision();
  if (!precision)
    return;
  m.precision = stringifyPrecision(*precision).str();
  if (*precision != mlir::mbt::Precision::f16)
    return;
  mlir::mbt::LossScaleSettings settings = sweep.getLossScaleSettings();
  ::mbt::LossScaleSpec scale;
  scale.initScale = settings.initScale;
  scale.growthFactor = settings.growthFactor;
  scale.backoffFactor = settings.backoffFactor;
  scale.growthInterval = settings.growthInterval;
  auto indexOf = [&](StringRef name) {
    for (size_t k = 0; k < m.buffers.size(); ++k)
      if (m.buffers[k].name == name)
        return static_cast<int64_t>(k);
    return int64_t{-1};
  };
  auto bufferOf = [&](StringRef role) {
    for (const mlir::mbt::LossScaleBuffer &buffer :
         mlir::mbt::kLossScaleBuffers)
      if (buffer.role == role)
        return indexOf(buffer.name);
    return int64_t{-1};
  };
  scale.scaleBuffer = bufferOf("scale");
  scale.goodStepsBuffer = bufferOf("good_steps");
  scale.skippedStepsBuffer = bufferOf("skipped_steps");
  m.lossScale = scale;
}

/// The sweep's init_checkpoint (verified by the sweep op).
void readInitCheckpoint(mlir::mbt::SweepOp sweep, ::mbt::Manifest &m) {
  DictionaryAttr init = sweep.getInitCheckpointAttr();
  if (!init)
    return;
  ::mbt::InitCheckpointSpec spec;
  auto strings = [](ArrayAttr list) {
    std::vector<std::string> out;
    for (Attribute a : list)
      out.push_back(cast<StringAttr>(a).getValue().str());
    return out;
  };
  spec.files = strings(init.getAs<ArrayAttr>("files"));
  if (auto transpose = init.getAs<ArrayAttr>("transpose"))
    spec.transpose = strings(transpose);
  if (auto rename = init.getAs<DictionaryAttr>("rename"))
    for (NamedAttribute entry : rename)
      spec.rename[entry.getName().str()] =
          cast<StringAttr>(entry.getValue()).getValue().str();
  if (auto partial = init.getAs<BoolAttr>("partial"))
    spec.partial = partial.getValue();
  m.initCheckpoint = spec;
}

/// The outputs from the name of the output each result of the step feeds
/// (mbt.outputs): a metric over a whole split (mbt.split_metrics) feeds
/// several consecutive results, every other output one.
void readOutputs(ModuleOp module, ArrayAttr columns, ::mbt::Manifest &m) {
  auto split = moduleAttr<DictionaryAttr>(
      module, MBTDialect::SplitMetricsAttrHelper::getNameStr());
  std::vector<std::string> names = strings(columns);
  for (size_t k = 0; k < names.size();) {
    size_t next = k + 1;
    while (next < names.size() && names[next] == names[k])
      ++next;
    m.outputs.push_back(names[k]);
    auto reduce = split ? split.getAs<mlir::mbt::SplitReduceAttr>(names[k])
                        : mlir::mbt::SplitReduceAttr();
    if (reduce) {
      using ::mbt::SplitOutput;
      SplitOutput output;
      output.name = names[k];
      bool r2 = reduce.getValue() == mlir::mbt::SplitReduce::r2;
      output.reduce = r2 ? SplitOutput::Reduce::R2 : SplitOutput::Reduce::Rmse;
      output.width = static_cast<int64_t>(next - k) / (r2 ? 3 : 1);
      m.splitOutputs.push_back(output);
      k = next;
    } else {
      ++k;
    }
  }
}

} // namespace

namespace mbt {
FailureOr<std::string> buildManifest(ModuleOp module, StringRef device) {
  auto sweeps = module.getOps<mlir::mbt::SweepOp>();
  auto layout =
      moduleAttr<ArrayAttr>(module, MBTDialect::LayoutAttrHelper::getNameStr());
  auto outputs = moduleAttr<ArrayAttr>(
      module, MBTDialect::OutputsAttrHelper::getNameStr());
  auto train = module.lookupSymbol<func::FuncOp>("mbt_train_step");
  if (sweeps.empty() || !layout || !outputs || !train)
    return module.emitError("the module is not at the fused stage (no "
                            "mbt.sweep, mbt.layout or @mbt_train_step)");
  if (device != "cpu" && device != "cuda")
    return module.emitError("unknown device '") << device << "'";
  mlir::mbt::SweepOp sweep = *sweeps.begin();
  auto rule =
      module.lookupSymbol<mlir::mbt::OptimizerOp>(sweep.getOptimizerAttr());
  if (!rule)
    return sweep.emitError("the sweep's optimizer is not in the module");

  Manifest m;
  m.abiVersion = kAbiVersion;
  m.device = device == "cuda" ? Manifest::Device::CUDA : Manifest::Device::CPU;
  auto modelName =
      moduleAttr<StringAttr>(module, MBTDialect::ModelAttrHelper::getNameStr());
  m.model = modelName ? modelName.getValue().str() : "model";
  m.models = static_cast<int64_t>(sweep.getModels());
  m.firstModel = static_cast<int64_t>(sweep.getFirstModel());
  m.gradStep = static_cast<bool>(module.lookupSymbol("mbt_grad_step"));
  m.sweepModels = sweep.getSweepModels()
                      ? static_cast<int64_t>(*sweep.getSweepModels())
                      : m.models;
  std::tie(m.paramCount, m.trainableCount) = readLayout(layout, m.params);
  if (auto buffers = moduleAttr<ArrayAttr>(
          module, MBTDialect::BufferLayoutAttrHelper::getNameStr()))
    m.bufferCount = readLayout(buffers, m.buffers).first;
  readInputAndTarget(module, train, m);
  readOptimizer(rule, sweep, m);
  readPerModelSettings(sweep, m);
  readOutputs(module, outputs, m);
  readInitCheckpoint(sweep, m);
  readData(sweep, m);
  m.epochs = static_cast<int64_t>(sweep.getEpochs());
  readPrecision(sweep, m);
  return writeManifest(m);
}
} // namespace mbt
