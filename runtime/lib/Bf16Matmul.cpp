//===- Bf16Matmul.cpp - products of operands rounded to bf16 --------------===//
//
// The product of mbt_rt_batch_matmul_f32_bf16: autocast's bf16 matmul on
// f32 buffers. The compiler leaves the rounding of such a product's
// operands to this kernel (mbt-lower-to-linalg's fold-operand-rounding),
// which rounds them while it packs them into a dense scratch buffer: one
// pass over each operand, in cache, instead of a rounded f32 copy of it in
// memory.
//
// Where the CPU multiplies bf16 in hardware (AVX512-BF16, AMX-BF16) the
// operands are packed as bf16 and oneDNN's matmul multiplies them, at
// about twice sgemm's rate on AVX512-BF16 (docs/benchmarks.md). Elsewhere
// (or with MBT_BF16_MATMUL=f32) they are packed as the rounded f32 values
// and sgemm multiplies them: the same exact products, summed in another
// order. Either way every product runs whole on the calling thread with
// the same shapes whatever the number of models, so model i's bits do not
// depend on the batch (Kernels.cpp).
//
// The hardware's bf16 dot products treat bf16 subnormals (below 2^-126)
// as zero and flush subnormal sums, as autocast's oneDNN kernels do.
//
//===----------------------------------------------------------------------===//
#include "Bf16Matmul.h"

#include "Bf16Rounding.h"
#include "OneDnnMatmul.h"

#include "mbt/runtime/Kernels.h"

#ifdef __x86_64__
#include <immintrin.h>
#endif

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace mbt {
namespace runtime {

namespace {

/// A matrix packed densely: row-major, or column-major where the source's
/// columns are contiguous runs (a transposed operand), so that the packing
/// reads the source in order.
struct Packed {
  int64_t rows = 0, cols = 0;
  bool columnMajor = false;
  int64_t rowStride() const { return columnMajor ? 1 : cols; }
  int64_t colStride() const { return columnMajor ? rows : 1; }
};

/// Packs `m` into `out` (grown as needed) through `convert`, each run of
/// contiguous values through `convertRun(from, to, count)`.
template <typename Out, typename Convert, typename ConvertRun>
__attribute__((always_inline)) inline Packed
pack(const Matrix<float> &m, std::vector<Out> &out, Convert convert,
     ConvertRun convertRun) {
  Packed p{m.rows, m.cols, m.colStride != 1 && m.rowStride == 1};
  out.resize(static_cast<size_t>(m.rows * m.cols));
  int64_t outer = p.columnMajor ? m.cols : m.rows;
  int64_t inner = p.columnMajor ? m.rows : m.cols;
  int64_t outerStride = p.columnMajor ? m.colStride : m.rowStride;
  int64_t innerStride = p.columnMajor ? m.rowStride : m.colStride;
  if (innerStride == 1 && outerStride == inner) {
    // Dense: one run (a sequence model's [B T, D] operands have short rows).
    convertRun(m.data, out.data(), outer * inner);
    return p;
  }
  for (int64_t o = 0; o < outer; ++o) {
    const float *from = m.data + o * outerStride;
    Out *to = out.data() + o * inner;
    if (innerStride == 1)
      convertRun(from, to, inner);
    else
      for (int64_t i = 0; i < inner; ++i)
        to[i] = convert(from[i * innerStride]);
  }
  return p;
}

/// The batched call under way (startBf16Call).
std::atomic<uint64_t> callGeneration{0};

/// One operand's packed copy on this thread, and what it was packed from.
template <typename Out> struct PackedOperand {
  std::vector<Out> values;
  Packed layout;
  const float *source = nullptr;
  int64_t rowStride = 0, colStride = 0;
  uint64_t generation = ~uint64_t(0);

  /// Whether `m` is what the copy holds: the same matrix, in this call.
  bool holds(const Matrix<float> &m, uint64_t call) const {
    return generation == call && source == m.data && layout.rows == m.rows &&
           layout.cols == m.cols && rowStride == m.rowStride &&
           colStride == m.colStride;
  }
  void remember(const Matrix<float> &m, uint64_t call) {
    source = m.data;
    rowStride = m.rowStride;
    colStride = m.colStride;
    generation = call;
  }
};

// The packing is a pass over each operand of every product, with SSE2
// alone half as long as MLP-S's bf16 products themselves: one version per
// vector width, the widest the CPU has chosen when the runtime loads.
#define MBT_PACK_TARGETS                                                       \
  __attribute__((target_clones("avx512f", "avx2", "default")))

/// A packing that converts element by element through `convert`.
template <typename Out, typename Convert>
__attribute__((always_inline)) inline Packed
packEach(const Matrix<float> &m, std::vector<Out> &out, Convert convert) {
  return pack(m, out, convert, [&](const float *from, Out *to, int64_t count) {
    for (int64_t i = 0; i < count; ++i)
      to[i] = convert(from[i]);
  });
}

MBT_PACK_TARGETS Packed packEachAsBf16Bits(const Matrix<float> &m,
                                           std::vector<uint16_t> &bf16) {
  return packEach(m, bf16, [](float x) { return bf16Bits(x); });
}

/// `m` as its values rounded to bf16, in f32.
Packed packAs(const Matrix<float> &m, std::vector<float> &rounded) {
  return pack(m, rounded, roundedToBf16, roundRunToBf16);
}
#undef MBT_PACK_TARGETS

#if defined(__x86_64__) && (__GNUC__ >= 12 || __clang_major__ >= 16)
#define MBT_HAVE_BF16_CONVERSION 1
/// `count` values from `from` as bf16 bits into `to`, 16 a time by the
/// CPU's own rounding (vcvtneps2bf16): to nearest, ties to even, a NaN
/// quiet, as bf16Bits rounds, except that it takes an f32 subnormal for 0
/// where bf16Bits may round it up to 2^-126. A group holding a subnormal
/// is left to bf16Bits.
__attribute__((target("avx512f,avx512bf16"))) void
convertToBf16Bits(const float *from, uint16_t *to, int64_t count) {
  const __m512i exponent = _mm512_set1_epi32(0x7f800000);
  const __m512i magnitude = _mm512_set1_epi32(0x7fffffff);
  int64_t i = 0;
  for (; i + 16 <= count; i += 16) {
    __m512 x = _mm512_loadu_ps(from + i);
    __m512i bits = _mm512_castps_si512(x);
    __mmask16 subnormal = _mm512_testn_epi32_mask(bits, exponent) &
                          _mm512_test_epi32_mask(bits, magnitude);
    if (subnormal) {
      for (int64_t j = i; j < i + 16; ++j)
        to[j] = bf16Bits(from[j]);
      continue;
    }
    __m256bh rounded = _mm512_cvtneps_pbh(x);
    _mm256_storeu_si256(reinterpret_cast<__m256i *>(to + i),
                        reinterpret_cast<__m256i &>(rounded));
  }
  for (; i < count; ++i)
    to[i] = bf16Bits(from[i]);
}

/// packEachAsBf16Bits's packing on a CPU with AVX512-BF16: the same bits.
Packed packAsOnBf16Cpu(const Matrix<float> &m, std::vector<uint16_t> &bf16) {
  return pack(m, bf16, [](float x) { return bf16Bits(x); }, convertToBf16Bits);
}
#endif

/// `m` as bf16 bits, by the CPU's conversion where it has one (3.7 ms
/// of the transformer's bf16 step down to 2.8 on one core: the rest is
/// reading operands that left the cache).
Packed packAs(const Matrix<float> &m, std::vector<uint16_t> &bf16) {
#ifdef MBT_HAVE_BF16_CONVERSION
  static const bool cpuConverts = __builtin_cpu_supports("avx512bf16");
  if (cpuConverts)
    return packAsOnBf16Cpu(m, bf16);
#endif
  return packEachAsBf16Bits(m, bf16);
}

/// `m` packed into `operand` (as bf16 bits or rounded f32 values, by the
/// type of its elements), unless it holds `m` already.
template <typename Out>
void packInto(PackedOperand<Out> &operand, const Matrix<float> &m) {
  uint64_t call = callGeneration.load(std::memory_order_relaxed);
  if (operand.holds(m, call))
    return;
  operand.layout = packAs(m, operand.values);
  operand.remember(m, call);
}

/// The products on sgemm: the operands packed as rounded f32 values.
void multiplyOnSgemm(const Matrix<float> &a, const Matrix<float> &b,
                     const Matrix<float> &c, bool accumulate) {
  thread_local PackedOperand<float> packedA, packedB;
  packInto(packedA, a);
  packInto(packedB, b);
  auto view = [](PackedOperand<float> &p) {
    return Matrix<float>{p.values.data(), p.layout.rows, p.layout.cols,
                         p.layout.rowStride(), p.layout.colStride()};
  };
  multiplyF32(view(packedA), view(packedB), c, accumulate);
}

bool forcedToSgemm() {
  const char *engine = std::getenv("MBT_BF16_MATMUL");
  return engine && std::strcmp(engine, "f32") == 0;
}

/// The products on oneDNN's bf16 matmul; false where it has no primitive
/// for these layouts.
bool multiplyOnBf16Hardware(const Matrix<float> &a, const Matrix<float> &b,
                            const Matrix<float> &c, bool accumulate) {
  thread_local PackedOperand<uint16_t> packedA, packedB;
  packInto(packedA, a);
  packInto(packedB, b);
  auto view = [](PackedOperand<uint16_t> &p) {
    return Matrix<uint16_t>{p.values.data(), p.layout.rows, p.layout.cols,
                            p.layout.rowStride(), p.layout.colStride()};
  };
  return multiplyOnOneDnnBf16(view(packedA), view(packedB), c, accumulate);
}

} // namespace

void startBf16Call() { callGeneration.fetch_add(1, std::memory_order_relaxed); }

void multiplyRoundedToBf16(Matrix<float> a, Matrix<float> b, Matrix<float> c,
                           bool accumulate) {
  if (c.rows == 0 || c.cols == 0)
    return;
  // Where oneDNN has no primitive, sgemm computes the same products.
  if (a.cols > 0 && oneDnnHasBf16Products() && !forcedToSgemm() &&
      multiplyOnBf16Hardware(a, b, c, accumulate))
    return;
  multiplyOnSgemm(a, b, c, accumulate);
}

std::string bf16MatmulEngine() {
  if (oneDnnHasBf16Products() && !forcedToSgemm())
    return oneDnnHasAmx() ? "oneDNN bf16 (AMX)" : "oneDNN bf16 (AVX512-BF16)";
  return "sgemm on rounded f32";
}

} // namespace runtime
} // namespace mbt
