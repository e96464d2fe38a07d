//===- StepRunner.h - the artifact's steps on the buffers ------*- C++ -*-===//
//
// Owns every buffer of docs/abi.md and calls the artifact's train and eval
// steps on them. The trainer loads a batch into x and y, sets each model's
// step number and reads the outputs; the StepRunner passes each buffer as
// the descriptor of the loaded batch's shape and checks what the kernels
// reported. A --target=cuda artifact's buffers are mirrored on the GPU
// (DeviceMemory.h): each step uploads the batch and downloads the outputs;
// params, state and buffers come back when read.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_STEPRUNNER_H
#define MBT_RUNTIME_STEPRUNNER_H

#include "mbt/runtime/AlignedBuffer.h"
#include "mbt/runtime/Artifact.h"
#include "mbt/runtime/DeviceMemory.h"
#include "mbt/runtime/FloatBuffer.h"
#include "mbt/runtime/TrainOptions.h"
#include "mbt/runtime/Workspace.h"
#include "mbt/runtime/distributed/DeviceCollectives.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace mbt {
namespace runtime {

/// a * b, or a RuntimeError naming `what` when a size would overflow.
int64_t checkedMul(int64_t a, int64_t b, const char *what);

class StepRunner {
public:
  /// Allocates every buffer with its initial values (parameters and
  /// buffers from the manifest's initializers, the hyperparameters) and,
  /// for a CUDA artifact, their device copies (options.openDevice; graphs
  /// per options.deviceGraphs, a failed capture warned of on
  /// options.progress). The artifact must outlive the StepRunner.
  StepRunner(const Artifact &artifact, const TrainOptions &options);
  ~StepRunner();
  StepRunner(const StepRunner &) = delete;
  StepRunner &operator=(const StepRunner &) = delete;

  /// The model's float type (the artifact's dtype).
  DType dtype() const { return paramsBuf.dtype(); }
  /// Where the steps run: "cpu", or the device's name.
  std::string deviceName() const;

  /// params [M, P], state [S, M, P] and buffers [M, Q] on the host, brought
  /// back from the device first if the steps changed them there.
  FloatBuffer &params() {
    syncFromDevice();
    return paramsBuf;
  }
  const FloatBuffer &params() const {
    syncFromDevice();
    return paramsBuf;
  }
  const FloatBuffer &state() const {
    syncFromDevice();
    return stateBuf;
  }
  const FloatBuffer &buffers() const {
    syncFromDevice();
    return buffersBuf;
  }
  /// Their sizes in bytes (nothing is brought back).
  size_t paramBytes() const { return paramsBuf.bytes(); }
  size_t stateBytes() const { return stateBuf.bytes(); }
  size_t bufferBytes() const { return buffersBuf.bytes(); }
  /// Replaces params, state and buffers with these bytes (each its
  /// buffer's size; `buffers` may be empty when there are none), on the
  /// host and the device.
  void setState(const std::vector<uint8_t> &params,
                const std::vector<uint8_t> &state,
                const std::vector<uint8_t> &buffers);

  /// The batch the next step reads. Float features: x [M, B, F] of the
  /// float type, or model 0's slice only when every model shares the batch
  /// (setXShared), and y [M, B] class indices or, for a target of values,
  /// yValues [M, B, K] of the float type.
  FloatBuffer &x() { return xBuf; }
  int32_t *y() { return yBuf.data(); }
  FloatBuffer &yValues() { return yValuesBuf; }
  /// Token ids: x's [b, width] block, which every model reads, grown to
  /// hold it; y grown to `perModel` elements per model ([M, b] class
  /// indices or [M, b, width] next tokens).
  int32_t *tokenBlock(int64_t b, int64_t width);
  int32_t *labels(int64_t perModel);
  /// Whether x holds one batch every model shares (passed with stride 0
  /// along the model dimension) or a slice per model.
  void setXShared(bool shared) { xShared = shared; }

  /// Each model's step number for the next train step ([M]; 0 freezes the
  /// model: the step leaves it as it is).
  AlignedBuffer<double> &stepNumbers() { return stepBuf; }
  /// `out` of the last step: [M, K].
  const FloatBuffer &outputs() const { return outBuf; }

  /// Runs the artifact's train (eval) step, with the element types of its
  /// buffers, on the loaded batch of `b` samples. Throws RuntimeError if a
  /// kernel reported a malformed call.
  void trainStep(int64_t b);
  void evalStep(int64_t b);

  /// A train step in two halves, for a run with its data across ranks
  /// (the artifact's grad step): gradStep computes every model's
  /// gradients of its loss on the loaded batch into grads() (and rewrites
  /// the buffers' rows of the models that step, and out), then the caller
  /// may change grads(), mutableBuffers() and the step numbers (the sums
  /// over the ranks) before optimizerStep updates params and state from
  /// them. On a device, gradStep brings grads and buffers back to the host
  /// and optimizerStep takes them there again.
  void gradStep(int64_t b);
  void optimizerStep();
  /// On a device with `collectives` (DeviceCollectives.h), gradStep leaves
  /// the gradients and buffers there, for sumOnDevice.
  void keepSumsOnDevice(DeviceCollectives *sums) { collectives = sums; }
  bool sumsOnDevice() const { return collectives != nullptr; }
  /// On the device, after gradStep: the gradients become sum_r f_r
  /// grads_r over the ranks (f_r each rank's `fraction`; 0: this rank adds
  /// nothing), the buffers rank 0's, brought back to the host too for the
  /// caller's corrections before optimizerStep.
  void sumOnDevice(double fraction, const std::string &what);
  /// [M, P_t]: the gradients of the last gradStep (allocated at the
  /// first use, on the device too).
  FloatBuffer &grads();
  /// buffers [M, Q] to change in place: between gradStep and
  /// optimizerStep, on a device too.
  FloatBuffer &mutableBuffers() { return buffersBuf; }

private:
  /// The buffers, sized for the largest batch, and their initial values.
  void allocate();
  void initialize(const TrainOptions &options);
  /// The descriptor of x for a loaded batch of `b` samples: dense, or with
  /// stride 0 along the model dimension when every model shares the batch.
  template <typename T> MemRef<T, 3> xDescriptor(T *base, int64_t b);
  /// x of a loaded batch of token ids: [M, b, xWidth], stride 0 over M.
  MemRef<int32_t, 3> tokenDescriptor(int32_t *base, int64_t b);
  /// x's descriptor for element type X (T, or int32_t for token ids).
  template <typename T, typename X> MemRef<X, 3> xFor(int64_t b);
  /// y's descriptor for a loaded batch of b samples: [M, b] class indices,
  /// or [M, b, xWidth] next tokens (YRank 3).
  template <int YRank> MemRef<int32_t, YRank> yFor(int64_t b);
  /// Sizes the workspace for the train and eval steps at the largest batch.
  template <typename T> void reserveWorkspace();
  /// For token ids: grows the workspace to what this step's shape needs.
  template <typename T, int YRank>
  void reserveTokenWorkspace(MemRef<int32_t, 3> &x, int64_t b, bool train);
  /// For a CUDA artifact: the device copies of every buffer (the workspace
  /// of onDevice.workspaceBytes), and the initial upload.
  void mirrorOnDevice(const TrainOptions &options);
  /// Uploads what a step reads that changed (the batch; the step numbers
  /// when `train`).
  void uploadStepInputs(int64_t b, bool train);
  /// Runs `issue` (a train step's device work) directly, or captured as a
  /// graph and replayed (deviceGraphs): a batch shape's first step runs
  /// directly (it loads the kernels), its second is captured, later ones
  /// replay that graph. A failed capture turns graphs off, with a warning.
  void runOnDevice(const std::function<void()> &issue, int64_t b);
  /// Brings params and state back from the device, if they changed there.
  void syncFromDevice() const;
  /// The workspace descriptor the steps get: the host's, or the device's.
  WorkspaceRef stepWorkspace();
  /// The artifact's train step on the loaded batch, with buffers of T:
  /// the device's uploads and download around issueTrainStep.
  /// X is x's element type, YRank y's rank (3 for next tokens).
  template <typename T, typename X, int YRank> void callTrainStep(int64_t b);
  /// The call itself, on the buffers (the host's or the device's).
  template <typename T, typename X, int YRank> void issueTrainStep(int64_t b);
  /// The descriptors of params, buffers, grads, out, state, hyper and
  /// step: the device's copies where there is one.
  template <typename T> struct Descriptors;
  template <typename T> Descriptors<T> descriptors();
  /// The artifact's eval step on the loaded batch, with buffers of T.
  template <typename T, typename X, int YRank> void callEvalStep(int64_t b);
  template <typename T, typename X, int YRank> void callGradStep(int64_t b);
  template <typename T> void callOptimizerStep();
  /// Marks the models whose step number is 0 in idleModels; the marks, for
  /// IdleModelsGuard, if any is idle on the CPU, else null (their matmuls
  /// are skipped on the CPU only).
  const uint8_t *idleModelsOfStep();
  /// Makes the workspace hold `bytes` for step `stepName` (on a device,
  /// checks that the one sized at the start does).
  void reserveStepWorkspace(int64_t bytes, const char *stepName);
  /// Throws if a kernel reported a malformed call during the last step.
  void checkKernels(const char *stepName);

  const Artifact &artifact;
  const Manifest &manifest;
  /// The ABI's sizes (pt: P_t, the trainable columns of a params row,
  /// which the state covers) and the batch.
  int64_t m, p, pt, q, s, h, k, f, batch;
  /// Whether x holds token ids, y the next tokens (a language model) or
  /// targetWidth values per sample (regression).
  bool tokens, nextTokens, valueTargets;
  int64_t targetWidth;
  /// Where a failed graph capture is warned of (null: nowhere).
  std::ostream *progress;

  // Of the model's float type (docs/abi.md).
  // params and state are refreshed from the device by const readers.
  mutable FloatBuffer paramsBuf, buffersBuf, stateBuf;
  FloatBuffer xBuf, outBuf, gradsBuf;
  // Per-model scalars are double, as torch::optim computes them.
  AlignedBuffer<double> hyperBuf, stepBuf;
  AlignedBuffer<int32_t> yBuf;
  FloatBuffer yValuesBuf;
  /// Token ids of the loaded batch, [b, xWidth] (sequences; grown as
  /// steps need).
  AlignedBuffer<int32_t> tokenBuf;
  int64_t xWidth = 0;
  /// The steps' temporaries (docs/abi.md, "The workspace"): allocated once,
  /// for the largest batch, shared by train and eval steps.
  Workspace workspace;
  /// A CUDA artifact's device copies (null pointers for a CPU artifact).
  struct DevicePointers {
    void *params = nullptr, *buffers = nullptr, *state = nullptr,
         *hyper = nullptr, *step = nullptr, *x = nullptr, *y = nullptr,
         *out = nullptr, *workspace = nullptr, *grads = nullptr;
    int64_t workspaceBytes = 0;
  };
  std::unique_ptr<DeviceMemory> device;
  DevicePointers onDevice;
  /// Captured train steps by batch shape (size, x shared).
  struct StepGraph {
    int64_t uses = 0;
    void *graph = nullptr;
  };
  std::map<std::pair<int64_t, bool>, StepGraph> trainGraphs;
  bool useGraphs = false;
  /// Whether params and state changed on the device since the last sync.
  mutable bool hostStale = false;
  /// Whether the loaded batch is one batch every model shares (x holds
  /// model 0's slice only).
  bool xShared = false;
  /// Per train step, without allocating: which models are frozen (their
  /// matmuls are skipped).
  std::vector<uint8_t> idleModels;
  /// Where the sums of data across ranks run on the device (null: on the
  /// host).
  DeviceCollectives *collectives = nullptr;
};

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_STEPRUNNER_H
