//===- ManifestReader.cpp - read and validate the manifest ----------------===//
//
// Reading is strict: every field the runtime uses must be present with the
// right JSON type, and the size relations of docs/abi.md must hold. Each
// error names the field by its JSON path (e.g. "params[1].offset"), so that
// a compiler bug that emits a bad manifest is easy to find. (nlohmann's
// JSON_DIAGNOSTICS would give paths for type errors only; most checks here
// relate fields to each other.)
//
//===----------------------------------------------------------------------===//

#include "mbt/common/Manifest.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <optional>
#include <set>
#include <tuple>

using nlohmann::json;

namespace mbt {

const char *initKindName(InitSpec::Kind kind) {
  switch (kind) {
  case InitSpec::Kind::Zeros:
    return "zeros";
  case InitSpec::Kind::Ones:
    return "ones";
  case InitSpec::Kind::Normal:
    return "normal";
  case InitSpec::Kind::Uniform:
    return "uniform";
  case InitSpec::Kind::XavierUniform:
    return "xavier_uniform";
  case InitSpec::Kind::KaimingUniform:
    return "kaiming_uniform";
  case InitSpec::Kind::Constant:
    return "constant";
  }
  return "?";
}

const char *routingName(DataSpec::Routing routing) {
  switch (routing) {
  case DataSpec::Routing::KFold:
    return "kfold";
  case DataSpec::Routing::Bootstrap:
    return "bootstrap";
  case DataSpec::Routing::Shared:
    break;
  }
  return "shared";
}

bool isFileDataSet(const std::string &name) {
  return name == "npz" || name == "npy" || name == "csv" ||
         name == "image_folder" || name == "safetensors";
}

bool DataSource::operator==(const DataSource &o) const {
  return train == o.train && test == o.test && trainX == o.trainX &&
         trainY == o.trainY && testX == o.testX && testY == o.testY &&
         x == o.x && y == o.y && target == o.target && columns == o.columns &&
         header == o.header && skipRows == o.skipRows &&
         delimiter == o.delimiter && missing == o.missing &&
         standardize == o.standardize && mean == o.mean && stddev == o.stddev;
}

namespace {

/// The enumerator that `names` spells `name`, or none: the reader takes the
/// spellings the writer writes.
template <typename Enum, size_t N>
std::optional<Enum> named(const std::string &name, const Enum (&values)[N],
                          const char *(*names)(Enum)) {
  for (Enum value : values)
    if (name == names(value))
      return value;
  return std::nullopt;
}

constexpr InitSpec::Kind kInitKinds[] = {
    InitSpec::Kind::Zeros,         InitSpec::Kind::Ones,
    InitSpec::Kind::Normal,        InitSpec::Kind::Uniform,
    InitSpec::Kind::XavierUniform, InitSpec::Kind::KaimingUniform,
    InitSpec::Kind::Constant};
constexpr DataSpec::Routing kRoutings[] = {DataSpec::Routing::Shared,
                                           DataSpec::Routing::KFold,
                                           DataSpec::Routing::Bootstrap};

/// Typed access to JSON values that reports failures with the field path.
class Reader {
public:
  explicit Reader(const std::string &origin) : origin(origin) {}

  [[noreturn]] void fail(const std::string &path,
                         const std::string &what) const {
    throw ManifestError("invalid manifest in '" + origin + "': field '" + path +
                        "': " + what);
  }

  const json &field(const json &object, const std::string &key,
                    const std::string &path) const {
    if (!object.is_object())
      fail(path, "expected an object");
    auto it = object.find(key);
    if (it == object.end())
      fail(join(path, key), "missing");
    return *it;
  }

  int64_t integer(const json &value, const std::string &path) const {
    if (value.is_number_unsigned()) {
      if (value.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
        fail(path, "integer too large");
      return static_cast<int64_t>(value.get<uint64_t>());
    }
    if (!value.is_number_integer())
      fail(path, "expected an integer, got " + describe(value));
    return value.get<int64_t>();
  }

  int64_t nonNegative(const json &value, const std::string &path) const {
    int64_t v = integer(value, path);
    if (v < 0)
      fail(path, "expected a non-negative integer, got " + std::to_string(v));
    return v;
  }

  uint64_t unsignedInt(const json &value, const std::string &path) const {
    if (value.is_number_unsigned())
      return value.get<uint64_t>();
    return static_cast<uint64_t>(nonNegative(value, path));
  }

  double number(const json &value, const std::string &path) const {
    if (!value.is_number())
      fail(path, "expected a number, got " + describe(value));
    double v = value.get<double>();
    if (!std::isfinite(v))
      fail(path, "expected a finite number");
    return v;
  }

  std::string string(const json &value, const std::string &path) const {
    if (!value.is_string())
      fail(path, "expected a string, got " + describe(value));
    return value.get<std::string>();
  }

  const json &array(const json &value, const std::string &path) const {
    if (!value.is_array())
      fail(path, "expected an array, got " + describe(value));
    return value;
  }

  std::vector<std::string> strings(const json &value,
                                   const std::string &path) const {
    std::vector<std::string> result;
    const json &list = array(value, path);
    for (size_t i = 0; i < list.size(); ++i)
      result.push_back(string(list[i], index(path, i)));
    return result;
  }

  std::vector<int64_t> shape(const json &value, const std::string &path) const {
    std::vector<int64_t> result;
    const json &list = array(value, path);
    for (size_t i = 0; i < list.size(); ++i)
      result.push_back(nonNegative(list[i], index(path, i)));
    return result;
  }

  static std::string join(const std::string &path, const std::string &key) {
    return path.empty() ? key : path + "." + key;
  }
  static std::string index(const std::string &path, size_t i) {
    return path + "[" + std::to_string(i) + "]";
  }

private:
  static std::string describe(const json &value) {
    return std::string(value.type_name());
  }
  std::string origin;
};

/// Product of a shape, failing on overflow (a corrupt manifest must not make
/// the runtime allocate a wrapped-around size).
int64_t product(const Reader &reader, const std::vector<int64_t> &shape,
                const std::string &path) {
  int64_t result = 1;
  for (int64_t dim : shape) {
    if (dim != 0 && result > INT64_MAX / dim)
      reader.fail(path, "element count overflows");
    result *= dim;
  }
  return result;
}

InitSpec parseInit(const Reader &r, const json &value, const std::string &path,
                   const std::vector<int64_t> &shape) {
  InitSpec init;
  std::string kind = r.string(r.field(value, "kind", path), path + ".kind");
  std::optional<InitSpec::Kind> parsed = named(kind, kInitKinds, initKindName);
  if (!parsed)
    r.fail(path + ".kind",
           "unknown init kind '" + kind +
               "' (expected zeros, ones, constant, normal, uniform, "
               "xavier_uniform or kaiming_uniform)");
  init.kind = *parsed;
  switch (init.kind) {
  case InitSpec::Kind::Normal:
    init.mean = r.number(r.field(value, "mean", path), path + ".mean");
    init.stddev = r.number(r.field(value, "std", path), path + ".std");
    if (init.stddev < 0)
      r.fail(path + ".std", "must be >= 0");
    break;
  case InitSpec::Kind::Uniform:
    init.low = r.number(r.field(value, "low", path), path + ".low");
    init.high = r.number(r.field(value, "high", path), path + ".high");
    if (init.low > init.high)
      r.fail(path, "low must not exceed high");
    break;
  case InitSpec::Kind::Constant:
    init.value = r.number(r.field(value, "value", path), path + ".value");
    break;
  case InitSpec::Kind::XavierUniform:
  case InitSpec::Kind::KaimingUniform:
    // Fan-in is shape[0]: a scalar or an empty first dim has none.
    if (shape.empty() || shape[0] == 0)
      r.fail(path, "'" + kind +
                       "' needs a shape whose first dim (fan-in) "
                       "is positive");
    break;
  case InitSpec::Kind::Zeros:
  case InitSpec::Kind::Ones:
    break;
  }
  return init;
}

/// Where the tensors of a layout go: back to back in manifest order, the
/// trainable ones first, from column 0, then the frozen ones (only
/// parameters can be frozen).
class LayoutPacker {
public:
  LayoutPacker(const Reader &r, const json &list, const std::string &what)
      : r(r) {
    for (size_t i = 0; i < list.size(); ++i) {
      std::string path = Reader::index(what, i);
      const json &entry = list[i];
      bool trainable = true;
      if (entry.is_object() && entry.contains("trainable")) {
        if (!entry["trainable"].is_boolean() || what != "params")
          r.fail(path + ".trainable", what == "params"
                                          ? "must be true or false"
                                          : "a buffer cannot be frozen");
        trainable = entry["trainable"].get<bool>();
      }
      flags.push_back(trainable);
      // The sizes are checked as each entry is read; here they only place
      // the frozen ones after the trainable ones.
      if (trainable && entry.is_object() && entry.contains("size") &&
          entry["size"].is_number_integer()) {
        int64_t size = entry["size"].get<int64_t>();
        if (size > INT64_MAX - trainableColumns)
          r.fail(path + ".size", "parameter count overflows");
        trainableColumns += std::max<int64_t>(size, 0);
      }
    }
  }

  bool trainable(size_t i) const { return flags[i]; }

  /// Checks entry `i`'s offset and places it.
  void place(size_t i, const ParamSpec &p, const std::string &path) {
    int64_t &next = flags[i] ? nextTrainable : nextFrozen;
    std::optional<std::string> &previous =
        flags[i] ? lastTrainable : lastFrozen;
    int64_t expected = flags[i] ? next : trainableColumns + next;
    if (p.offset != expected) {
      std::string after = previous ? " (right after '" + *previous + "')"
                          : flags[i]
                              ? std::string(" (the first one starts at 0)")
                              : " (the first frozen one starts after the " +
                                    std::to_string(trainableColumns) +
                                    " trainable columns)";
      r.fail(path + ".offset", "expected " + std::to_string(expected) + after +
                                   ", got " + std::to_string(p.offset));
    }
    if (p.size > INT64_MAX - expected)
      r.fail(path + ".size", "parameter count overflows");
    next += p.size;
    previous = p.name;
  }

  /// The columns of the trainable tensors, and of all of them.
  int64_t trainableCount() const { return nextTrainable; }
  int64_t count() const { return trainableColumns + nextFrozen; }

private:
  const Reader &r;
  std::vector<bool> flags;
  int64_t trainableColumns = 0, nextTrainable = 0, nextFrozen = 0;
  /// The names of the last trainable and frozen tensors placed.
  std::optional<std::string> lastTrainable, lastFrozen;
};

/// "params" and "param_count", or "buffers" and "buffer_count" (`what`:
/// "params" or "buffers"): tensors packed back to back in a row (the
/// frozen parameters after the trainable ones). Returns the count and the
/// trainable columns.
std::pair<int64_t, int64_t> parseLayout(const Reader &r, const json &list,
                                        const json &count,
                                        const std::string &what,
                                        std::set<std::string> &names,
                                        std::vector<ParamSpec> &out) {
  LayoutPacker packer(r, list, what);
  for (size_t i = 0; i < list.size(); ++i) {
    std::string path = Reader::index(what, i);
    const json &entry = list[i];
    ParamSpec p;
    p.name = r.string(r.field(entry, "name", path), path + ".name");
    if (!names.insert(p.name).second)
      r.fail(path + ".name",
             "duplicate parameter or buffer name '" + p.name + "'");
    p.shape = r.shape(r.field(entry, "shape", path), path + ".shape");
    p.offset = r.nonNegative(r.field(entry, "offset", path), path + ".offset");
    p.size = r.nonNegative(r.field(entry, "size", path), path + ".size");
    int64_t elements = product(r, p.shape, path + ".shape");
    if (elements != p.size)
      r.fail(path + ".size", "is " + std::to_string(p.size) +
                                 " but shape holds " +
                                 std::to_string(elements) + " elements");
    p.trainable = packer.trainable(i);
    packer.place(i, p, path);
    p.init =
        parseInit(r, r.field(entry, "init", path), path + ".init", p.shape);
    if (entry.contains("decay")) {
      if (!entry["decay"].is_boolean())
        r.fail(path + ".decay", "must be true or false");
      p.decay = entry["decay"].get<bool>();
    }
    out.push_back(std::move(p));
  }
  std::string countName = what == "params" ? "param_count" : "buffer_count";
  int64_t total = r.nonNegative(count, countName);
  if (total != packer.count())
    r.fail(countName, "is " + std::to_string(total) + " but the " + what +
                          "' sizes sum to " + std::to_string(packer.count()));
  return {total, packer.trainableCount()};
}

void parseParams(const Reader &r, const json &root, Manifest &m) {
  std::set<std::string> names;
  std::tie(m.paramCount, m.trainableCount) =
      parseLayout(r, r.array(r.field(root, "params", ""), "params"),
                  r.field(root, "param_count", ""), "params", names, m.params);
  // Optional: P when no parameter is frozen.
  if (root.contains("trainable_count") &&
      r.nonNegative(root["trainable_count"], "trainable_count") !=
          m.trainableCount)
    r.fail("trainable_count",
           "is " + root["trainable_count"].dump() +
               " but the trainable parameters' sizes sum to " +
               std::to_string(m.trainableCount));
  // Optional: a model without running statistics may omit them.
  if (root.contains("buffers") || root.contains("buffer_count"))
    m.bufferCount =
        parseLayout(r, r.array(r.field(root, "buffers", ""), "buffers"),
                    r.field(root, "buffer_count", ""), "buffers", names,
                    m.buffers)
            .first;
}

/// A table of one row per model and `width` numbers per row (one per name
/// of `namesPath`).
std::vector<std::vector<double>>
perModelTable(const Reader &r, const json &field, const std::string &path,
              int64_t models, size_t width, const std::string &namesPath) {
  const json &rows = r.array(field, path);
  if (static_cast<int64_t>(rows.size()) != models)
    r.fail(path, "has " + std::to_string(rows.size()) +
                     " rows, expected one per model (" +
                     std::to_string(models) + ")");
  std::vector<std::vector<double>> table;
  for (size_t i = 0; i < rows.size(); ++i) {
    std::string rowPath = Reader::index(path, i);
    const json &row = r.array(rows[i], rowPath);
    if (row.size() != width)
      r.fail(rowPath, "has " + std::to_string(row.size()) +
                          " values, expected " + std::to_string(width) +
                          " (one per " + namesPath + " name)");
    std::vector<double> values;
    for (size_t j = 0; j < row.size(); ++j)
      values.push_back(r.number(row[j], Reader::index(rowPath, j)));
    table.push_back(std::move(values));
  }
  return table;
}

void parseOptimizer(const Reader &r, const json &root, Manifest &m) {
  const json &opt = r.field(root, "optimizer", "");
  m.optimizerRule =
      r.string(r.field(opt, "rule", "optimizer"), "optimizer.rule");
  m.slots = r.strings(r.field(opt, "slots", "optimizer"), "optimizer.slots");
  m.hyperNames =
      r.strings(r.field(opt, "hyper", "optimizer"), "optimizer.hyper");
  m.hyperValues =
      perModelTable(r, r.field(root, "hyper_values", ""), "hyper_values",
                    m.models, m.hyperNames.size(), "optimizer.hyper");
  // Optional: the bool arguments that chose the rule's code.
  if (opt.contains("flags")) {
    const json &flags = opt["flags"];
    if (!flags.is_object())
      r.fail("optimizer.flags", "expected an object");
    for (auto it = flags.begin(); it != flags.end(); ++it) {
      if (!it.value().is_boolean())
        r.fail("optimizer.flags." + it.key(), "must be true or false");
      m.optimizerFlags[it.key()] = it.value().get<bool>();
    }
  }
}

/// "clip_norm": [one per model] or null, optional: each model's
/// gradient-norm bound, applied inside the artifact.
void parseClipNorm(const Reader &r, const json &root, Manifest &m) {
  if (!root.contains("clip_norm") || root["clip_norm"].is_null())
    return;
  const json &values = r.array(root["clip_norm"], "clip_norm");
  if (static_cast<int64_t>(values.size()) != m.models)
    r.fail("clip_norm", "has " + std::to_string(values.size()) +
                            " entries, expected one per model (" +
                            std::to_string(m.models) + ")");
  for (size_t i = 0; i < values.size(); ++i)
    m.clipNorm.push_back(r.number(values[i], Reader::index("clip_norm", i)));
}

/// "schedule": {"name", "params": [...], "values": [one row per model]}
/// or null, optional: the learning-rate schedule the artifact applies.
void parseSchedule(const Reader &r, const json &root, Manifest &m) {
  if (!root.contains("schedule") || root["schedule"].is_null())
    return;
  const json &schedule = root["schedule"];
  m.scheduleName =
      r.string(r.field(schedule, "name", "schedule"), "schedule.name");
  m.scheduleParamNames =
      r.strings(r.field(schedule, "params", "schedule"), "schedule.params");
  m.scheduleValues = perModelTable(
      r, r.field(schedule, "values", "schedule"), "schedule.values", m.models,
      m.scheduleParamNames.size(), "schedule.params");
}

/// "loss_scale": {"init_scale", "growth_factor", "backoff_factor",
/// "growth_interval", "buffers": {"scale", "good_steps", "skipped_steps"}},
/// optional (precision f16): the settings of each model's dynamic loss
/// scale and the buffers (each one number) that hold its state.
void parseLossScale(const Reader &r, const json &root, Manifest &m) {
  if (!root.contains("loss_scale"))
    return;
  const json &object = root["loss_scale"];
  LossScaleSpec spec;
  auto number = [&](const char *key) {
    return r.number(r.field(object, key, "loss_scale"),
                    std::string("loss_scale.") + key);
  };
  spec.initScale = number("init_scale");
  spec.growthFactor = number("growth_factor");
  spec.backoffFactor = number("backoff_factor");
  spec.growthInterval =
      r.nonNegative(r.field(object, "growth_interval", "loss_scale"),
                    "loss_scale.growth_interval");
  const json &buffers = r.field(object, "buffers", "loss_scale");
  std::pair<const char *, int64_t *> roles[] = {
      {"scale", &spec.scaleBuffer},
      {"good_steps", &spec.goodStepsBuffer},
      {"skipped_steps", &spec.skippedStepsBuffer}};
  for (auto [role, index] : roles) {
    std::string path = std::string("loss_scale.buffers.") + role;
    std::string name =
        r.string(r.field(buffers, role, "loss_scale.buffers"), path);
    for (size_t k = 0; k < m.buffers.size(); ++k)
      if (m.buffers[k].name == name && m.buffers[k].size == 1)
        *index = static_cast<int64_t>(k);
    if (*index < 0)
      r.fail(path, "names no one-number buffer ('" + name + "')");
  }
  m.lossScale = spec;
}

/// "model_args": {"names": [...], "values": [one row per model]}, optional:
/// the model's arguments as the sweep set them.
void parseModelArgs(const Reader &r, const json &root, Manifest &m) {
  if (!root.contains("model_args"))
    return;
  const json &args = root["model_args"];
  m.modelArgNames =
      r.strings(r.field(args, "names", "model_args"), "model_args.names");
  m.modelArgValues = perModelTable(r, r.field(args, "values", "model_args"),
                                   "model_args.values", m.models,
                                   m.modelArgNames.size(), "model_args.names");
}

/// abi_version, dtype, device, model, models.
void parseHeader(const Reader &r, const json &root, Manifest &m) {
  m.abiVersion = r.integer(r.field(root, "abi_version", ""), "abi_version");
  if (m.abiVersion != kAbiVersion)
    r.fail("abi_version", "this runtime understands version " +
                              std::to_string(kAbiVersion) + ", got " +
                              std::to_string(m.abiVersion));
  std::string dtype = r.string(r.field(root, "dtype", ""), "dtype");
  if (dtype == "f32")
    m.dtype = DType::F32;
  else if (dtype == "f64")
    m.dtype = DType::F64;
  else
    r.fail("dtype", "must be \"f32\" or \"f64\", got \"" + dtype + "\"");
  if (root.contains("device")) {
    std::string device = r.string(root.at("device"), "device");
    if (device == "cpu")
      m.device = Manifest::Device::CPU;
    else if (device == "cuda")
      m.device = Manifest::Device::CUDA;
    else
      r.fail("device", "must be \"cpu\" or \"cuda\", got \"" + device + "\"");
  }
  m.model = r.string(r.field(root, "model", ""), "model");
  m.models = r.integer(r.field(root, "models", ""), "models");
  if (m.models < 1)
    r.fail("models", "must be at least 1, got " + std::to_string(m.models));
  if (root.contains("grad_step")) {
    if (!root["grad_step"].is_boolean())
      r.fail("grad_step", "must be true or false");
    m.gradStep = root["grad_step"].get<bool>();
  }
  if (root.contains("cpu")) {
    const json &cpu = root["cpu"];
    m.cpuName = r.string(r.field(cpu, "name", "cpu"), "cpu.name");
    m.cpuFeatures = r.strings(r.field(cpu, "features", "cpu"), "cpu.features");
  }
  m.sweepModels = m.models;
  if (root.contains("sweep_models")) {
    m.sweepModels = r.integer(root["sweep_models"], "sweep_models");
    m.firstModel = r.integer(r.field(root, "first_model", ""), "first_model");
    if (m.firstModel < 0 || m.firstModel + m.models > m.sweepModels)
      r.fail("first_model", "models [" + std::to_string(m.firstModel) + ", " +
                                std::to_string(m.firstModel + m.models) +
                                ") are not a slice of the sweep's " +
                                std::to_string(m.sweepModels));
  }
}

/// "input": {"name", "kind"?, "shape", "features"} or, for token ids,
/// {"name", "kind": "tokens", "vocab"}.
void parseInput(const Reader &r, const json &root, Manifest &m) {
  const json &input = r.field(root, "input", "");
  m.inputName = r.string(r.field(input, "name", "input"), "input.name");
  // "kind" is optional: absent, x holds float features.
  if (input.is_object() && input.contains("kind")) {
    std::string kind = r.string(input["kind"], "input.kind");
    if (kind == "tokens")
      m.inputKind = Manifest::InputKind::Tokens;
    else if (kind != "features")
      r.fail("input.kind",
             "must be \"features\" or \"tokens\", got \"" + kind + "\"");
  }
  if (m.inputKind == Manifest::InputKind::Tokens) {
    m.vocab = r.integer(r.field(input, "vocab", "input"), "input.vocab");
    if (m.vocab < 1)
      r.fail("input.vocab", "must be at least 1");
    return;
  }
  m.inputShape = r.shape(r.field(input, "shape", "input"), "input.shape");
  m.features = r.integer(r.field(input, "features", "input"), "input.features");
  if (m.features < 1)
    r.fail("input.features", "must be at least 1");
  int64_t elements = product(r, m.inputShape, "input.shape");
  if (elements != m.features)
    r.fail("input.features", "is " + std::to_string(m.features) +
                                 " but input.shape holds " +
                                 std::to_string(elements) + " elements");
}

/// "target": {"name", "classes", "kind"?}, or {"name", "kind": "values",
/// "width"}.
void parseTarget(const Reader &r, const json &root, Manifest &m) {
  const json &target = r.field(root, "target", "");
  m.targetName = r.string(r.field(target, "name", "target"), "target.name");
  // "kind" is optional: absent, y holds class indices.
  if (target.is_object() && target.contains("kind")) {
    std::string kind = r.string(target["kind"], "target.kind");
    if (kind == "next_tokens")
      m.targetKind = Manifest::TargetKind::NextTokens;
    else if (kind == "values")
      m.targetKind = Manifest::TargetKind::Values;
    else if (kind != "classes")
      r.fail("target.kind", "must be \"classes\", \"next_tokens\" or "
                            "\"values\", got \"" +
                                kind + "\"");
  }
  if (m.targetKind == Manifest::TargetKind::Values) {
    m.targetWidth =
        r.integer(r.field(target, "width", "target"), "target.width");
    if (m.targetWidth < 1)
      r.fail("target.width", "must be at least 1");
    return;
  }
  m.classes = r.integer(r.field(target, "classes", "target"), "target.classes");
  if (m.classes < 1)
    r.fail("target.classes", "must be at least 1");
  if (m.targetKind == Manifest::TargetKind::NextTokens &&
      (m.inputKind != Manifest::InputKind::Tokens || m.classes != m.vocab))
    r.fail("target.kind", "next_tokens needs an input of token ids of the "
                          "target's vocabulary (" +
                              std::to_string(m.classes) + ")");
}

/// "split_outputs"? : [{"name" (a metric among "outputs"), "reduce" ("rmse"
/// or "r2"), "width" (K >= 1)}], each name once.
void parseSplitOutputs(const Reader &r, const json &root, Manifest &m) {
  if (!root.contains("split_outputs"))
    return;
  const json &list = r.array(root["split_outputs"], "split_outputs");
  for (size_t i = 0; i < list.size(); ++i) {
    std::string path = Reader::index("split_outputs", i);
    SplitOutput split;
    split.name = r.string(r.field(list[i], "name", path), path + ".name");
    auto named = std::find(m.outputs.begin(), m.outputs.end(), split.name);
    if (named == m.outputs.begin() || named == m.outputs.end())
      r.fail(path + ".name",
             "names '" + split.name + "', which is not a metric output");
    if (m.splitOutput(split.name))
      r.fail(path + ".name", "names '" + split.name + "' a second time");
    std::string reduce =
        r.string(r.field(list[i], "reduce", path), path + ".reduce");
    if (reduce != "rmse" && reduce != "r2")
      r.fail(path + ".reduce",
             "must be \"rmse\" or \"r2\", got \"" + reduce + "\"");
    split.reduce =
        reduce == "r2" ? SplitOutput::Reduce::R2 : SplitOutput::Reduce::Rmse;
    split.width = r.integer(r.field(list[i], "width", path), path + ".width");
    if (split.width < 1 || split.width > (int64_t{1} << 20))
      r.fail(path + ".width", "must be between 1 and 2^20");
    m.splitOutputs.push_back(split);
  }
}

/// "rename": {spec name (a parameter or buffer): the file's name}.
std::map<std::string, std::string>
parseRename(const Reader &r, const json &rename, const Manifest &m) {
  const char *path = "init_checkpoint.rename";
  if (!rename.is_object())
    r.fail(path, "must map parameter names to the file's tensor names");
  std::map<std::string, std::string> names;
  for (const auto &item : rename.items()) {
    const std::string &name = item.key();
    const json &tensor = item.value();
    auto named = [&](const ParamSpec &p) { return p.name == name; };
    if (std::none_of(m.params.begin(), m.params.end(), named) &&
        std::none_of(m.buffers.begin(), m.buffers.end(), named))
      r.fail(std::string(path) + "." + name,
             "is not a parameter or buffer of the model");
    if (!tensor.is_string())
      r.fail(std::string(path) + "." + name, "must be a tensor name");
    names[name] = tensor.get<std::string>();
  }
  return names;
}

/// "init_checkpoint"? : {"files" (one, or one per model), "transpose"?
/// (parameter names), "rename"? (spec name -> file name), "partial"? (a
/// bool)}.
void parseInitCheckpoint(const Reader &r, const json &root, Manifest &m) {
  if (!root.contains("init_checkpoint"))
    return;
  const json &init = root["init_checkpoint"];
  InitCheckpointSpec spec;
  spec.files = r.strings(r.field(init, "files", "init_checkpoint"),
                         "init_checkpoint.files");
  if (spec.files.size() != 1 &&
      static_cast<int64_t>(spec.files.size()) != m.models)
    r.fail("init_checkpoint.files",
           "has " + std::to_string(spec.files.size()) +
               " files, expected one or one per model (" +
               std::to_string(m.models) + ")");
  if (init.contains("transpose"))
    spec.transpose = r.strings(init["transpose"], "init_checkpoint.transpose");
  for (size_t i = 0; i < spec.transpose.size(); ++i) {
    auto param =
        std::find_if(m.params.begin(), m.params.end(), [&](const ParamSpec &p) {
          return p.name == spec.transpose[i];
        });
    if (param == m.params.end() || param->shape.size() != 2)
      r.fail(Reader::index("init_checkpoint.transpose", i),
             "names '" + spec.transpose[i] +
                 "', which is not a parameter of two dimensions");
  }
  if (init.contains("rename"))
    spec.rename = parseRename(r, init["rename"], m);
  if (init.contains("partial")) {
    if (!init["partial"].is_boolean())
      r.fail("init_checkpoint.partial", "must be true or false");
    spec.partial = init["partial"].get<bool>();
  }
  m.initCheckpoint = spec;
}

/// "seeds" (one per model), "outputs" (the loss first), "rank_by"? (one
/// of them), "precision"?.
void parseSeedsAndOutputs(const Reader &r, const json &root, Manifest &m) {
  const json &seeds = r.array(r.field(root, "seeds", ""), "seeds");
  if (static_cast<int64_t>(seeds.size()) != m.models)
    r.fail("seeds", "has " + std::to_string(seeds.size()) +
                        " entries, expected one per model (" +
                        std::to_string(m.models) + ")");
  for (size_t i = 0; i < seeds.size(); ++i)
    m.seeds.push_back(r.unsignedInt(seeds[i], Reader::index("seeds", i)));
  m.outputs = r.strings(r.field(root, "outputs", ""), "outputs");
  if (m.outputs.empty())
    r.fail("outputs", "must name at least the loss");
  parseSplitOutputs(r, root, m);
  parseInitCheckpoint(r, root, m);
  if (root.contains("rank_by")) {
    m.rankBy = r.string(root["rank_by"], "rank_by");
    if (std::find(m.outputs.begin(), m.outputs.end(), m.rankBy) ==
        m.outputs.end())
      r.fail("rank_by", "names '" + m.rankBy + "', which is not an output");
  }
  if (root.contains("precision")) {
    m.precision = r.string(root["precision"], "precision");
    if (m.precision != "bf16" && m.precision != "f16")
      r.fail("precision",
             "must be \"bf16\" or \"f16\", got \"" + m.precision + "\"");
  }
}

/// "data.batching" (optional, present for a data set of token sequences):
/// {"strategy", "token_budget", "window", "max_length"?}.
void parseBatching(const Reader &r, const json &data, Manifest &m) {
  if (!data.is_object() || !data.contains("batching"))
    return;
  const json &batching = data["batching"];
  DataSpec::SequenceBatching &b = m.data.batching;
  b.strategy = r.string(r.field(batching, "strategy", "data.batching"),
                        "data.batching.strategy");
  static const char *const kStrategies[] = {"dynamic", "fixed",
                                            "group-by-length", "fixed-shape"};
  if (std::find(std::begin(kStrategies), std::end(kStrategies), b.strategy) ==
      std::end(kStrategies))
    r.fail("data.batching.strategy",
           "must be dynamic, fixed, group-by-length or fixed-shape, got '" +
               b.strategy + "'");
  b.tokenBudget = r.integer(r.field(batching, "token_budget", "data.batching"),
                            "data.batching.token_budget");
  b.window = r.integer(r.field(batching, "window", "data.batching"),
                       "data.batching.window");
  if (b.tokenBudget < 1 || b.window < 1)
    r.fail("data.batching", "token_budget and window must be at least 1");
  if (batching.contains("max_length"))
    b.maxLength =
        r.nonNegative(batching["max_length"], "data.batching.max_length");
}

/// "data.routing" (optional, default shared) and, for kfold, "data.folds"
/// and "data.fold" (each model's held-out fold).
void parseRouting(const Reader &r, const json &data, Manifest &m) {
  if (!data.is_object() || !data.contains("routing"))
    return;
  std::string routing = r.string(data["routing"], "data.routing");
  std::optional<DataSpec::Routing> parsed =
      named(routing, kRoutings, routingName);
  if (!parsed)
    r.fail("data.routing",
           "must be shared, kfold or bootstrap, got '" + routing + "'");
  m.data.routing = *parsed;
  if (m.data.routing != DataSpec::Routing::KFold)
    return;
  m.data.folds = r.integer(r.field(data, "folds", "data"), "data.folds");
  if (m.data.folds < 2)
    r.fail("data.folds",
           "must be at least 2, got " + std::to_string(m.data.folds));
  const json &fold = r.array(r.field(data, "fold", "data"), "data.fold");
  if (static_cast<int64_t>(fold.size()) != m.models)
    r.fail("data.fold", "has " + std::to_string(fold.size()) +
                            " entries, expected one per model (" +
                            std::to_string(m.models) + ")");
  for (size_t i = 0; i < fold.size(); ++i) {
    int64_t f = r.integer(fold[i], Reader::index("data.fold", i));
    if (f < 0 || f >= m.data.folds)
      r.fail(Reader::index("data.fold", i), "must be in [0, " +
                                                std::to_string(m.data.folds) +
                                                "), got " + std::to_string(f));
    m.data.fold.push_back(f);
  }
}

/// "data.validation", "data.crop", "data.flip" (all optional), and what
/// they may be combined with.
void parseSplitsAndAugmentation(const Reader &r, const json &data,
                                Manifest &m) {
  if (data.is_object() && data.contains("validation")) {
    m.data.validation = r.number(data["validation"], "data.validation");
    if (!(m.data.validation >= 0 && m.data.validation < 1))
      r.fail("data.validation", "must be a fraction in [0, 1), got " +
                                    std::to_string(m.data.validation));
    if (m.data.validation > 0 && m.data.routing == DataSpec::Routing::KFold)
      r.fail("data.validation", "cannot be combined with kfold routing");
  }
  if (data.is_object() && data.contains("crop"))
    m.data.crop = r.nonNegative(data["crop"], "data.crop");
  if (data.is_object() && data.contains("flip")) {
    if (!data["flip"].is_boolean())
      r.fail("data.flip", "must be true or false");
    m.data.flip = data["flip"].get<bool>();
  }
  if (m.data.augments() && (m.inputShape.size() < 2 || m.inputShape.size() > 3))
    r.fail("data", "crop and flip augment images, but the input's shape has "
                   "rank " +
                       std::to_string(m.inputShape.size()) +
                       " (expected [C, H, W] or [H, W])");
  if (m.data.sequences() && (m.data.routing != DataSpec::Routing::Shared ||
                             m.data.validation > 0 || m.data.augments()))
    r.fail("data", "token sequences support shared routing only, with no "
                   "validation split or augmentation");
}

/// Whether a data set of files of `kind` takes setting `key`.
bool sourceTakes(const std::string &kind, const std::string &key) {
  static const std::set<std::string> npy = {"train_x", "train_y", "test_x",
                                            "test_y"};
  static const std::set<std::string> csv = {
      "train",     "test",      "target",  "columns",    "header",
      "skip_rows", "delimiter", "missing", "standardize"};
  if (kind == "npy")
    return npy.count(key) > 0;
  if (kind == "csv")
    return csv.count(key) > 0;
  if (key == "train" || key == "test")
    return true;
  if (kind == "image_folder")
    return key == "mean" || key == "std";
  return key == "x" || key == "y"; // npz, safetensors
}

/// Reads one setting of "data.source" into `s`.
void parseSourceSetting(const Reader &r, const std::string &key,
                        const json &value, DataSource &s) {
  std::string path = "data.source." + key;
  for (const auto &[name, member] : kDataSourceTexts)
    if (key == name) {
      s.*member = r.string(value, path);
      if (key == "missing" && s.missing != "zero" && s.missing != "mean")
        r.fail(path, "must be \"zero\" or \"mean\", got \"" + s.missing + "\"");
      return;
    }
  if (key == "columns") {
    s.columns = r.strings(value, path);
  } else if (key == "header" || key == "standardize") {
    if (!value.is_boolean())
      r.fail(path, "must be true or false");
    (key == "header" ? s.header : s.standardize) = value.get<bool>();
  } else if (key == "skip_rows") {
    s.skipRows = r.nonNegative(value, path);
  } else { // mean, std
    std::vector<double> &into = key == "mean" ? s.mean : s.stddev;
    const json &list = r.array(value, path);
    for (size_t i = 0; i < list.size(); ++i)
      into.push_back(r.number(list[i], Reader::index(path, i)));
  }
}

/// "data.source": the user's own files (DataSource), with the settings
/// their kind needs and no others.
void parseSource(const Reader &r, const json &data, Manifest &m) {
  const std::string &kind = m.data.name;
  const json &source = r.field(data, "source", "data");
  if (!source.is_object())
    r.fail("data.source", "expected an object");
  DataSource &s = m.data.source;
  for (const auto &[key, value] : source.items()) {
    if (!sourceTakes(kind, key))
      r.fail("data.source." + key, "is not a setting of " + kind + " data");
    parseSourceSetting(r, key, value, s);
  }
  bool npy = kind == "npy";
  if (npy ? s.trainX.empty() || s.trainY.empty() : s.train.empty())
    r.fail("data.source", npy ? "needs train_x and train_y" : "needs train");
  if (npy && s.testX.empty() != s.testY.empty())
    r.fail("data.source", "needs both test_x and test_y, or neither");
  if (kind == "csv" && s.target.empty())
    r.fail("data.source", "needs the target column");
  if (s.delimiter.size() > 1)
    r.fail("data.source.delimiter", "must be one character");
  int64_t channels = m.inputShape.size() == 3 ? m.inputShape[0] : 1;
  for (const auto &[key, values] :
       {std::pair{"mean", &s.mean}, std::pair{"std", &s.stddev}})
    if (values->size() > 1 && static_cast<int64_t>(values->size()) != channels)
      r.fail(std::string("data.source.") + key,
             "has " + std::to_string(values->size()) +
                 " values for an input of " + std::to_string(channels) +
                 " channels");
  for (double d : s.stddev)
    if (!(d > 0))
      r.fail("data.source.std", "must be positive");
}

/// "data": {"name", "batch", "shuffle_seed", ...}.
void parseData(const Reader &r, const json &root, Manifest &m) {
  const json &data = r.field(root, "data", "");
  m.data.name = r.string(r.field(data, "name", "data"), "data.name");
  if (isFileDataSet(m.data.name))
    parseSource(r, data, m);
  else if (data.is_object() && data.contains("source"))
    r.fail("data.source",
           "belongs to a data set of files, not '" + m.data.name + "'");
  parseBatching(r, data, m);
  if ((m.inputKind == Manifest::InputKind::Tokens) != m.data.sequences())
    r.fail("data", m.data.sequences()
                       ? "gives token sequences (batching), but the input "
                         "takes float features"
                       : "needs a batching for an input of token ids");
  m.data.batch = r.integer(r.field(data, "batch", "data"), "data.batch");
  if (m.data.batch < (m.data.sequences() ? 0 : 1))
    r.fail("data.batch",
           "must be at least 1, got " + std::to_string(m.data.batch));
  m.data.shuffleSeed =
      r.unsignedInt(r.field(data, "shuffle_seed", "data"), "data.shuffle_seed");
  parseRouting(r, data, m);
  parseSplitsAndAugmentation(r, data, m);
}

} // namespace

Manifest readManifest(const std::string &text, const std::string &origin) {
  Reader r(origin);
  json root;
  try {
    root = json::parse(text);
  } catch (const json::exception &e) {
    throw ManifestError("invalid manifest in '" + origin +
                        "': not valid JSON: " + e.what());
  }
  if (!root.is_object())
    throw ManifestError("invalid manifest in '" + origin +
                        "': expected a JSON object at the top level");
  Manifest m;
  parseHeader(r, root, m);
  parseParams(r, root, m);
  parseInput(r, root, m);
  parseTarget(r, root, m);
  parseOptimizer(r, root, m);
  parseModelArgs(r, root, m);
  parseClipNorm(r, root, m);
  parseSchedule(r, root, m);
  parseLossScale(r, root, m);
  parseSeedsAndOutputs(r, root, m);
  parseData(r, root, m);
  m.epochs = r.nonNegative(r.field(root, "epochs", ""), "epochs");
  return m;
}

} // namespace mbt
