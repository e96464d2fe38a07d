//===- AttentionKernelsBench.cpp - the attention kernels on each code -----===//
//
// Times _mlir_ciface_mbt_rt_attention_f32 and its adjoint (and the `_bf16`
// forms with --bf16) on one thread, for the attention of the fortunes
// transformer (heads of 8) and of the byte-level LM (heads of 16): 170
// causal sequences (4 models' 42 samples) of 100 tokens, the last fifth of
// each padding. Each version of the kernels' vector code this CPU runs
// (MBT_ATTENTION_CODE) gets a row: the best of --repeat calls, in ms, and
// the rate of the products' multiply-adds (the five of the adjoint and the
// two of the forward over the causal pairs) in GFLOP/s.
//
//   build/bin/mbt-bench-attention-kernels [--repeat N] [--bf16]
//
//===----------------------------------------------------------------------===//

#include "mbt/runtime/Kernels.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace mbt;

namespace {

struct Workload {
  const char *name;
  int64_t sequences, length, features, heads;
};

/// The best time, in ms, of `repeat` calls of `call`.
template <typename Call> double bestOf(int repeat, Call call) {
  double best = 1e30;
  for (int r = 0; r < repeat; ++r) {
    auto start = std::chrono::steady_clock::now();
    call();
    auto end = std::chrono::steady_clock::now();
    best = std::min(
        best, std::chrono::duration<double, std::milli>(end - start).count());
  }
  return best;
}

void run(const Workload &w, bool bf16, int repeat) {
  int64_t s = w.sequences, t = w.length, d = w.features;
  std::vector<std::vector<float>> storage(8, std::vector<float>(s * t * d));
  uint32_t state = 12345;
  for (std::vector<float> &buffer : storage)
    for (float &x : buffer) {
      state = state * 1664525u + 1013904223u;
      x = float(state >> 8) / 8388608.0f - 1.0f;
    }
  std::vector<int32_t> ids(s * t, 0);
  for (int64_t seq = 0; seq < s; ++seq)
    for (int64_t i = 0; i < t * 4 / 5; ++i)
      ids[seq * t + i] = int32_t(1 + i % 200);
  std::vector<MemRef3F> refs;
  for (std::vector<float> &buffer : storage)
    refs.push_back(makeDenseMemRef<float, 3>(buffer.data(), {s, t, d}));
  MemRef2I tokens = makeDenseMemRef<int32_t, 2>(ids.data(), {s, t});
  auto forward = bf16 ? _mlir_ciface_mbt_rt_attention_f32_bf16
                      : _mlir_ciface_mbt_rt_attention_f32;
  auto adjoint = bf16 ? _mlir_ciface_mbt_rt_attention_grad_f32_bf16
                      : _mlir_ciface_mbt_rt_attention_grad_f32;
  double pairs = double(s) * 0.5 * double(t) * double(t + 1);
  for (const char *code : {"", "x86-64-v3", "baseline"}) {
    if (*code)
      setenv("MBT_ATTENTION_CODE", code, 1);
    forward(&refs[0], &refs[1], &refs[2], &tokens, &refs[4], w.heads, 1);
    if (!runtime::takeKernelError().empty())
      continue; // a version this CPU does not run
    double f = bestOf(repeat, [&] {
      forward(&refs[0], &refs[1], &refs[2], &tokens, &refs[4], w.heads, 1);
    });
    double a = bestOf(repeat, [&] {
      adjoint(&refs[0], &refs[1], &refs[2], &tokens, &refs[3], &refs[5],
              &refs[6], &refs[7], w.heads, 1);
    });
    fmt::print("| {} | {} | {} | {:.2f} ms | {:.1f} | {:.2f} ms | {:.1f} |\n",
               w.name, bf16 ? "bf16" : "f32", *code ? code : "widest", f,
               2 * 2 * pairs * d / f / 1e6, a, 5 * 2 * pairs * d / a / 1e6);
    unsetenv("MBT_ATTENTION_CODE");
  }
}

} // namespace

int main(int argc, char **argv) {
  int repeat = 10;
  bool bf16 = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--repeat") == 0 && i + 1 < argc)
      repeat = std::max(1, std::atoi(argv[++i]));
    else if (std::strcmp(argv[i], "--bf16") == 0)
      bf16 = true;
    else {
      fmt::print(stderr, "usage: {} [--repeat N] [--bf16]\n", argv[0]);
      return 2;
    }
  }
  setenv("MBT_NUM_THREADS", "1", 1);
  fmt::print("| attention | values | code | forward | GFLOP/s | adjoint | "
             "GFLOP/s |\n|---|---|---|---:|---:|---:|---:|\n");
  for (const Workload &w :
       {Workload{"transformer (heads of 8)", 170, 100, 32, 4},
        Workload{"byte-level LM (heads of 16)", 170, 100, 64, 4}}) {
    run(w, false, repeat);
    if (bf16)
      run(w, true, repeat);
  }
  return 0;
}
