//===- Artifact.h - A loaded, compiled model batch --------------*- C++ -*-===//
//
// Opens the shared library mbtc produced, resolves the symbols of
// docs/abi.md, checks the ABI version and parses the manifest. The library
// stays loaded for the Artifact's lifetime; the function pointers are only
// valid while it lives.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_ARTIFACT_H
#define MBT_RUNTIME_ARTIFACT_H

#include "mbt/common/Abi.h"
#include "mbt/runtime/Manifest.h"

#include <string>
#include <type_traits>

namespace mbt {
namespace runtime {

class Artifact {
public:
  /// dlopen(path, RTLD_NOW | RTLD_LOCAL) and validate. Throws RuntimeError
  /// naming `path` (and dlerror's text) on any failure.
  static Artifact load(const std::string &path);

  ~Artifact();
  Artifact(Artifact &&other) noexcept;
  Artifact &operator=(Artifact &&other) noexcept;
  Artifact(const Artifact &) = delete;
  Artifact &operator=(const Artifact &) = delete;

  const std::string &path() const { return libraryPath; }
  const Manifest &manifest() const { return parsedManifest; }
  /// The manifest JSON exactly as the artifact returned it.
  const std::string &manifestJson() const { return rawManifest; }

  /// The model's float type: the element type of params, state, x, out.
  DType dtype() const { return parsedManifest.dtype; }

  /// The entry points for float buffers of T (float for dtype f32, double
  /// for f64). Throws RuntimeError when T is not the artifact's dtype.
  /// X is the element type of x: T, or int32_t for a tokens input; YRank
  /// the rank of y: 2 for class indices, 3 for next tokens.
  template <typename T = float, typename X = T, int YRank = 2>
  TrainStepFnOf<T, X, YRank> trainStep() const {
    checkDType(dtypeOf<T>(), "mbt_train_step");
    checkInput<X>("mbt_train_step");
    checkTargetRank(YRank, "mbt_train_step");
    return reinterpret_cast<TrainStepFnOf<T, X, YRank>>(trainFn);
  }
  template <typename T = float, typename X = T, int YRank = 2>
  EvalStepFnOf<T, X, YRank> evalStep() const {
    checkDType(dtypeOf<T>(), "mbt_eval_step");
    checkInput<X>("mbt_eval_step");
    checkTargetRank(YRank, "mbt_eval_step");
    return reinterpret_cast<EvalStepFnOf<T, X, YRank>>(evalFn);
  }
  /// The optimizer step alone (docs/abi.md); null for an artifact built
  /// before mbtc exported it.
  template <typename T = float> OptimizerStepFnOf<T> optimizerStep() const {
    checkDType(dtypeOf<T>(), "mbt_optimizer_step");
    return reinterpret_cast<OptimizerStepFnOf<T>>(optimizerFn);
  }
  /// The workspace size of each entry point (docs/abi.md, "The
  /// workspace"); the optimizer step's is null when that step is.
  template <typename T = float, typename X = T, int YRank = 2>
  TrainStepWorkspaceFnOf<T, X, YRank> trainStepWorkspace() const {
    checkDType(dtypeOf<T>(), "mbt_train_step_workspace_bytes");
    checkInput<X>("mbt_train_step");
    checkTargetRank(YRank, "mbt_train_step");
    return reinterpret_cast<TrainStepWorkspaceFnOf<T, X, YRank>>(
        trainWorkspaceFn);
  }
  template <typename T = float, typename X = T, int YRank = 2>
  EvalStepWorkspaceFnOf<T, X, YRank> evalStepWorkspace() const {
    checkDType(dtypeOf<T>(), "mbt_eval_step_workspace_bytes");
    checkInput<X>("mbt_eval_step");
    checkTargetRank(YRank, "mbt_eval_step");
    return reinterpret_cast<EvalStepWorkspaceFnOf<T, X, YRank>>(
        evalWorkspaceFn);
  }
  template <typename T = float>
  OptimizerStepWorkspaceFnOf<T> optimizerStepWorkspace() const {
    checkDType(dtypeOf<T>(), "mbt_optimizer_step_workspace_bytes");
    return reinterpret_cast<OptimizerStepWorkspaceFnOf<T>>(
        optimizerWorkspaceFn);
  }

private:
  Artifact() = default;
  void close();
  void checkDType(DType requested, const char *entry) const;
  /// Throws unless X fits the input: int32_t for token ids, else T.
  template <typename X> void checkInput(const char *entry) const {
    checkInputTokens(std::is_same<X, int32_t>::value, entry);
  }
  void checkInputTokens(bool tokens, const char *entry) const;
  /// Throws unless y of rank `rank` fits the target: 3 for next tokens,
  /// else 2.
  void checkTargetRank(int rank, const char *entry) const;

  std::string libraryPath;
  void *handle = nullptr;
  void *trainFn = nullptr;
  void *evalFn = nullptr;
  void *optimizerFn = nullptr;
  void *trainWorkspaceFn = nullptr;
  void *evalWorkspaceFn = nullptr;
  void *optimizerWorkspaceFn = nullptr;
  std::string rawManifest;
  Manifest parsedManifest;
};

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_ARTIFACT_H
