//===- InitCheckpoint.cpp - Models that start from trained weights --------===//
#include "mbt/runtime/InitCheckpoint.h"

#include "mbt/runtime/Error.h"
#include "mbt/runtime/RunStateDict.h"
#include "mbt/runtime/data/Safetensors.h"
#include "mbt/runtime/data/TorchCheckpoint.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <set>

namespace mbt {
namespace runtime {

namespace {

/// A float tensor's elements as double (exact for every dtype read).
std::vector<double> valuesOf(const ArrayView &tensor) {
  std::vector<double> values(static_cast<size_t>(tensor.elements()));
  if (tensor.type == ElementType::F64) {
    std::memcpy(values.data(), tensor.data, values.size() * sizeof(double));
  } else if (tensor.type == ElementType::F32 ||
             tensor.type == ElementType::F16 ||
             tensor.type == ElementType::BF16) {
    std::vector<float> narrow(values.size());
    convertToFloat(tensor.type, tensor.data, narrow.size(), narrow.data());
    std::copy(narrow.begin(), narrow.end(), values.begin());
  } else {
    throw RuntimeError(fmt::format(
        "{} holds {} values; a parameter takes F32, F64, F16 or BF16",
        tensor.origin, elementTypeName(tensor.type)));
  }
  for (size_t i = 0; i < values.size(); ++i)
    if (!std::isfinite(values[i]))
      throw RuntimeError(fmt::format("{} holds {} at element {}", tensor.origin,
                                     values[i], i));
  return values;
}

/// A checkpoint's tensors: a .pt file (a zip archive, as torch.save
/// writes) is read whole, a safetensors file's header once; both give
/// views into the file's mapping. A model of a run checkpoint comes as
/// its state dict (RunStateDicts).
class StateDictFile {
public:
  explicit StateDictFile(const std::string &path) {
    if (!isTorchFile(path)) {
      safetensors.emplace(path);
      tensorNames = safetensors->names();
      return;
    }
#ifdef MBT_HAVE_NPZ
    take(readTorchStateDict(path));
#else
    throw RuntimeError(fmt::format(
        "'{}' is a .pt file, which this mbt runtime was built without "
        "(MBT_WITH_NPZ=OFF: no minizip); use a .safetensors file",
        path));
#endif
  }
  explicit StateDictFile(StateDict dict) { take(std::move(dict)); }

  /// Sorted.
  const std::vector<std::string> &names() const { return tensorNames; }
  bool has(const std::string &name) const {
    return std::binary_search(tensorNames.begin(), tensorNames.end(), name);
  }
  ArrayView tensor(const std::string &name) const {
    return safetensors ? safetensors->tensor(name) : tensors.at(name);
  }

private:
  void take(StateDict dict) {
    for (auto &[name, tensor] : dict)
      tensors.emplace(name, std::move(tensor));
    for (const auto &entry : tensors) // a map's order: sorted
      tensorNames.push_back(entry.first);
  }

  std::optional<SafetensorsArchive> safetensors;
  std::vector<std::string> tensorNames;
  std::map<std::string, ArrayView> tensors; // a .pt file's
};

/// The tensors of one file (or one model of a run checkpoint), checked
/// against the model's parameters and buffers and laid out as one model's
/// rows of params and buffers. `source` names it in messages ("'a.pt'").
class CheckpointRows {
public:
  CheckpointRows(const Manifest &manifest, const InitCheckpointSpec &init,
                 std::string source, StateDictFile file)
      : manifest(manifest), init(init), source(std::move(source)),
        file(std::move(file)) {}

  /// Writes the file's tensors into one model's rows (a tensor the file
  /// lacks leaves its place as it is, under `partial`).
  void load(std::vector<double> &paramRow, std::vector<double> &bufferRow) {
    std::set<std::string> used;
    for (const ParamSpec &param : manifest.params)
      if (read(param, paramRow))
        used.insert(init.tensorOf(param.name));
    for (size_t k = 0; k < manifest.buffers.size(); ++k) {
      if (manifest.isLossScaleBuffer(k))
        continue;
      if (read(manifest.buffers[k], bufferRow))
        used.insert(init.tensorOf(manifest.buffers[k].name));
    }
    std::vector<std::string> extra;
    for (const std::string &name : file.names())
      if (!used.count(name) && !isBatchCount(name))
        extra.push_back("'" + name + "'");
    if (!extra.empty() && !init.partial)
      throw RuntimeError(fmt::format(
          "{} holds tensors that are not parameters or buffers of model "
          "'{}': {} (checkpoint(..., partial = true) ignores them)",
          source, manifest.model, fmt::join(extra, ", ")));
  }

private:
  /// PyTorch's `BN.num_batches_tracked`, for a batch norm BN of the model
  /// (one with a buffer `BN.running_mean`): mbt's batch norm updates its
  /// statistics with a fixed momentum and never reads the count, so the
  /// count is not one of its buffers and is skipped even where the load is
  /// strict.
  bool isBatchCount(const std::string &name) const {
    static const std::string suffix = ".num_batches_tracked";
    if (name.size() <= suffix.size() ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix))
      return false;
    std::string mean =
        name.substr(0, name.size() - suffix.size()) + ".running_mean";
    return std::any_of(manifest.buffers.begin(), manifest.buffers.end(),
                       [&](const ParamSpec &b) { return b.name == mean; });
  }

  /// Reads `spec`'s tensor into row[spec.offset, + size); false when the
  /// file lacks it and that is allowed.
  bool read(const ParamSpec &spec, std::vector<double> &row) {
    const std::string &tensor = init.tensorOf(spec.name);
    if (!file.has(tensor)) {
      if (init.partial)
        return false;
      std::string renamed =
          tensor == spec.name ? "" : fmt::format(" (renamed '{}')", spec.name);
      throw RuntimeError(fmt::format(
          "{} has no tensor '{}'{} for model '{}' (checkpoint(..., partial "
          "= true) keeps the initializer of what the file lacks; rename = "
          "{{\"{}\": \"...\"}} reads it from a tensor of another name)",
          source, tensor, renamed, manifest.model, spec.name));
    }
    const std::vector<double> &values = valuesFor(spec);
    std::copy(values.begin(), values.end(), row.data() + spec.offset);
    return true;
  }

  /// The tensor's values in the parameter's layout: read, checked and
  /// converted once for all the models that start from this file.
  const std::vector<double> &valuesFor(const ParamSpec &spec) {
    auto cached = converted.find(spec.name);
    if (cached != converted.end())
      return cached->second;
    ArrayView tensor = file.tensor(init.tensorOf(spec.name));
    bool transposed =
        std::count(init.transpose.begin(), init.transpose.end(), spec.name) > 0;
    std::vector<int64_t> expected = spec.shape;
    if (transposed)
      std::reverse(expected.begin(), expected.end());
    if (tensor.shape != expected) {
      std::vector<int64_t> reversed = tensor.shape;
      std::reverse(reversed.begin(), reversed.end());
      std::string hint =
          !transposed && tensor.shape.size() == 2 && reversed == spec.shape
              ? fmt::format(" (it looks transposed, as nn.Linear's [out, "
                            "in]: checkpoint(..., transpose = [\"{}\"]))",
                            spec.name)
              : "";
      throw RuntimeError(fmt::format(
          "{} has shape {}, but '{}' of model '{}' "
          "is {}{}{}",
          tensor.origin, formatShape(tensor.shape), spec.name, manifest.model,
          formatShape(spec.shape),
          transposed ? " (transposed: " + formatShape(expected) + ")" : "",
          hint));
    }
    std::vector<double> values = valuesOf(tensor);
    if (transposed) {
      int64_t rows = spec.shape[0], cols = spec.shape[1];
      std::vector<double> stored = std::move(values);
      values.assign(stored.size(), 0.0);
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j)
          values[i * cols + j] = stored[j * rows + i];
    }
    return converted.emplace(spec.name, std::move(values)).first->second;
  }

  const Manifest &manifest;
  const InitCheckpointSpec &init;
  std::string source;
  StateDictFile file;
  std::map<std::string, std::vector<double>> converted;
};

/// The model of a run checkpoint's run that model `model` of a sweep of
/// `models` starts from: its own, or the only one.
int64_t modelOfRun(const RunStateDicts &run, int64_t model, int64_t models,
                   const std::string &path) {
  if (run.models() == 1)
    return 0;
  if (run.models() == models)
    return model;
  throw RuntimeError(fmt::format(
      "'{}' holds the {} models of its run, and the sweep has {}: model i "
      "starts from model i of a run of as many models (or every one from "
      "a run of one); start from one of its models/model-<i>.pt instead",
      path, run.models(), models));
}

} // namespace

void loadInitCheckpoint(const Manifest &manifest, FloatBuffer &params,
                        FloatBuffer &buffers,
                        const RunWriterManifest &writerOf) {
  if (manifest.initCheckpoint)
    loadInitCheckpoint(manifest, *manifest.initCheckpoint, params, buffers,
                       writerOf);
}

std::optional<InitCheckpointSpec>
chosenInitCheckpoint(const Manifest &manifest, const std::string &initFile) {
  std::optional<InitCheckpointSpec> init = manifest.initCheckpoint;
  if (initFile.empty())
    return init;
  if (!init)
    init.emplace();
  init->files = {initFile};
  return init;
}

void loadInitCheckpoint(const Manifest &manifest,
                        const InitCheckpointSpec &init, FloatBuffer &params,
                        FloatBuffer &buffers,
                        const RunWriterManifest &writerOf) {
  int64_t p = manifest.paramCount, q = manifest.bufferCount;
  // By file and, for a run checkpoint, the model of its run.
  std::map<std::pair<std::string, int64_t>, CheckpointRows> files;
  std::map<std::string, RunStateDicts> runs;
  for (int64_t model = 0; model < manifest.models; ++model) {
    const std::string &path = init.fileOf(model);
    const RunStateDicts *run = nullptr;
    int64_t runModel = 0;
    if (isRunCheckpoint(path)) {
      if (!writerOf)
        throw RuntimeError(fmt::format(
            "'{}' is a run checkpoint, and nothing here reads the artifact "
            "that names its rows",
            path));
      run = &runs.try_emplace(path, path, writerOf).first->second;
      runModel = modelOfRun(*run, model, manifest.models, path);
    }
    auto file = files.find({path, runModel});
    if (file == files.end())
      file = files
                 .emplace(std::pair(path, runModel),
                          run ? CheckpointRows(
                                    manifest, init,
                                    fmt::format("'{}' (model {} of its run)",
                                                path, runModel),
                                    StateDictFile(run->stateDict(runModel)))
                              : CheckpointRows(manifest, init, "'" + path + "'",
                                               StateDictFile(path)))
                 .first;
    // Each model's own rows: what a partial file lacks keeps the model's
    // own initial values.
    std::vector<double> paramRow = params.load(model * p, p);
    std::vector<double> bufferRow = buffers.load(model * q, q);
    file->second.load(paramRow, bufferRow);
    params.store(model * p, paramRow.data(), p);
    buffers.store(model * q, bufferRow.data(), q);
  }
}

} // namespace runtime
} // namespace mbt
