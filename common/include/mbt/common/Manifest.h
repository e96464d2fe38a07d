//===- Manifest.h - the artifact's self-description, one schema -*- C++ -*-===//
//
// The manifest is the JSON document an artifact returns from mbt_manifest()
// (docs/abi.md, "The manifest"): how big every buffer is, how to initialize
// the parameters, the hyperparameter table, the seeds, and what data to
// feed. This struct is its one schema: the compiler fills it from the fused
// module and writes it with writeManifest(); the runtime reads it back with
// readManifest(), which checks everything the runtime will rely on (sizes
// consistent, rows complete) and names the field at fault, so that a bad
// artifact is rejected before any buffer is touched. Plain C++17 and
// nlohmann/json: the runtime builds on hosts without MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_COMMON_MANIFEST_H
#define MBT_COMMON_MANIFEST_H

#include "mbt/common/Abi.h"

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace mbt {

/// How one parameter tensor is initialized.
struct InitSpec {
  enum class Kind {
    Zeros,
    Ones,
    Normal,
    Uniform,
    XavierUniform,
    KaimingUniform,
    Constant
  };
  Kind kind = Kind::Zeros;
  double mean = 0.0, stddev = 0.0; // Normal ("std" in the JSON)
  double low = 0.0, high = 0.0;    // Uniform
  double value = 0.0;              // Constant
};

/// Spelling of an init kind in the manifest ("kaiming_uniform", ...).
const char *initKindName(InitSpec::Kind kind);

/// One parameter tensor: columns [offset, offset + size) of a params row.
/// The trainable parameters take columns [0, trainableCount) in manifest
/// order, the frozen ones (the sweep's freeze) the columns after them.
struct ParamSpec {
  std::string name;
  std::vector<int64_t> shape;
  int64_t offset = 0;
  int64_t size = 0;
  InitSpec init;
  /// Whether the optimizer's weight decay applies to it (the sweep's
  /// no_decay patterns exclude parameters; optional, default true).
  bool decay = true;
  /// Whether the optimizer updates it (the sweep's freeze patterns exclude
  /// parameters; optional, default true).
  bool trainable = true;
};

/// The user's own data (docs/data.md, "Your own data"): the files of a data
/// set named "npz", "npy", "csv", "image_folder" or "safetensors" and how to
/// read them. Paths are absolute: the compiler resolves them against the
/// spec's folder. An empty string is an absent setting. The compiler fills
/// it from the spec, the manifest carries it, the runtime's readers take it.
struct DataSource {
  /// npz, csv, image_folder, safetensors: the file (or folder) of each
  /// split; the test split is optional.
  std::string train, test;
  /// npy: one file per array.
  std::string trainX, trainY, testX, testY;
  /// npz, safetensors: the names of the input and target arrays.
  std::string x = "x", y = "y";
  /// csv: the target column and the feature columns (by header name or
  /// 0-based index; none: every column but the target), whether the first
  /// row names the columns, the lines before it, the field delimiter (one
  /// character; "": a tab for .tsv files, else a comma), and whether each
  /// feature is scaled by the training split's mean and deviation.
  std::string target;
  std::vector<std::string> columns;
  bool header = true;
  int64_t skipRows = 0;
  std::string delimiter;
  /// What fills a missing feature cell (empty, NA, NaN, ...): "" an error,
  /// "zero" 0, "mean" the training split's mean of the column.
  std::string missing;
  bool standardize = false;
  /// image_folder: per-channel normalization after scaling to [0, 1],
  /// (x - mean) / std, one value per channel or one for all (empty:
  /// mean 0, std 1).
  std::vector<double> mean, stddev;

  bool hasTest() const { return !test.empty() || !testX.empty(); }
  bool operator==(const DataSource &other) const;
};

/// The text settings of DataSource by their key, which the language, the
/// IR's `data_source` and the manifest's "data.source" share; a setting
/// equal to DataSource{}'s is left out where they are written.
inline constexpr std::pair<const char *, std::string DataSource::*>
    kDataSourceTexts[] = {{"train", &DataSource::train},
                          {"test", &DataSource::test},
                          {"train_x", &DataSource::trainX},
                          {"train_y", &DataSource::trainY},
                          {"test_x", &DataSource::testX},
                          {"test_y", &DataSource::testY},
                          {"x", &DataSource::x},
                          {"y", &DataSource::y},
                          {"target", &DataSource::target},
                          {"delimiter", &DataSource::delimiter},
                          {"missing", &DataSource::missing}};

/// Whether `name` is a data set of the user's own files (DataSource).
bool isFileDataSet(const std::string &name);

/// Which data set to feed and how.
struct DataSpec {
  std::string name; // e.g. "fashion_mnist", or a file kind ("csv")
  /// The files of the user's own data (isFileDataSet(name)).
  DataSource source;
  int64_t batch = 0;        // samples per step
  uint64_t shuffleSeed = 0; // seeds the per-epoch permutation (Sampler.h)
  /// Which samples each model trains on (DataRouting.h).
  enum class Routing { Shared, KFold, Bootstrap } routing = Routing::Shared;
  int64_t folds = 0;         // kfold: the number of folds
  std::vector<int64_t> fold; // kfold: each model's held-out fold
  /// The fraction of the training split held out for validation, the same
  /// samples for every model (0: none; not with kfold).
  double validation = 0;
  /// Training-time augmentation of an image input ([C, H, W] or [H, W];
  /// Augment.h): a random crop of the image padded by `crop` zeros per
  /// side (0: none) and a random horizontal flip, drawn per model.
  int64_t crop = 0;
  bool flip = false;
  bool augments() const { return crop > 0 || flip; }
  /// How a data set of token sequences groups its samples into steps
  /// (LengthBatching.h, docs/data.md): the strategy's name ("" for data of
  /// fixed-size samples), the padded tokens a step may hold, the samples
  /// sorted together, and the length beyond which a sample is cut (0:
  /// none). `batch` is then the rows of a fixed step (0: the budget over
  /// the longest sample).
  struct SequenceBatching {
    std::string strategy;
    int64_t tokenBudget = 0, window = 0, maxLength = 0;
  } batching;
  bool sequences() const { return !batching.strategy.empty(); }
};

/// Spelling of a routing in the manifest ("shared", "kfold", "bootstrap").
const char *routingName(DataSpec::Routing routing);

/// Each model's dynamic loss scale (precision f16): GradScaler's settings
/// and the buffers (indices into Manifest::buffers, one number each) that
/// the artifact keeps its state in.
struct LossScaleSpec {
  double initScale = 0, growthFactor = 0, backoffFactor = 0;
  int64_t growthInterval = 0;
  int64_t scaleBuffer = -1, goodStepsBuffer = -1, skippedStepsBuffer = -1;
  bool holds(int64_t buffer) const {
    return buffer == scaleBuffer || buffer == goodStepsBuffer ||
           buffer == skippedStepsBuffer;
  }
};

/// An output the runtime makes over a whole split from several columns of
/// the step's `out` (each a mean over the step's samples), rather than the
/// mean of one column (docs/abi.md): rmse from the K columns' mean squared
/// errors; r2 from those, the K means of the expected values and their K
/// variances about each step's mean.
struct SplitOutput {
  std::string name;
  enum class Reduce { Rmse, R2 } reduce = Reduce::Rmse;
  int64_t width = 0; // K: the values per sample it compares
  int64_t columns() const { return reduce == Reduce::R2 ? 3 * width : width; }
};

/// A warm start (`init = checkpoint(...)`): safetensors files whose tensors
/// replace the initial parameters and buffers, matched by name.
struct InitCheckpointSpec {
  /// One file for every model, or one per model; absolute paths.
  std::vector<std::string> files;
  /// Parameters stored transposed (PyTorch's nn.Linear keeps [out, in]).
  std::vector<std::string> transpose;
  /// Whether a file may lack parameters (they keep their initializers)
  /// and hold tensors the model does not have (ignored).
  bool partial = false;
  /// The file's name of a parameter or buffer whose name differs from the
  /// spec's (spec name -> file name; `rename = {...}`).
  std::map<std::string, std::string> rename;
  const std::string &fileOf(int64_t model) const {
    return files.size() == 1 ? files[0] : files[static_cast<size_t>(model)];
  }
  /// The name of parameter or buffer `name`'s tensor in the file.
  const std::string &tensorOf(const std::string &name) const {
    auto renamed = rename.find(name);
    return renamed == rename.end() ? name : renamed->second;
  }
};

/// The parsed, validated manifest. Sizes use the ABI's letters.
struct Manifest {
  int64_t abiVersion = 0;
  /// The element type of params, state, x and out.
  DType dtype = DType::F32;
  /// Where the artifact wants its buffers: host memory, or the GPU's (a
  /// --target=cuda artifact). Optional in the JSON, default cpu.
  enum class Device { CPU, CUDA } device = Device::CPU;
  std::string model;
  int64_t models = 0; // M
  /// A slice of a larger sweep (the models one rank of a run over several
  /// processes trains): model i is model firstModel + i of the sweep's
  /// sweepModels. A whole sweep: 0 and M (or 0, where a test builds the
  /// struct). Optional in the JSON ("first_model", "sweep_models"),
  /// written for a slice only.
  int64_t firstModel = 0;
  int64_t sweepModels = 0;
  bool isSlice() const { return sweepModels > models; }
  /// The models of the whole sweep this one is (a slice of).
  int64_t totalModels() const { return isSlice() ? sweepModels : models; }
  /// Whether the artifact has the entry point mbt_grad_step, which a run
  /// with its data across ranks needs (mbtc --distribute=data). Optional
  /// in the JSON ("grad_step"), written when true.
  bool gradStep = false;
  /// The CPU the artifact's code was generated for (LLVM's name: the
  /// host's, or `mbtc --mcpu`'s) and the instruction set extensions of
  /// kCheckedCpuFeatures it may use, which a runtime checks before it
  /// calls the artifact. Optional in the JSON ("cpu": {"name",
  /// "features"}): a --target=cuda artifact's host code and a manifest made
  /// by hand have none.
  std::string cpuName;
  std::vector<std::string> cpuFeatures;
  std::vector<ParamSpec> params;
  int64_t paramCount = 0; // P
  /// P_t: the columns of the trainable parameters, the first of a row; the
  /// state is [S, M, P_t] and the gradients [M, P_t] (P without freeze).
  int64_t trainableCount = 0;
  /// The buffers (running statistics: per-model tensors the train step
  /// updates but does not train), in a [M, Q] buffer of their own.
  std::vector<ParamSpec> buffers;
  int64_t bufferCount = 0; // Q
  std::string inputName;
  /// What x holds: F float features per sample, or token ids (int32
  /// [B, T], T set by each step; ABI version 8).
  enum class InputKind { Features, Tokens } inputKind = InputKind::Features;
  std::vector<int64_t> inputShape; // empty for tokens
  int64_t features = 0;            // F; 0 for tokens
  int64_t vocab = 0;               // tokens: every id lies in [0, vocab)
  std::string targetName;
  /// What y holds: a class index per sample ([B]), the input's next
  /// token at every position ([B, T]: a language model; ABI version 9), or
  /// K float values per sample to regress ([B, K], of the model's dtype).
  enum class TargetKind {
    Classes,
    NextTokens,
    Values
  } targetKind = TargetKind::Classes;
  int64_t classes = 0;     // classes, or the vocabulary of next tokens
  int64_t targetWidth = 0; // K of a Values target
  std::string optimizerRule;
  /// The bool arguments that chose the rule's code (reported, not used).
  std::map<std::string, bool> optimizerFlags;
  std::vector<std::string> slots;               // S = slots.size()
  std::vector<std::string> hyperNames;          // H = hyperNames.size()
  std::vector<std::vector<double>> hyperValues; // M rows of H
  /// The model's arguments as the sweep set them (optional): M rows.
  std::vector<std::string> modelArgNames;
  std::vector<std::vector<double>> modelArgValues;
  /// Each model's gradient-norm bound; empty without clipping.
  std::vector<double> clipNorm;
  /// The learning-rate schedule ("" without one), its parameter names and
  /// M rows of their values.
  std::string scheduleName;
  std::vector<std::string> scheduleParamNames;
  std::vector<std::vector<double>> scheduleValues;
  std::vector<uint64_t> seeds; // one per model
  /// The outputs reported per model and split; outputs[0] is the loss.
  std::vector<std::string> outputs;
  /// The outputs among them made over a whole split; every other output is
  /// one column of `out`, the columns in the order of the outputs.
  std::vector<SplitOutput> splitOutputs;
  /// The output the results rank the models by (optional; "": the last
  /// accuracy, else the loss).
  std::string rankBy;
  DataSpec data;
  int64_t epochs = 0;
  /// Mixed precision: the format of the model's products ("bf16", "f16"),
  /// which the artifact rounds to itself; "" for none. Reported, not used.
  std::string precision;
  /// The loss scale of precision f16, if the artifact has one.
  std::optional<LossScaleSpec> lossScale;
  /// Whether buffer `k` holds the loss scale's state (the run's, not the
  /// model's: state dicts and warm starts leave it out).
  bool isLossScaleBuffer(size_t k) const {
    return lossScale && lossScale->holds(static_cast<int64_t>(k));
  }
  /// Where the models start from, if not from their initializers.
  std::optional<InitCheckpointSpec> initCheckpoint;

  int64_t numSlots() const { return static_cast<int64_t>(slots.size()); }
  int64_t numHyper() const { return static_cast<int64_t>(hyperNames.size()); }
  int64_t numOutputs() const { return static_cast<int64_t>(outputs.size()); }
  /// The split output named `name`, or null for a mean of one column.
  const SplitOutput *splitOutput(const std::string &name) const {
    for (const SplitOutput &split : splitOutputs)
      if (split.name == name)
        return &split;
    return nullptr;
  }
  /// How many columns of `out` output `name` takes.
  int64_t columnsOf(const std::string &name) const {
    const SplitOutput *split = splitOutput(name);
    return split ? split->columns() : 1;
  }
  /// K: the columns of the step's `out` per model.
  int64_t numColumns() const {
    int64_t columns = 0;
    for (const std::string &output : outputs)
      columns += columnsOf(output);
    return columns;
  }
};

/// Writes `manifest` as JSON (keys sorted, numbers exact). readManifest()
/// of the text gives back an equal struct.
std::string writeManifest(const Manifest &manifest);

/// What readManifest() throws: the message starts with "invalid manifest in
/// '<origin>'" and names the field by its JSON path (e.g. "params[1].offset").
class ManifestError : public std::runtime_error {
public:
  explicit ManifestError(const std::string &message)
      : std::runtime_error(message) {}
};

/// Parses and validates manifest JSON. `origin` (typically the artifact
/// path) prefixes every error message. Throws ManifestError.
Manifest readManifest(const std::string &json, const std::string &origin);

} // namespace mbt

#endif // MBT_COMMON_MANIFEST_H
