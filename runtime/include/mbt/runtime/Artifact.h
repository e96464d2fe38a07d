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

struct RunCheckpoint;

/// The manifest of the artifact beside the run checkpoint `checkpoint`
/// read from `path` (DIR/model.so, where mbtc train keeps it), which must
/// be the artifact that wrote it (the checkpoint's manifest digest); throws
/// RuntimeError naming both otherwise. A warm start from a run checkpoint
/// names its rows with it (RunStateDict.h).
Manifest manifestBesideCheckpoint(const std::string &path,
                                  const RunCheckpoint &checkpoint);

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

  /// Replaces the optimizer's hyperparameters of every model (M rows of H
  /// values, in the manifest's order) for the runs of this Artifact: the
  /// train step reads them from its `hyper` argument, so they need no
  /// recompiling, and the results report them. Throws RuntimeError on a
  /// table of another size or a value that is not finite. (The rule's
  /// asserts, such as Adam's beta1 in [0, 1), are checked by the compiler
  /// on the spec's values only.)
  void setHyperValues(std::vector<std::vector<double>> rows);

  /// The model's float type: the element type of params, state, x, out.
  DType dtype() const { return parsedManifest.dtype; }

  /// The entry points for float buffers of T (float for dtype f32, double
  /// for f64). Throws RuntimeError when T is not the artifact's dtype.
  /// X is the element type of x: T, or int32_t for a tokens input; YRank
  /// the rank of y: 2 for class indices, 3 for next tokens.
  template <typename T = float, typename X = T, int YRank = 2>
  TrainStepFnOf<T, X, YRank> trainStep() const {
    return stepEntry<TrainStepFnOf<T, X, YRank>, T, X, YRank>(
        trainFn, "mbt_train_step", "mbt_train_step");
  }
  template <typename T = float, typename X = T, int YRank = 2>
  EvalStepFnOf<T, X, YRank> evalStep() const {
    return stepEntry<EvalStepFnOf<T, X, YRank>, T, X, YRank>(
        evalFn, "mbt_eval_step", "mbt_eval_step");
  }
  /// The optimizer step alone (docs/abi.md); null for an artifact built
  /// before mbtc exported it.
  template <typename T = float> OptimizerStepFnOf<T> optimizerStep() const {
    checkDType(dtypeOf<T>(), "mbt_optimizer_step");
    return reinterpret_cast<OptimizerStepFnOf<T>>(optimizerFn);
  }
  /// The train step up to the gradients (docs/abi.md), which an artifact
  /// has when its manifest says grad_step (mbtc --distribute=data);
  /// throws RuntimeError for one without it.
  template <typename T = float, typename X = T, int YRank = 2>
  GradStepFnOf<T, X, YRank> gradStep() const {
    checkGradStep();
    return stepEntry<GradStepFnOf<T, X, YRank>, T, X, YRank>(
        gradFn, "mbt_grad_step", "mbt_grad_step");
  }
  template <typename T = float, typename X = T, int YRank = 2>
  GradStepWorkspaceFnOf<T, X, YRank> gradStepWorkspace() const {
    checkGradStep();
    return stepEntry<GradStepWorkspaceFnOf<T, X, YRank>, T, X, YRank>(
        gradWorkspaceFn, "mbt_grad_step_workspace_bytes", "mbt_grad_step");
  }
  /// The workspace size of each entry point (docs/abi.md, "The
  /// workspace"); the optimizer step's is null when that step is.
  template <typename T = float, typename X = T, int YRank = 2>
  TrainStepWorkspaceFnOf<T, X, YRank> trainStepWorkspace() const {
    return stepEntry<TrainStepWorkspaceFnOf<T, X, YRank>, T, X, YRank>(
        trainWorkspaceFn, "mbt_train_step_workspace_bytes", "mbt_train_step");
  }
  template <typename T = float, typename X = T, int YRank = 2>
  EvalStepWorkspaceFnOf<T, X, YRank> evalStepWorkspace() const {
    return stepEntry<EvalStepWorkspaceFnOf<T, X, YRank>, T, X, YRank>(
        evalWorkspaceFn, "mbt_eval_step_workspace_bytes", "mbt_eval_step");
  }
  template <typename T = float>
  OptimizerStepWorkspaceFnOf<T> optimizerStepWorkspace() const {
    checkDType(dtypeOf<T>(), "mbt_optimizer_step_workspace_bytes");
    return reinterpret_cast<OptimizerStepWorkspaceFnOf<T>>(
        optimizerWorkspaceFn);
  }

private:
  Artifact() = default;
  /// `fn` as the entry point `Fn` of a step on buffers of T, x of X and y
  /// of rank YRank; throws unless they fit the artifact. `entry` names
  /// the symbol in the dtype's message, `step` the step in the others.
  template <typename Fn, typename T, typename X, int YRank>
  Fn stepEntry(void *fn, const char *entry, const char *step) const {
    checkDType(dtypeOf<T>(), entry);
    checkInput<X>(step);
    checkTargetRank(YRank, step);
    return reinterpret_cast<Fn>(fn);
  }
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
  void checkGradStep() const;

  std::string libraryPath;
  void *handle = nullptr;
  void *trainFn = nullptr;
  void *evalFn = nullptr;
  void *optimizerFn = nullptr;
  void *trainWorkspaceFn = nullptr;
  void *evalWorkspaceFn = nullptr;
  void *optimizerWorkspaceFn = nullptr;
  void *gradFn = nullptr;
  void *gradWorkspaceFn = nullptr;
  std::string rawManifest;
  Manifest parsedManifest;
};

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_ARTIFACT_H
