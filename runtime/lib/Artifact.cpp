//===- Artifact.cpp - dlopen an artifact and check its ABI ----------------===//
//
// The artifact imports the runtime's kernels (Kernels.h) as undefined
// symbols, which dlopen resolves against libraries already in the global
// scope. When libmbt_runtime.so was itself loaded RTLD_LOCAL (for instance
// by a Python host via ctypes) its symbols are not there, so load() first
// promotes this library to RTLD_GLOBAL.
//
//===----------------------------------------------------------------------===//

#include "mbt/runtime/Artifact.h"
#include "mbt/runtime/Checkpoint.h"

#include "mbt/runtime/CpuFeatures.h"
#include "mbt/runtime/DeviceMemory.h"
#include "mbt/runtime/Error.h"
#include "mbt/runtime/Kernels.h"
#include "mbt/runtime/LoopTeam.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <filesystem>

#include <utility>

namespace mbt {
namespace runtime {

namespace {
std::string dlErrorText() {
  const char *text = dlerror();
  return text ? text : "unknown dynamic loader error";
}

/// Makes this library's exported kernels visible to libraries dlopen'ed
/// later. Harmless when it already is (the usual case: linked by the tool).
void exportRuntimeSymbols() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void *>(&_mlir_ciface_mbt_rt_batch_matmul_f32),
             &info) &&
      info.dli_fname) {
    // RTLD_NOLOAD: only changes flags of the already-loaded library; the
    // extra reference is intentionally kept for the process lifetime.
    dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
  }
}

template <typename Fn>
Fn lookup(void *handle, const std::string &path, const char *symbol) {
  dlerror(); // clear stale state so the check below is about this call
  void *address = dlsym(handle, symbol);
  if (!address)
    throw RuntimeError("'" + path + "' is not an mbt artifact: symbol '" +
                       symbol + "' not found: " + dlErrorText());
  return reinterpret_cast<Fn>(address);
}
} // namespace

Manifest manifestBesideCheckpoint(const std::string &path,
                                  const RunCheckpoint &checkpoint) {
  std::filesystem::path artifactPath =
      std::filesystem::path(path).parent_path() / "model.so";
  if (!std::filesystem::exists(artifactPath))
    throw RuntimeError(fmt::format(
        "'{}' is a run checkpoint, whose tensors are named by the artifact "
        "that wrote it, and there is no '{}' beside it (mbtc train keeps it "
        "there); start from the run's models/model-<i>.pt or "
        ".safetensors instead",
        path, artifactPath.string()));
  Artifact artifact = Artifact::load(artifactPath.string());
  if (manifestDigest(artifact.manifestJson()) != checkpoint.manifestDigest)
    throw RuntimeError(fmt::format(
        "'{}' was not written by '{}' beside it (the artifact was "
        "recompiled since, or the checkpoint copied from another run)",
        path, artifactPath.string()));
  return artifact.manifest();
}

void Artifact::setHyperValues(std::vector<std::vector<double>> rows) {
  const Manifest &m = parsedManifest;
  if (static_cast<int64_t>(rows.size()) != m.models)
    throw RuntimeError(fmt::format("{} rows of hyperparameters for the {} "
                                   "models of '{}'",
                                   rows.size(), m.models, libraryPath));
  for (size_t model = 0; model < rows.size(); ++model) {
    if (static_cast<int64_t>(rows[model].size()) != m.numHyper())
      throw RuntimeError(fmt::format(
          "model {} has {} hyperparameters, but optimizer '{}' takes {} ({})",
          model, rows[model].size(), m.optimizerRule, m.numHyper(),
          fmt::join(m.hyperNames, ", ")));
    for (size_t h = 0; h < rows[model].size(); ++h)
      if (!std::isfinite(rows[model][h]))
        throw RuntimeError(fmt::format("model {}'s {} is {}", model,
                                       m.hyperNames[h], rows[model][h]));
  }
  parsedManifest.hyperValues = std::move(rows);
}

Artifact Artifact::load(const std::string &path) {
  exportRuntimeSymbols();
  configureLoopThreads();
  Artifact artifact;
  artifact.libraryPath = path;
  // dlopen searches the library path for names without a '/'; an artifact
  // is a file the user named, so make a bare name relative to the cwd.
  std::string openPath =
      path.find('/') == std::string::npos ? "./" + path : path;
  artifact.handle = dlopen(openPath.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!artifact.handle) {
    std::string reason = dlErrorText();
    // A --target=cuda artifact imports the GPU launch functions and the
    // cuBLAS kernel of libmbt_runtime_cuda.so, loaded on demand.
    if (reason.find("mgpu") != std::string::npos ||
        reason.find("mbt_rt_cuda_") != std::string::npos) {
      std::string why;
      if (loadCudaRuntime(why))
        artifact.handle = dlopen(openPath.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!artifact.handle)
        reason += " (a --target=cuda artifact; the CUDA runtime " +
                  (why.empty() ? "did not provide it: " + dlErrorText()
                               : "cannot be loaded: " + why) +
                  ")";
    }
    if (!artifact.handle)
      throw RuntimeError("cannot load artifact '" + path + "': " + reason);
  }
  // An artifact with parallel loops brought libomp: the kernels join its
  // team.
  findLoopTeam();

  auto version = lookup<AbiVersionFn>(artifact.handle, path, kAbiVersionSymbol);
  auto manifest = lookup<ManifestFn>(artifact.handle, path, kManifestSymbol);
  int64_t abi = version();
  if (abi != kAbiVersion)
    throw RuntimeError(fmt::format("artifact '{}' has ABI version {} but this "
                                   "runtime supports {}; rebuild it with a "
                                   "matching mbtc",
                                   path, abi, kAbiVersion));
  // Looked up once the version is known to be ours, so an older artifact
  // gets the version error rather than a missing-symbol one.
  artifact.trainFn = lookup<void *>(artifact.handle, path, kTrainStepSymbol);
  artifact.evalFn = lookup<void *>(artifact.handle, path, kEvalStepSymbol);
  artifact.trainWorkspaceFn =
      lookup<void *>(artifact.handle, path, kTrainStepWorkspaceSymbol);
  artifact.evalWorkspaceFn =
      lookup<void *>(artifact.handle, path, kEvalStepWorkspaceSymbol);
  // Optional (docs/abi.md): a runtime need not call it.
  artifact.optimizerFn = dlsym(artifact.handle, kOptimizerStepSymbol);
  if (artifact.optimizerFn)
    artifact.optimizerWorkspaceFn =
        lookup<void *>(artifact.handle, path, kOptimizerStepWorkspaceSymbol);
  const char *json = manifest();
  if (!json)
    throw RuntimeError("artifact '" + path + "' returned a null manifest");
  artifact.rawManifest = json;
  artifact.parsedManifest = parseManifest(artifact.rawManifest, path);
  // Before any step runs: the artifact's code for another CPU would die
  // of SIGILL in it.
  std::vector<std::string> missing =
      missingCpuFeatures(artifact.parsedManifest.cpuFeatures);
  if (!missing.empty())
    throw RuntimeError(fmt::format(
        "artifact '{}' was compiled for the CPU '{}', whose {} this CPU "
        "lacks: compile it on this machine, or with mbtc --mcpu naming a "
        "CPU this one has every feature of",
        path, artifact.parsedManifest.cpuName, fmt::join(missing, ", ")));
  if (artifact.parsedManifest.gradStep) {
    artifact.gradFn = lookup<void *>(artifact.handle, path, kGradStepSymbol);
    artifact.gradWorkspaceFn =
        lookup<void *>(artifact.handle, path, kGradStepWorkspaceSymbol);
  }
  return artifact;
}

void Artifact::checkDType(DType requested, const char *entry) const {
  if (requested != parsedManifest.dtype)
    throw RuntimeError(fmt::format(
        "artifact '{}' computes in {}, but {} was called with {} buffers",
        libraryPath, dtypeName(parsedManifest.dtype), entry,
        dtypeName(requested)));
}

void Artifact::checkInputTokens(bool tokens, const char *entry) const {
  bool isTokens = parsedManifest.inputKind == Manifest::InputKind::Tokens;
  if (tokens != isTokens)
    throw RuntimeError(fmt::format(
        "artifact '{}' takes {} as x, but {} was called with {}", libraryPath,
        isTokens ? "token ids (int32)" : "float features", entry,
        tokens ? "token ids" : "float features"));
}

void Artifact::checkTargetRank(int rank, const char *entry) const {
  const char *expected = "class indices [M, B]";
  if (parsedManifest.targetKind == Manifest::TargetKind::NextTokens)
    expected = "next tokens [M, B, T]";
  else if (parsedManifest.targetKind == Manifest::TargetKind::Values)
    expected = "values [M, B, K]";
  bool classes = parsedManifest.targetKind == Manifest::TargetKind::Classes;
  if (rank != (classes ? 2 : 3))
    throw RuntimeError(fmt::format(
        "artifact '{}' takes {} as y, but {} was called with a y of rank {}",
        libraryPath, expected, entry, rank));
}

void Artifact::checkGradStep() const {
  if (!gradFn)
    throw RuntimeError(fmt::format(
        "artifact '{}' has no mbt_grad_step, which a run with its data across "
        "ranks calls: compile the spec with mbtc --distribute=data",
        libraryPath));
}

Artifact::~Artifact() { close(); }

Artifact::Artifact(Artifact &&other) noexcept { *this = std::move(other); }

Artifact &Artifact::operator=(Artifact &&other) noexcept {
  if (this != &other) {
    close();
    libraryPath = std::move(other.libraryPath);
    handle = std::exchange(other.handle, nullptr);
    trainFn = std::exchange(other.trainFn, nullptr);
    evalFn = std::exchange(other.evalFn, nullptr);
    optimizerFn = std::exchange(other.optimizerFn, nullptr);
    trainWorkspaceFn = std::exchange(other.trainWorkspaceFn, nullptr);
    evalWorkspaceFn = std::exchange(other.evalWorkspaceFn, nullptr);
    optimizerWorkspaceFn = std::exchange(other.optimizerWorkspaceFn, nullptr);
    gradFn = std::exchange(other.gradFn, nullptr);
    gradWorkspaceFn = std::exchange(other.gradWorkspaceFn, nullptr);
    rawManifest = std::move(other.rawManifest);
    parsedManifest = std::move(other.parsedManifest);
  }
  return *this;
}

void Artifact::close() {
  if (handle)
    dlclose(handle);
  handle = nullptr;
}

} // namespace runtime
} // namespace mbt
