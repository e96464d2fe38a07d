//===- AttentionKernels.cpp - mbt.attention and its adjoint on the CPU ----===//
//
// mbt_rt_attention_f32 and mbt_rt_attention_grad_f32 (docs/abi.md): the
// attention of every sequence of a call, one query row at a time, with the
// row's scores, softmax and products in vector registers. A head of a few
// columns (the transformers' 8 to 64) makes every product of the attention
// a tiny GEMM: as BLAS calls they were some 15,000 a step for the fortunes
// transformer, each paying a call's and a packing's fixed cost for a few
// thousand multiply-adds. Here a head's keys and values are transposed once
// into [column][key] rows, and each query's scores are `head size` vector
// multiply-adds per vector of keys; a causal query reads only the keys up to
// itself.
//
// The numbers are mbt.attention's: the weights of the keys a query may see
// (real tokens, and with `causal` the keys up to it), 0 where it sees none,
// the adjoint recomputing them. The `_bf16` kernels round as autocast does:
// the products' operands and results to bf16, the scores where they are
// read, the weights as the values' product's operand; the scale, the
// masks and the softmax stay f32; the key's and value's adjoints are
// summed in f32 over the queries and rounded once. Each sequence runs whole
// on one thread, its sums in an order fixed by its length alone, so a
// sequence's bits are the same alone and in a batch. The vector code is
// compiled for x86-64-v4, -v3 and the baseline; a call runs the widest the
// CPU has, or the one MBT_ATTENTION_CODE names (tests run each).
//
//===----------------------------------------------------------------------===//
#include "mbt/runtime/Kernels.h"

#include "Bf16Rounding.h"
#include "KernelMatrix.h"
#include "KernelThreads.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <string>
#include <utility>
#include <vector>

// The row code's vectors pass only between functions inlined into one
// another, whose ABI no caller sees.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace mbt {
namespace runtime {
namespace {

/// The most keys a vector of the row code holds (x86-64-v4's).
constexpr int64_t kMaxLanes = 16;

#define MBT_INLINE __attribute__((always_inline)) inline

/// The shape of a call: `sequences` of `length` tokens and `features`
/// columns, split into `heads` heads of `headSize` columns.
struct Shape {
  int64_t sequences, length, features, heads, headSize;
  bool causal;
  float scale;
};

/// An operand [S, T, D] of a call.
struct Operand {
  const MemRef3F *ref;
  float &at(int64_t s, int64_t t, int64_t c) const {
    return ref->data[ref->offset + s * ref->strides[0] + t * ref->strides[1] +
                     c * ref->strides[2]];
  }
};

} // namespace

// The row code once per target, its vectors as wide as the target's
// registers: AVX-512 as x86-64-v4, 16 lanes (with DQ and VL: with AVX512F
// alone GCC compares 16 lanes one at a time), AVX2 and FMA as x86-64-v3, 8
// lanes, and the baseline's SSE2, 4 lanes. Clang takes the baseline alone.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define MBT_ATTENTION_TARGETS 1
#pragma GCC push_options
#pragma GCC target("arch=x86-64-v4")
#define MBT_ATTENTION_ROWS rowsV4
#define MBT_ATTENTION_LANES 16
#include "AttentionRows.inc"
#undef MBT_ATTENTION_LANES
#undef MBT_ATTENTION_ROWS
#pragma GCC pop_options
#pragma GCC push_options
#pragma GCC target("arch=x86-64-v3")
#define MBT_ATTENTION_ROWS rowsV3
#define MBT_ATTENTION_LANES 8
#include "AttentionRows.inc"
#undef MBT_ATTENTION_LANES
#undef MBT_ATTENTION_ROWS
#pragma GCC pop_options
#endif
#define MBT_ATTENTION_ROWS rowsBaseline
#define MBT_ATTENTION_LANES 4
#include "AttentionRows.inc"
#undef MBT_ATTENTION_LANES
#undef MBT_ATTENTION_ROWS

namespace {

/// The entry points of one target's row code, and the level it needs.
struct RowKernels {
  const char *level;
  bool runsHere;
  void (*attendF32)(const Shape &, const Operand *, const MemRef2I &, Operand,
                    int64_t);
  void (*attendBf16)(const Shape &, const Operand *, const MemRef2I &, Operand,
                     int64_t);
  void (*adjointF32)(const Shape &, const Operand *, const MemRef2I &,
                     const Operand *, int64_t);
  void (*adjointBf16)(const Shape &, const Operand *, const MemRef2I &,
                      const Operand *, int64_t);
};

/// Every version of the row code, the widest first.
const std::vector<RowKernels> &allRowKernels() {
  static const std::vector<RowKernels> kernels = [] {
    std::vector<RowKernels> all;
#ifdef MBT_ATTENTION_TARGETS
    __builtin_cpu_init();
    all.push_back({"x86-64-v4", bool(__builtin_cpu_supports("x86-64-v4")),
                   rowsV4::attendF32, rowsV4::attendBf16, rowsV4::adjointF32,
                   rowsV4::adjointBf16});
    all.push_back({"x86-64-v3", bool(__builtin_cpu_supports("x86-64-v3")),
                   rowsV3::attendF32, rowsV3::attendBf16, rowsV3::adjointF32,
                   rowsV3::adjointBf16});
#endif
    all.push_back({"baseline", true, rowsBaseline::attendF32,
                   rowsBaseline::attendBf16, rowsBaseline::adjointF32,
                   rowsBaseline::adjointBf16});
    return all;
  }();
  return kernels;
}

/// The row code of a call: the widest version this CPU runs, or the
/// narrower one MBT_ATTENTION_CODE names (x86-64-v3, baseline: the tests
/// run each). A name this CPU cannot run, or does not know, is an error
/// (`name` is the kernel's, for the message); the widest version runs.
const RowKernels &rowKernels(const char *name) {
  const std::vector<RowKernels> &all = allRowKernels();
  const RowKernels *widest = &all.back();
  for (const RowKernels &k : all)
    if (k.runsHere) {
      widest = &k;
      break;
    }
  const char *asked = std::getenv("MBT_ATTENTION_CODE");
  if (!asked || !*asked)
    return *widest;
  for (const RowKernels &k : all)
    if (std::strcmp(k.level, asked) == 0 && k.runsHere)
      return k;
  recordKernelError(fmt::format(
      "{}: MBT_ATTENTION_CODE={} is not a version of the attention's code "
      "this CPU runs (x86-64-v4, x86-64-v3 or baseline)",
      name, asked));
  return *widest;
}

/// Why the operands `in` and `out` (each [S, T, D]) and `tokens` [S, T] do
/// not make a call of `heads` heads; empty where they do.
std::string malformed(const std::vector<const MemRef3F *> &operands,
                      const MemRef2I *tokens, int64_t heads) {
  for (const MemRef3F *ref : operands)
    if (!ref)
      return "null descriptor";
  if (!tokens)
    return "null descriptor";
  const MemRef3F &query = *operands[0];
  for (const MemRef3F *ref : operands)
    for (int d = 0; d < 3; ++d)
      if (ref->sizes[d] != query.sizes[d])
        return fmt::format("operands of different shapes: {} and {}",
                           shapeOf(query), shapeOf(*ref));
  if (tokens->sizes[0] != query.sizes[0] || tokens->sizes[1] != query.sizes[1])
    return fmt::format("tokens {} for operands {}", shapeOf(*tokens),
                       shapeOf(query));
  if (heads < 1 || query.sizes[2] % heads != 0)
    return fmt::format("{} heads do not divide the {} features", heads,
                       query.sizes[2]);
  if (query.sizes[1] > std::numeric_limits<int32_t>::max() - kMaxLanes)
    return fmt::format("a sequence of {} tokens", query.sizes[1]);
  return {};
}

Shape callShape(const MemRef3F &query, int64_t heads, int64_t causal) {
  int64_t headSize = query.sizes[2] / heads;
  return {query.sizes[0],
          query.sizes[1],
          query.sizes[2],
          heads,
          headSize,
          causal != 0,
          float(1.0 / std::sqrt(double(headSize)))};
}

/// The multiply-adds of a call's sequences, for forEachBatchIndex.
double flopsOf(const Shape &s, double products) {
  double pairs = s.causal ? 0.5 * double(s.length) * double(s.length + 1)
                          : double(s.length) * double(s.length);
  return 2.0 * products * double(s.sequences) * pairs * double(s.features);
}

void attend(const char *name, bool bf16, MemRef3F *query, MemRef3F *key,
            MemRef3F *value, MemRef2I *tokens, MemRef3F *result, int64_t heads,
            int64_t causal) {
  std::string why = malformed({query, key, value, result}, tokens, heads);
  if (!why.empty()) {
    recordKernelError(fmt::format("{}: {}", name, why));
    if (result)
      fillNaN(result);
    return;
  }
  Shape s = callShape(*query, heads, causal);
  Operand in[3] = {{query}, {key}, {value}};
  const RowKernels &code = rowKernels(name);
  auto rows = bf16 ? code.attendBf16 : code.attendF32;
  forEachBatchIndex(s.sequences, flopsOf(s, 2),
                    [&](int64_t seq) { rows(s, in, *tokens, {result}, seq); });
}

void adjoint(const char *name, bool bf16, MemRef3F *query, MemRef3F *key,
             MemRef3F *value, MemRef2I *tokens, MemRef3F *grad,
             MemRef3F *dQuery, MemRef3F *dKey, MemRef3F *dValue, int64_t heads,
             int64_t causal) {
  std::string why =
      malformed({query, key, value, grad, dQuery, dKey, dValue}, tokens, heads);
  if (!why.empty()) {
    recordKernelError(fmt::format("{}: {}", name, why));
    for (MemRef3F *written : {dQuery, dKey, dValue})
      if (written)
        fillNaN(written);
    return;
  }
  Shape s = callShape(*query, heads, causal);
  Operand in[4] = {{query}, {key}, {value}, {grad}};
  Operand out[3] = {{dQuery}, {dKey}, {dValue}};
  const RowKernels &code = rowKernels(name);
  auto rows = bf16 ? code.adjointBf16 : code.adjointF32;
  forEachBatchIndex(s.sequences, flopsOf(s, 5),
                    [&](int64_t seq) { rows(s, in, *tokens, out, seq); });
}

} // namespace
} // namespace runtime
} // namespace mbt

using mbt::MemRef2I;
using mbt::MemRef3F;

#define MBT_ATTENTION_KERNELS(SUFFIX, BF16)                                    \
  extern "C" void _mlir_ciface_mbt_rt_attention_##SUFFIX(                      \
      MemRef3F *query, MemRef3F *key, MemRef3F *value, MemRef2I *tokens,       \
      MemRef3F *result, int64_t heads, int64_t causal) {                       \
    mbt::runtime::attend("mbt_rt_attention_" #SUFFIX, BF16, query, key, value, \
                         tokens, result, heads, causal);                       \
  }                                                                            \
  extern "C" void _mlir_ciface_mbt_rt_attention_grad_##SUFFIX(                 \
      MemRef3F *query, MemRef3F *key, MemRef3F *value, MemRef2I *tokens,       \
      MemRef3F *grad, MemRef3F *dQuery, MemRef3F *dKey, MemRef3F *dValue,      \
      int64_t heads, int64_t causal) {                                         \
    mbt::runtime::adjoint("mbt_rt_attention_grad_" #SUFFIX, BF16, query, key,  \
                          value, tokens, grad, dQuery, dKey, dValue, heads,    \
                          causal);                                             \
  }
MBT_ATTENTION_KERNELS(f32, false)
MBT_ATTENTION_KERNELS(f32_bf16, true)
#undef MBT_ATTENTION_KERNELS
