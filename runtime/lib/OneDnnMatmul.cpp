//===- OneDnnMatmul.cpp - products on oneDNN's matmul ---------------------===//
//
// oneDNN threads with GCC's OpenMP. Each thread that calls it is told to
// keep its products to itself (omp_set_num_threads(1), once a thread): its
// own threads would split a product, and the split would change its bits.
// The primitives and the scratch buffer they run with are the thread's own
// too, so no two threads ever share one.
//
//===----------------------------------------------------------------------===//
#include "OneDnnMatmul.h"
#include "OneDnnContext.h"

#ifdef MBT_HAVE_DNNL
#include <omp.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <array>
#include <memory>
#include <unordered_map>
#include <vector>
#endif

namespace mbt {
namespace runtime {

#ifdef MBT_HAVE_DNNL
namespace {

using dt = dnnl::memory::data_type;
using dims = dnnl::memory::dims;

bool effectiveIsaHas(dnnl::cpu_isa isa) {
  auto have = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  auto want = static_cast<unsigned>(isa);
  return (have & want) == want;
}

/// A matmul primitive and the scratchpad it runs with.
struct Primitive {
  dnnl::matmul matmul;
  ThreadScratchpad scratchpad;
};

/// `desc` made into a primitive whose scratchpad is ours, or null where
/// oneDNN has none for it.
std::unique_ptr<Primitive> makePrimitive(const dnnl::matmul::desc &desc,
                                         bool accumulate) {
  try {
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    if (accumulate) {
      dnnl::post_ops sum;
      sum.append_sum(1.0f);
      attr.set_post_ops(sum);
    }
    dnnl::matmul::primitive_desc pd(desc, attr, oneDnnEngine());
    auto made = std::make_unique<Primitive>();
    made->matmul = dnnl::matmul(pd);
    made->scratchpad = ThreadScratchpad(pd.scratchpad_desc());
    return made;
  } catch (const dnnl::error &) {
    return nullptr;
  }
}

/// The strides of a rows x cols operand that BLAS reads as `layout`:
/// row-major (leading dim, 1) or column-major (1, leading dim).
dims stridesOf(const BlasLayout &layout) {
  int64_t ld = layout.leadingDim;
  return layout.transposed ? dims{1, ld} : dims{ld, 1};
}

void run(Primitive &p, const dnnl::memory &a, const dnnl::memory &b,
         const dnnl::memory &c) {
  dnnl::stream &stream = oneDnnThreadStream();
  p.matmul.execute(stream, {{DNNL_ARG_SRC, a},
                            {DNNL_ARG_WEIGHTS, b},
                            {DNNL_ARG_DST, c},
                            {DNNL_ARG_SCRATCHPAD, p.scratchpad.get()}});
  stream.wait();
}

/// The f32 primitive for a transpose pair, its dims and leading dims left
/// to run time: one serves every size, where creating one per shape costs
/// 0.06-0.4 ms each time a sequence model meets a new batch length, and it
/// runs within 5% of those (docs/benchmarks.md). Created on first use; null
/// where oneDNN has none.
Primitive *f32Primitive(bool transposeA, bool transposeB, bool accumulate) {
  constexpr int64_t any = DNNL_RUNTIME_DIM_VAL;
  thread_local std::unique_ptr<Primitive> made[2][2][2];
  thread_local bool tried[2][2][2] = {};
  std::unique_ptr<Primitive> &p = made[transposeA][transposeB][accumulate];
  bool &once = tried[transposeA][transposeB][accumulate];
  if (!once) {
    once = true;
    auto desc = [&](bool transposed) {
      return dnnl::memory::desc({any, any}, dt::f32,
                                transposed ? dims{1, any} : dims{any, 1});
    };
    p = makePrimitive(
        dnnl::matmul::desc(desc(transposeA), desc(transposeB), desc(false)),
        accumulate);
  }
  return p.get();
}

/// The bf16 primitives' key: m, n, k, the strides of a, b and c (row,
/// column) and whether c is accumulated into (0 or 1).
using Bf16Key = std::array<int64_t, 10>;

struct Bf16KeyHash {
  size_t operator()(const Bf16Key &key) const {
    size_t h = 0;
    for (int64_t v : key)
      h = h * 1000003u ^ std::hash<int64_t>()(v);
    return h;
  }
};

/// A bf16 primitive with its memory objects: one per shape, created on
/// first use; null where oneDNN has none (a layout of C it does not take).
/// A size-free one, as the f32 products have, ran MLP-S's bf16 step 10%
/// slower and gained nothing on the sequence models.
struct Bf16Primitive {
  std::unique_ptr<Primitive> primitive;
  dnnl::memory a, b, c;
};

Bf16Primitive *bf16Primitive(const Bf16Key &key) {
  // Sequence models meet a new m at each batch length; a bounded cache
  // keeps a long run's memory flat.
  constexpr size_t kMaxPrimitives = 512;
  thread_local std::unordered_map<Bf16Key, std::unique_ptr<Bf16Primitive>,
                                  Bf16KeyHash>
      cache;
  auto found = cache.find(key);
  if (found != cache.end())
    return found->second.get();
  if (cache.size() >= kMaxPrimitives)
    cache.clear();
  std::unique_ptr<Bf16Primitive> made;
  try {
    auto [m, n, k, aRow, aCol, bRow, bCol, cRow, cCol, accumulate] = key;
    dnnl::memory::desc aDesc({m, k}, dt::bf16, {aRow, aCol});
    dnnl::memory::desc bDesc({k, n}, dt::bf16, {bRow, bCol});
    dnnl::memory::desc cDesc({m, n}, dt::f32, {cRow, cCol});
    auto primitive =
        makePrimitive(dnnl::matmul::desc(aDesc, bDesc, cDesc), accumulate);
    if (primitive) {
      made = std::make_unique<Bf16Primitive>();
      made->primitive = std::move(primitive);
      made->a = dnnl::memory(aDesc, oneDnnEngine(), DNNL_MEMORY_NONE);
      made->b = dnnl::memory(bDesc, oneDnnEngine(), DNNL_MEMORY_NONE);
      made->c = dnnl::memory(cDesc, oneDnnEngine(), DNNL_MEMORY_NONE);
    }
  } catch (const dnnl::error &) {
    made.reset();
  }
  return (cache[key] = std::move(made)).get();
}

} // namespace

dnnl::engine &oneDnnEngine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::stream &oneDnnThreadStream() {
  thread_local bool oneThread = (omp_set_num_threads(1), true);
  (void)oneThread;
  thread_local dnnl::stream stream(oneDnnEngine());
  return stream;
}

ThreadScratchpad::ThreadScratchpad(const dnnl::memory::desc &desc)
    : memory(desc, oneDnnEngine(), DNNL_MEMORY_NONE), size(desc.get_size()) {}

const dnnl::memory &ThreadScratchpad::get() {
  thread_local std::vector<uint8_t> scratch;
  if (scratch.size() < size)
    scratch.resize(size);
  memory.set_data_handle(scratch.data());
  return memory;
}

bool haveOneDnn() { return true; }

bool oneDnnHasBf16Products() {
  static const bool has = effectiveIsaHas(dnnl::cpu_isa::avx512_core_bf16);
  return has;
}

bool oneDnnHasAmx() {
  static const bool has = effectiveIsaHas(dnnl::cpu_isa::avx512_core_amx);
  return has;
}

bool oneDnnHasAvx512() {
  static const bool has = effectiveIsaHas(dnnl::cpu_isa::avx512_core);
  return has;
}

bool multiplyOnOneDnnF32(const Matrix<float> &a, const Matrix<float> &b,
                         const Matrix<float> &c, bool accumulate) {
  BlasLayout la = blasLayout(a), lb = blasLayout(b), lc = blasLayout(c);
  if (!la.valid || !lb.valid || !lc.valid || lc.transposed)
    return false;
  try {
    Primitive *p = f32Primitive(la.transposed, lb.transposed, accumulate);
    if (!p)
      return false;
    dnnl::engine &engine = oneDnnEngine();
    auto memory = [&](const Matrix<float> &m, const BlasLayout &layout) {
      return dnnl::memory({{m.rows, m.cols}, dt::f32, stridesOf(layout)},
                          engine, m.data);
    };
    run(*p, memory(a, la), memory(b, lb), memory(c, lc));
    return true;
  } catch (const dnnl::error &) {
    return false;
  }
}

bool multiplyOnOneDnnBf16(const Matrix<uint16_t> &a, const Matrix<uint16_t> &b,
                          const Matrix<float> &c, bool accumulate) {
  try {
    Bf16Primitive *p = bf16Primitive(
        {c.rows, c.cols, a.cols, a.rowStride, a.colStride, b.rowStride,
         b.colStride, c.rowStride, c.colStride, int64_t(accumulate)});
    if (!p)
      return false;
    p->a.set_data_handle(a.data);
    p->b.set_data_handle(b.data);
    p->c.set_data_handle(c.data);
    run(*p->primitive, p->a, p->b, p->c);
    return true;
  } catch (const dnnl::error &) {
    return false;
  }
}

#else

bool haveOneDnn() { return false; }
bool oneDnnHasBf16Products() { return false; }
bool oneDnnHasAmx() { return false; }
bool oneDnnHasAvx512() { return false; }
bool multiplyOnOneDnnF32(const Matrix<float> &, const Matrix<float> &,
                         const Matrix<float> &, bool) {
  return false;
}
bool multiplyOnOneDnnBf16(const Matrix<uint16_t> &, const Matrix<uint16_t> &,
                          const Matrix<float> &, bool) {
  return false;
}

#endif

} // namespace runtime
} // namespace mbt
