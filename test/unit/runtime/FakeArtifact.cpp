//===- FakeArtifact.cpp - A hand-written stand-in for an mbtc artifact ----===//
//
// Lets the runtime's loader and trainer be tested without the compiler: a
// softmax-regression model batch (w [F, C], b [C]) trained by SGD with
// momentum, exporting exactly the symbols of docs/abi.md and importing the
// runtime's batched matmul, as a real artifact does. Variants are selected
// with compile definitions:
//   FAKE_MODELS    4 (all models of the table below) or 1
//   FAKE_ONLY      with FAKE_MODELS=1, which row of the table to keep
//   FAKE_FEATURES  F (16 for synthetic data, 784 for Fashion-MNIST)
//   FAKE_CLASSES   C
//   FAKE_ABI       the version mbt_abi_version() reports
//   FAKE_NO_EVAL   leave out the eval step symbol
//   FAKE_NO_WORKSPACE  leave out the train step's workspace function
//   FAKE_VALIDATION_FRACTION  a validation split (a string: "0.2")
//   FAKE_DEVICE    the device the manifest names ("cuda": the trainer
//                  mirrors the buffers on a device; tests give it a fake one)
//   FAKE_CPU_UNKNOWN  the manifest's "cpu" needs a feature no CPU has
//                  (besides AVX)
//   FAKE_GRAD_STEP also export mbt_grad_step and mbt_optimizer_step (the
//                  manifest says grad_step), for runs with their data
//                  across ranks
// Model 3 of the table has a huge learning rate and diverges on purpose;
// as compiled steps do (ABI 6), the step then leaves it at its last finite
// parameters.
// The train step computes its gradients in the workspace, as compiled steps
// keep their temporaries there; a test hook says whether a call ever got
// fewer bytes than the workspace function asked for.
//
//===----------------------------------------------------------------------===//

#include "mbt/common/Abi.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

using mbt::MemRef1D;
using mbt::MemRef1F;
using mbt::MemRef2D;
using mbt::MemRef2F;
using mbt::MemRef2I;
using mbt::MemRef3F;
using mbt::WorkspaceRef;

#ifndef FAKE_MODELS
#define FAKE_MODELS 4
#endif
#ifdef FAKE_GRAD_STEP
#define FAKE_GRAD_STEP_FIELD R"( "grad_step": true,)"
#else
#define FAKE_GRAD_STEP_FIELD ""
#endif
#ifdef FAKE_CPU_UNKNOWN
#define FAKE_CPU_FIELD                                                         \
  R"( "cpu": {"name": "imaginary", "features": ["avx", "no-such-feature"]},)"
#else
#define FAKE_CPU_FIELD ""
#endif
#ifndef FAKE_ONLY
#define FAKE_ONLY 1
#endif
#ifndef FAKE_FEATURES
#define FAKE_FEATURES 16
#endif
#ifndef FAKE_CLASSES
#define FAKE_CLASSES 4
#endif
#ifndef FAKE_ABI
#define FAKE_ABI mbt::kAbiVersion
#endif
#ifndef FAKE_DEVICE
#define FAKE_DEVICE "cpu"
#endif
#ifdef FAKE_VALIDATION_FRACTION
#define FAKE_VALIDATION ", \"validation\": " FAKE_VALIDATION_FRACTION
#else
#define FAKE_VALIDATION ""
#endif
#ifndef FAKE_BATCH
#define FAKE_BATCH 32
#endif

extern "C" void _mlir_ciface_mbt_rt_batch_matmul_f32(MemRef3F *a, MemRef3F *b,
                                                     MemRef3F *c, int64_t ta,
                                                     int64_t tb,
                                                     int64_t accumulate);

namespace {
constexpr int64_t F = FAKE_FEATURES, C = FAKE_CLASSES, P = F * C + C;
constexpr int kTableSize = 4;
const double kHyper[kTableSize][2] = {
    {0.1, 0.9}, {0.05, 0.5}, {0.2, 0.0}, {3e38, 0.9}};
const unsigned kSeeds[kTableSize] = {10, 11, 12, 13};

float lastStep = 0;
int64_t lastBatch = 0;
bool workspaceTooSmall = false;

/// Bytes of the train step's workspace: the gradients [M, P].
int64_t trainWorkspaceBytes(int64_t m) {
  return static_cast<int64_t>(sizeof(float)) * m * P;
}

std::string buildManifest() {
  std::string hyper, seeds;
  for (int i = 0; i < kTableSize; ++i) {
    if (FAKE_MODELS == 1 && i != FAKE_ONLY)
      continue;
    char row[96];
    std::snprintf(row, sizeof(row), "%s[%.17g, %.17g]",
                  hyper.empty() ? "" : ", ", kHyper[i][0], kHyper[i][1]);
    hyper += row;
    seeds += (seeds.empty() ? "" : ", ") + std::to_string(kSeeds[i]);
  }
  char text[2048];
  std::snprintf(
      text, sizeof(text),
      R"({"abi_version": %lld, "dtype": "f32", "device": ")" FAKE_DEVICE R"(",
  "model": "softmax", "models": %d,
  "params": [
    {"name": "w", "shape": [%lld, %lld], "offset": 0, "size": %lld,
     "init": {"kind": "kaiming_uniform"}},
    {"name": "b", "shape": [%lld], "offset": %lld, "size": %lld,
     "init": {"kind": "zeros"}}],
  "param_count": %lld,
  "input": {"name": "x", "shape": [%lld], "features": %lld},
  "target": {"name": "y", "classes": %lld},
  "optimizer": {"rule": "sgd", "slots": ["momentum"], "hyper": ["lr", "momentum"]},
  "hyper_values": [%s], "seeds": [%s],
  "outputs": ["loss", "acc"],
  "data": {"name": "fashion_mnist", "batch": %d, "shuffle_seed": 7)" FAKE_VALIDATION
      R"(},)" FAKE_GRAD_STEP_FIELD FAKE_CPU_FIELD R"(
  "epochs": 3})",
      (long long)mbt::kAbiVersion, FAKE_MODELS, (long long)F, (long long)C,
      (long long)(F * C), (long long)C, (long long)(F * C), (long long)C,
      (long long)P, (long long)F, (long long)F, (long long)C, hyper.c_str(),
      seeds.c_str(), FAKE_BATCH);
  return text;
}

MemRef3F dense3(float *data, int64_t d0, int64_t d1, int64_t d2) {
  return mbt::makeDenseMemRef<float, 3>(data, {d0, d1, d2});
}

/// logits [M,B,C] = x . w + b, with w viewed in place inside params (a
/// strided view, as the compiler produces).
std::vector<float> forward(MemRef2F *params, MemRef3F *x) {
  int64_t m = x->sizes[0], b = x->sizes[1];
  std::vector<float> logits(m * b * C);
  MemRef3F w = {params->basePtr,
                params->data,
                params->offset,
                {m, F, C},
                {params->strides[0], C, 1}};
  MemRef3F l = dense3(logits.data(), m, b, C);
  _mlir_ciface_mbt_rt_batch_matmul_f32(x, &w, &l, 0, 0, 0);
  for (int64_t i = 0; i < m; ++i) {
    const float *bias =
        params->data + params->offset + i * params->strides[0] + F * C;
    for (int64_t j = 0; j < b; ++j)
      for (int64_t c = 0; c < C; ++c)
        logits[(i * b + j) * C + c] += bias[c];
  }
  return logits;
}

/// Turns logits into softmax - onehot (scaled by 1/B) and writes the batch
/// mean loss and accuracy of each model to out.
void lossAndMetrics(std::vector<float> &logits, MemRef2I *y, MemRef2F *out) {
  int64_t m = y->sizes[0], b = y->sizes[1];
  for (int64_t i = 0; i < m; ++i) {
    double loss = 0, correct = 0;
    for (int64_t j = 0; j < b; ++j) {
      float *row = logits.data() + (i * b + j) * C;
      int32_t label =
          y->data[y->offset + i * y->strides[0] + j * y->strides[1]];
      int64_t best = 0;
      float top = row[0];
      for (int64_t c = 1; c < C; ++c)
        if (row[c] > top) {
          top = row[c];
          best = c;
        }
      float sum = 0;
      for (int64_t c = 0; c < C; ++c)
        sum += std::exp(row[c] - top);
      loss += std::log(sum) + top - row[label];
      correct += best == label;
      for (int64_t c = 0; c < C; ++c)
        row[c] = (std::exp(row[c] - top) / sum - (c == label)) / b;
    }
    float *o = out->data + out->offset + i * out->strides[0];
    o[0] = static_cast<float>(loss / b);
    o[out->strides[1]] = static_cast<float>(correct / b);
  }
}

} // namespace

extern "C" {
int64_t mbt_abi_version(void) { return FAKE_ABI; }

const char *mbt_manifest(void) {
  static const std::string manifest = buildManifest();
  return manifest.c_str();
}
} // extern "C"

namespace {
/// Every model's loss and metrics into out, and its gradients into grad
/// ([M, P], dense).
void gradients(MemRef2F *params, MemRef3F *x, MemRef2I *y, MemRef2F *out,
               float *grad) {
  int64_t m = x->sizes[0], b = x->sizes[1];
  std::vector<float> dlogits = forward(params, x);
  lossAndMetrics(dlogits, y, out);
  std::fill(grad, grad + m * P, 0.0f);
  MemRef3F dw = {grad, grad, 0, {m, F, C}, {P, C, 1}};
  MemRef3F dl = dense3(dlogits.data(), m, b, C);
  _mlir_ciface_mbt_rt_batch_matmul_f32(x, &dl, &dw, 1, 0, 0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < b; ++j)
      for (int64_t c = 0; c < C; ++c)
        grad[i * P + F * C + c] += dlogits[(i * b + j) * C + c];
}

/// ABI 6 and 7: whether model i steps: its step is not 0 and its loss (if
/// `loss`) and gradients are finite.
bool modelSteps(MemRef1D *step, int64_t i, const float *loss,
                const float *grad) {
  bool steps = step->data[step->offset + i * step->strides[0]] != 0 &&
               (!loss || std::isfinite(*loss));
  for (int64_t k = 0; k < P; ++k)
    steps = steps && std::isfinite(grad[i * P + k]);
  return steps;
}

/// SGD with momentum on model i.
void updateModel(MemRef2F *params, MemRef3F *state, MemRef2D *hyper, int64_t i,
                 const float *grad) {
  const double *h = hyper->data + hyper->offset + i * hyper->strides[0];
  float lr = static_cast<float>(h[0]),
        momentum = static_cast<float>(h[hyper->strides[1]]);
  float *p = params->data + params->offset + i * params->strides[0];
  float *v = state->data + state->offset + i * state->strides[1];
  for (int64_t k = 0; k < P; ++k) {
    v[k] = momentum * v[k] + grad[i * P + k];
    p[k] -= lr * v[k];
  }
}
} // namespace

extern "C" {
void _mlir_ciface_mbt_train_step(MemRef2F *params, MemRef2F *, MemRef3F *state,
                                 MemRef2D *hyper, MemRef1D *step, MemRef3F *x,
                                 MemRef2I *y, MemRef2F *out,
                                 WorkspaceRef *workspace) {
  int64_t m = x->sizes[0], b = x->sizes[1];
  lastStep = static_cast<float>(step->data[step->offset]);
  lastBatch = b;
  if (workspace->sizes[0] < trainWorkspaceBytes(m)) {
    workspaceTooSmall = true;
    return;
  }
  float *grad = reinterpret_cast<float *>(workspace->data + workspace->offset);
  gradients(params, x, y, out, grad);
  for (int64_t i = 0; i < m; ++i) {
    // A model that does not step reports a NaN loss.
    float *o = out->data + out->offset + i * out->strides[0];
    if (!modelSteps(step, i, o, grad)) {
      o[0] = std::nanf("");
      continue;
    }
    updateModel(params, state, hyper, i, grad);
  }
}

#ifdef FAKE_GRAD_STEP
void _mlir_ciface_mbt_grad_step(MemRef2F *params, MemRef2F *, MemRef1D *step,
                                MemRef2F *grads, MemRef3F *x, MemRef2I *y,
                                MemRef2F *out, WorkspaceRef *) {
  int64_t m = x->sizes[0];
  lastBatch = x->sizes[1];
  float *grad = grads->data + grads->offset;
  gradients(params, x, y, out, grad);
  for (int64_t i = 0; i < m; ++i) {
    float *o = out->data + out->offset + i * out->strides[0];
    if (!modelSteps(step, i, o, grad))
      o[0] = std::nanf("");
  }
}

void _mlir_ciface_mbt_optimizer_step(MemRef2F *params, MemRef3F *state,
                                     MemRef2D *hyper, MemRef1D *step,
                                     MemRef2F *grads, WorkspaceRef *) {
  const float *grad = grads->data + grads->offset;
  for (int64_t i = 0; i < params->sizes[0]; ++i)
    if (modelSteps(step, i, nullptr, grad))
      updateModel(params, state, hyper, i, grad);
}

int64_t _mlir_ciface_mbt_grad_step_workspace_bytes(MemRef2F *, MemRef2F *,
                                                   MemRef1D *, MemRef2F *,
                                                   MemRef3F *, MemRef2I *,
                                                   MemRef2F *) {
  return 0;
}

int64_t _mlir_ciface_mbt_optimizer_step_workspace_bytes(MemRef2F *, MemRef3F *,
                                                        MemRef2D *, MemRef1D *,
                                                        MemRef2F *) {
  return 0;
}
#endif

#ifndef FAKE_NO_EVAL
void _mlir_ciface_mbt_eval_step(MemRef2F *params, MemRef2F *, MemRef3F *x,
                                MemRef2I *y, MemRef2F *out, WorkspaceRef *) {
  std::vector<float> logits = forward(params, x);
  lossAndMetrics(logits, y, out);
}
#endif

#ifndef FAKE_NO_WORKSPACE
int64_t _mlir_ciface_mbt_train_step_workspace_bytes(MemRef2F *, MemRef2F *,
                                                    MemRef3F *, MemRef2D *,
                                                    MemRef1D *, MemRef3F *x,
                                                    MemRef2I *, MemRef2F *) {
  return trainWorkspaceBytes(x->sizes[0]);
}
#endif

int64_t _mlir_ciface_mbt_eval_step_workspace_bytes(MemRef2F *, MemRef2F *,
                                                   MemRef3F *, MemRef2I *,
                                                   MemRef2F *) {
  return 0;
}

// Test hooks, not part of the ABI.
float fake_artifact_last_step(void) { return lastStep; }
int64_t fake_artifact_last_batch(void) { return lastBatch; }
bool fake_artifact_workspace_too_small(void) { return workspaceTooSmall; }
}
