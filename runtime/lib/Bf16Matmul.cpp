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

#include "mbt/runtime/Kernels.h"

#ifdef MBT_HAVE_DNNL
#include <omp.h>
#include <oneapi/dnnl/dnnl.hpp>
#endif

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <unordered_map>
#include <vector>

namespace mbt {
namespace runtime {

namespace {

/// mbt.round_to's rounding to bf16, as the bf16's bits: to nearest, ties
/// to even (the carry may reach the exponent: the next binade, or
/// infinity), and a NaN stays a (quiet) NaN.
inline uint16_t bf16Bits(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  uint32_t rounded = bits + 0x7fffu + ((bits >> 16) & 1u);
  bool nan = (bits & 0x7fffffffu) > 0x7f800000u;
  return static_cast<uint16_t>(nan ? (bits >> 16) | 0x40u : rounded >> 16);
}

/// x rounded to bf16, as an f32.
inline float roundedToBf16(float x) {
  uint32_t bits = uint32_t(bf16Bits(x)) << 16;
  float rounded;
  std::memcpy(&rounded, &bits, sizeof rounded);
  return rounded;
}

/// A matrix packed densely: row-major, or column-major where the source's
/// columns are contiguous runs (a transposed operand), so that the packing
/// reads the source in order.
struct Packed {
  int64_t rows = 0, cols = 0;
  bool columnMajor = false;
  int64_t rowStride() const { return columnMajor ? 1 : cols; }
  int64_t colStride() const { return columnMajor ? rows : 1; }
};

/// Packs `m` into `out` (grown as needed) through `convert`.
template <typename Out, typename Convert>
__attribute__((always_inline)) inline Packed
pack(const Matrix<float> &m, std::vector<Out> &out, Convert convert) {
  Packed p{m.rows, m.cols, m.colStride != 1 && m.rowStride == 1};
  out.resize(static_cast<size_t>(m.rows * m.cols));
  int64_t outer = p.columnMajor ? m.cols : m.rows;
  int64_t inner = p.columnMajor ? m.rows : m.cols;
  int64_t outerStride = p.columnMajor ? m.colStride : m.rowStride;
  int64_t innerStride = p.columnMajor ? m.rowStride : m.colStride;
  for (int64_t o = 0; o < outer; ++o) {
    const float *from = m.data + o * outerStride;
    Out *to = out.data() + o * inner;
    if (innerStride == 1)
      for (int64_t i = 0; i < inner; ++i)
        to[i] = convert(from[i]);
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

MBT_PACK_TARGETS Packed packAs(const Matrix<float> &m,
                               std::vector<uint16_t> &bf16) {
  return pack(m, bf16, [](float x) { return bf16Bits(x); });
}

MBT_PACK_TARGETS Packed packAs(const Matrix<float> &m,
                               std::vector<float> &rounded) {
  return pack(m, rounded, [](float x) { return roundedToBf16(x); });
}
#undef MBT_PACK_TARGETS

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

#ifdef MBT_HAVE_DNNL
/// Whether oneDNN multiplies bf16 in hardware on this CPU.
bool hasBf16Products() {
  static const bool has = [] {
    auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
    auto bf16 = static_cast<unsigned>(dnnl::cpu_isa::avx512_core_bf16);
    return (isa & bf16) == bf16;
  }();
  return has;
}

dnnl::engine &cpuEngine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

/// A matmul primitive for one shape and layout, with its memory objects
/// and scratchpad; each thread keeps its own, so no two threads share one.
struct Bf16Primitive {
  dnnl::matmul matmul;
  dnnl::memory a, b, c, scratchpad;
  std::vector<uint8_t> scratch;
};

struct PrimitiveKey {
  int64_t m, n, k, cRowStride, cColStride;
  bool aColumnMajor, bColumnMajor, accumulate;
  bool operator==(const PrimitiveKey &o) const {
    return m == o.m && n == o.n && k == o.k && cRowStride == o.cRowStride &&
           cColStride == o.cColStride && aColumnMajor == o.aColumnMajor &&
           bColumnMajor == o.bColumnMajor && accumulate == o.accumulate;
  }
};

struct PrimitiveKeyHash {
  size_t operator()(const PrimitiveKey &key) const {
    size_t h = 0;
    for (int64_t v : {key.m, key.n, key.k, key.cRowStride, key.cColStride,
                      int64_t(key.aColumnMajor), int64_t(key.bColumnMajor),
                      int64_t(key.accumulate)})
      h = h * 1000003u ^ std::hash<int64_t>()(v);
    return h;
  }
};

/// The primitive for `key`, created on first use; null where oneDNN has
/// none (a layout of C it does not take).
Bf16Primitive *primitiveFor(const PrimitiveKey &key) {
  // Sequence models meet a new m at each batch length; a bounded cache
  // keeps a long run's memory flat.
  constexpr size_t kMaxPrimitives = 512;
  thread_local std::unordered_map<PrimitiveKey, std::unique_ptr<Bf16Primitive>,
                                  PrimitiveKeyHash>
      cache;
  auto found = cache.find(key);
  if (found != cache.end())
    return found->second.get();
  if (cache.size() >= kMaxPrimitives)
    cache.clear();
  using dt = dnnl::memory::data_type;
  auto strides = [](bool columnMajor, int64_t rows, int64_t cols) {
    return columnMajor ? dnnl::memory::dims{1, rows}
                       : dnnl::memory::dims{cols, 1};
  };
  std::unique_ptr<Bf16Primitive> made;
  try {
    dnnl::memory::desc aDesc({key.m, key.k}, dt::bf16,
                             strides(key.aColumnMajor, key.m, key.k));
    dnnl::memory::desc bDesc({key.k, key.n}, dt::bf16,
                             strides(key.bColumnMajor, key.k, key.n));
    dnnl::memory::desc cDesc({key.m, key.n}, dt::f32,
                             {key.cRowStride, key.cColStride});
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    if (key.accumulate) {
      dnnl::post_ops sum;
      sum.append_sum(1.0f);
      attr.set_post_ops(sum);
    }
    dnnl::engine &engine = cpuEngine();
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(aDesc, bDesc, cDesc),
                                    attr, engine);
    made = std::make_unique<Bf16Primitive>();
    made->matmul = dnnl::matmul(pd);
    made->a = dnnl::memory(aDesc, engine, DNNL_MEMORY_NONE);
    made->b = dnnl::memory(bDesc, engine, DNNL_MEMORY_NONE);
    made->c = dnnl::memory(cDesc, engine, DNNL_MEMORY_NONE);
    made->scratch.resize(pd.scratchpad_desc().get_size());
    made->scratchpad =
        dnnl::memory(pd.scratchpad_desc(), engine, made->scratch.data());
  } catch (const dnnl::error &) {
    made.reset();
  }
  return (cache[key] = std::move(made)).get();
}

/// The products on oneDNN's bf16 matmul; false where it has no primitive
/// for these layouts.
bool multiplyOnOneDnn(const Matrix<float> &a, const Matrix<float> &b,
                      const Matrix<float> &c, bool accumulate) {
  // The products of one model run on this thread: oneDNN's own OpenMP
  // threads would split them, and the split would change their bits.
  thread_local bool oneThread = (omp_set_num_threads(1), true);
  (void)oneThread;
  thread_local PackedOperand<uint16_t> packedA, packedB;
  packInto(packedA, a);
  packInto(packedB, b);
  Bf16Primitive *p = primitiveFor({c.rows, c.cols, a.cols, c.rowStride,
                                   c.colStride, packedA.layout.columnMajor,
                                   packedB.layout.columnMajor, accumulate});
  if (!p)
    return false;
  thread_local dnnl::stream stream(cpuEngine());
  p->a.set_data_handle(packedA.values.data());
  p->b.set_data_handle(packedB.values.data());
  p->c.set_data_handle(c.data);
  p->matmul.execute(stream, {{DNNL_ARG_SRC, p->a},
                             {DNNL_ARG_WEIGHTS, p->b},
                             {DNNL_ARG_DST, p->c},
                             {DNNL_ARG_SCRATCHPAD, p->scratchpad}});
  stream.wait();
  return true;
}
#endif

} // namespace

void startBf16Call() { callGeneration.fetch_add(1, std::memory_order_relaxed); }

void multiplyRoundedToBf16(Matrix<float> a, Matrix<float> b, Matrix<float> c,
                           bool accumulate) {
  if (c.rows == 0 || c.cols == 0)
    return;
#ifdef MBT_HAVE_DNNL
  if (a.cols > 0 && hasBf16Products() && !forcedToSgemm()) {
    try {
      if (multiplyOnOneDnn(a, b, c, accumulate))
        return;
    } catch (const dnnl::error &) {
      // Fall through to sgemm, which computes the same products.
    }
  }
#endif
  multiplyOnSgemm(a, b, c, accumulate);
}

std::string bf16MatmulEngine() {
#ifdef MBT_HAVE_DNNL
  if (hasBf16Products() && !forcedToSgemm())
    return dnnl::get_effective_cpu_isa() == dnnl::cpu_isa::avx512_core_amx
               ? "oneDNN bf16 (AMX)"
               : "oneDNN bf16 (AVX512-BF16)";
#endif
  return "sgemm on rounded f32";
}

} // namespace runtime
} // namespace mbt
