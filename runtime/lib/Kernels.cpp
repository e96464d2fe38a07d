//===- Kernels.cpp - BLAS-backed kernels imported by artifacts ------------===//
//
// Batched matmul on top of cblas_sgemm or oneDNN's f32 matmul (cblas_dgemm
// for f64 models), one call per batch index. Batches are
// never merged into one larger GEMM even when the strides would allow it: a
// merged call could pick a different blocking (and thus summation order) and
// break the promise that model i's numbers do not depend on M.
//
// The batch indices (the models) are spread over threads (MBT_NUM_THREADS,
// else OPENBLAS_NUM_THREADS, else the cores), each GEMM running
// single-threaded: the models' GEMMs are small, and OpenBLAS's own threads
// spent more time handing work over (sched_yield) than computing
// (docs/benchmarks.md). The threads are the OpenMP team the artifact's
// compiled loops run on, where it has one (LoopTeam.h): two sets of threads
// on the same cores woke and slept at every loop and product of a step,
// and left a third of the cores idle. A lone model runs on one thread, and
// so does a call with too little work to pay for handing it over (a GRU's
// products at one position).
//
//===----------------------------------------------------------------------===//

#include "mbt/runtime/Kernels.h"

#include "Bf16Matmul.h"
#include "KernelMatrix.h"
#include "KernelThreads.h"
#include "OneDnnMatmul.h"
#include "mbt/runtime/LoopTeam.h"

#ifdef MBT_HAVE_OPENBLAS
#include <cblas.h>
#endif
#include <fmt/format.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace mbt {
namespace runtime {

namespace {
std::mutex errorMutex;
std::string firstError;

/// Threads that run [begin, end) chunks of a loop; the caller runs the
/// first chunk itself. One loop at a time (the artifact calls the kernel
/// from one thread).
class ThreadPool {
public:
  explicit ThreadPool(int threads) {
    for (int t = 1; t < threads; ++t)
      workers.emplace_back([this, t] { work(t); });
  }
  ~ThreadPool() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
    }
    wake.notify_all();
    for (std::thread &worker : workers)
      worker.join();
  }
  int size() const { return static_cast<int>(workers.size()) + 1; }

  /// Runs body(begin, end) over [0, n) in size() contiguous chunks.
  void parallelFor(int64_t n,
                   const std::function<void(int64_t, int64_t)> &body) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      task = &body;
      count = n;
      pending = static_cast<int>(workers.size());
      ++generation;
    }
    wake.notify_all();
    runChunk(0);
    std::unique_lock<std::mutex> lock(mutex);
    done.wait(lock, [this] { return pending == 0; });
    task = nullptr;
  }

private:
  void runChunk(int t) {
    int64_t parts = size();
    int64_t begin = count * t / parts, end = count * (t + 1) / parts;
    if (begin < end)
      (*task)(begin, end);
  }
  void work(int t) {
    uint64_t seen = 0;
    while (true) {
      {
        std::unique_lock<std::mutex> lock(mutex);
        wake.wait(lock, [&] { return stopping || generation != seen; });
        if (stopping)
          return;
        seen = generation;
      }
      runChunk(t);
      {
        std::lock_guard<std::mutex> lock(mutex);
        --pending;
      }
      done.notify_one();
    }
  }

  std::vector<std::thread> workers;
  std::mutex mutex;
  std::condition_variable wake, done;
  const std::function<void(int64_t, int64_t)> *task = nullptr;
  int64_t count = 0;
  int pending = 0;
  uint64_t generation = 0;
  bool stopping = false;
};

/// Threads for batched kernels: MBT_NUM_THREADS, else OPENBLAS_NUM_THREADS,
/// else the hardware's.
int kernelThreads() {
  for (const char *name : {"MBT_NUM_THREADS", "OPENBLAS_NUM_THREADS"})
    if (const char *value = std::getenv(name)) {
      int n = std::atoi(value);
      if (n >= 1)
        return std::min(n, 256);
    }
  return std::max(1u, std::thread::hardware_concurrency());
}

ThreadPool &kernelPool() {
  static ThreadPool pool(kernelThreads());
  return pool;
}

#ifdef MBT_HAVE_OPENBLAS
/// One GEMM in row-major order: sgemm or dgemm.
inline void gemm(bool ta, bool tb, int m, int n, int k, const float *a, int lda,
                 const float *b, int ldb, bool accumulate, float *c, int ldc) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
              tb ? CblasTrans : CblasNoTrans, m, n, k, 1.0f, a, lda, b, ldb,
              accumulate ? 1.0f : 0.0f, c, ldc);
}
inline void gemm(bool ta, bool tb, int m, int n, int k, const double *a,
                 int lda, const double *b, int ldb, bool accumulate, double *c,
                 int ldc) {
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
              tb ? CblasTrans : CblasNoTrans, m, n, k, 1.0, a, lda, b, ldb,
              accumulate ? 1.0 : 0.0, c, ldc);
}
#else
/// A runtime built without OpenBLAS (MBT_WITH_OPENBLAS=OFF, for a GPU host
/// that lacks it) multiplies with the reference loop: correct, slow.
template <typename T>
inline void gemm(bool ta, bool tb, int m, int n, int k, const T *a, int lda,
                 const T *b, int ldb, bool accumulate, T *c, int ldc) {
  Matrix<T> sa{const_cast<T *>(a), m, k, ta ? 1 : lda, ta ? lda : 1};
  Matrix<T> sb{const_cast<T *>(b), k, n, tb ? 1 : ldb, tb ? ldb : 1};
  naiveMatmul(sa, sb, Matrix<T>{c, m, n, ldc, 1}, accumulate);
}
#endif

/// Whether oneDNN's f32 GEMM multiplies an m x k by k x n product. Where
/// it runs on AVX-512 it matches OpenBLAS or beats it by up to 1.4x on
/// products of a million multiply-adds or more, and by 3.5-3.9x where m
/// is a handful of channels and n or k a convolution's positions; but its
/// fixed cost per call, and its handling of a narrow n, lose up to 2x on
/// smaller or narrow products. A narrow one of a thousand rows or more (a
/// recurrence's input gradient, 4096 x 16 x 96) is oneDNN's again: 1.46x,
/// 1.24x and 0.96x OpenBLAS in three runs on a Sapphire Rapids Xeon
/// (mbt-bench-gemm-engines, docs/benchmarks.md).
/// MBT_F32_MATMUL=openblas or =onednn takes one library for every product. The
/// choice depends on the shape alone, never on the batch, so model i runs the
/// same GEMM alone and among others.
bool onOneDnn(int64_t m, int64_t n, int64_t k) {
  if (!haveOneDnn())
    return false;
  const char *forced = std::getenv("MBT_F32_MATMUL");
  if (forced && std::strcmp(forced, "openblas") == 0)
    return false;
  if (forced && std::strcmp(forced, "onednn") == 0)
    return true;
  constexpr double kMinMultiplyAdds = 1 << 20;
  return oneDnnHasAvx512() &&
         double(m) * double(n) * double(k) >= kMinMultiplyAdds &&
         (n >= 32 || k >= 1024 || m >= 1024);
}

/// c = a b (+ c) for logical matrices a (m x k), b (k x n) and c (m x n) of
/// any strides: one GEMM where BLAS can read them, whose transposes follow
/// from the strides, else the reference loop. f32 products run on oneDNN
/// or OpenBLAS (onOneDnn), f64 ones on OpenBLAS.
template <typename T>
void multiply(Matrix<T> a, Matrix<T> b, Matrix<T> c, bool accumulate) {
  if (c.rows == 0 || c.cols == 0)
    return;
  if (a.cols == 0) {
    // An empty contraction adds nothing; BLAS with k = 0 may not write c.
    if (!accumulate)
      for (int64_t r = 0; r < c.rows; ++r)
        for (int64_t col = 0; col < c.cols; ++col)
          c.data[r * c.rowStride + col * c.colStride] = T(0);
    return;
  }
  BlasLayout lc = blasLayout(c);
  if (lc.valid && lc.transposed) {
    // BLAS writes c row-major: compute c^T = b^T a^T instead.
    Matrix<T> at = transposed(a);
    a = transposed(b);
    b = at;
    c = transposed(c);
    lc = blasLayout(c);
  }
  BlasLayout la = blasLayout(a), lb = blasLayout(b);
  if (!la.valid || !lb.valid || !lc.valid || lc.transposed) {
    naiveMatmul(a, b, c, accumulate);
    return;
  }
  if constexpr (std::is_same_v<T, float>)
    if (onOneDnn(c.rows, c.cols, a.cols) &&
        multiplyOnOneDnnF32(a, b, c, accumulate))
      return;
  gemm(la.transposed, lb.transposed, static_cast<int>(c.rows),
       static_cast<int>(c.cols), static_cast<int>(a.cols), a.data,
       la.leadingDim, b.data, lb.leadingDim, accumulate, c.data, lc.leadingDim);
}

/// The least work (multiply-adds times 2) of one batched call that the
/// pool's threads share: 4 MFLOP, some 40 microseconds of one core.
constexpr double kMinParallelFlops = 4.0e6;

/// The calling thread's frozen models (IdleModelsGuard).
struct IdleModels {
  const uint8_t *idle = nullptr;
  int64_t models = 0;
};
thread_local IdleModels idleModels;

/// Whether the operands' shapes agree: c [batch..., m, n], op(a)
/// [batch..., m, k], op(b) [batch..., k, n], each dim within BLAS's int.
template <typename T, int R>
bool shapesAgree(const MemRef<T, R> &a, bool ta, const MemRef<T, R> &b, bool tb,
                 const MemRef<T, R> &c) {
  for (int d = 0; d < R - 2; ++d)
    if (a.sizes[d] != c.sizes[d] || b.sizes[d] != c.sizes[d])
      return false;
  int64_t am = a.sizes[R - 2 + ta], ak = a.sizes[R - 1 - ta];
  int64_t bk = b.sizes[R - 2 + tb], bn = b.sizes[R - 1 - tb];
  return am == c.sizes[R - 2] && bn == c.sizes[R - 1] && ak == bk;
}

/// One batch index's product: c = a b (+ c).
template <typename T>
using MatrixProduct = void (*)(Matrix<T> a, Matrix<T> b, Matrix<T> c,
                               bool accumulate);

/// The batched kernel of rank R (R - 2 batch dims) for elements of T, each
/// batch index's product computed by `product`; `name` is its ABI name,
/// for error messages.
template <typename T, int R>
void batchMatmul(const char *name, MemRef<T, R> *a, MemRef<T, R> *b,
                 MemRef<T, R> *c, int64_t transposeA, int64_t transposeB,
                 int64_t accumulate, MatrixProduct<T> product = multiply<T>) {
  if (!a || !b || !c) {
    recordKernelError(std::string(name) + ": null descriptor");
    return;
  }
  bool ta = transposeA != 0, tb = transposeB != 0;
  if (!shapesAgree(*a, ta, *b, tb, *c)) {
    recordKernelError(
        fmt::format("{}: operand shapes do not agree: a {}{}, b {}{}, c {}",
                    name, shapeOf(*a), ta ? " (transposed)" : "", shapeOf(*b),
                    tb ? " (transposed)" : "", shapeOf(*c)));
    fillNaN(c);
    return;
  }
  constexpr int64_t kIntMax = std::numeric_limits<int>::max();
  if (c->sizes[R - 2] > kIntMax || c->sizes[R - 1] > kIntMax ||
      a->sizes[R - 1 - ta] > kIntMax) {
    recordKernelError(std::string(name) + ": dimension exceeds BLAS int range");
    fillNaN(c);
    return;
  }
  int64_t batch = 1;
  for (int d = 0; d < R - 2; ++d)
    batch *= c->sizes[d];
  // Every GEMM runs single-threaded, whatever the number of models and
  // threads: OpenBLAS's threading, and any split of one product, changes
  // its last bits with the split (measured), and model i must get the same
  // bits alone as in a batch. The batch is spread over threads instead.
#ifdef MBT_HAVE_OPENBLAS
  if (openblas_get_num_threads() != 1)
    openblas_set_num_threads(1);
#endif
  double flops = 2.0 * batch * double(c->sizes[R - 2]) *
                 double(c->sizes[R - 1]) * double(a->sizes[R - 1 - ta]);
  forEachBatchIndex(batch, flops, [&](int64_t i) {
    Matrix<T> sa = slice(*a, i), sb = slice(*b, i);
    product(ta ? transposed(sa) : sa, tb ? transposed(sb) : sb, slice(*c, i),
            accumulate != 0);
  });
}
} // namespace

IdleIndices idleIndices(int64_t batch) {
  const IdleModels idle = idleModels;
  if (!idle.idle || idle.models <= 0 || batch % idle.models != 0)
    return {};
  return {idle.idle, batch / idle.models};
}

bool runsOnCallingThread(int64_t batch, double flops) {
  // Handing work to other threads costs tens of microseconds on a VM when
  // they sleep; a batch whose work adds up to less than that (a
  // recurrence's products at one position) runs on the calling thread.
  // Either way each index runs whole on one thread, so no bit depends on
  // the choice.
  static const int threads = kernelThreads();
  return batch < 2 || threads < 2 || flops < kMinParallelFlops;
}

void spreadOverThreads(int64_t batch,
                       const std::function<void(int64_t, int64_t)> &chunk) {
  // The compiled loops' team where the artifact has one, so that one set
  // of threads, kept awake between the loops and the products, runs the
  // whole step; else a pool of the kernels' own.
  static const int threads = kernelThreads();
  if (haveLoopTeam())
    forkOnLoopTeam(batch, threads, chunk);
  else
    kernelPool().parallelFor(batch, chunk);
}

void multiplyF32(Matrix<float> a, Matrix<float> b, Matrix<float> c,
                 bool accumulate) {
  multiply(a, b, c, accumulate);
}

std::string f32MatmulEngine(int64_t m, int64_t n, int64_t k) {
#ifdef MBT_HAVE_OPENBLAS
  const char *blas = "OpenBLAS sgemm";
#else
  const char *blas = "reference loop";
#endif
  return onOneDnn(m, n, k) ? "oneDNN f32" : blas;
}

IdleModelsGuard::IdleModelsGuard(const uint8_t *idle, int64_t models) {
  idleModels = {idle, models};
}

IdleModelsGuard::~IdleModelsGuard() { idleModels = {}; }

void configureLoopThreads() {
  // setenv with overwrite = 0 keeps what the user set.
  std::string threads = std::to_string(kernelThreads());
  setenv("OMP_NUM_THREADS", threads.c_str(), 0);
  // An idle team thread spins 1 ms before it sleeps: long enough to stay
  // awake from one loop or product of a step to the next (waking it costs
  // tens of microseconds on a VM, each time), short enough to leave the
  // core to the runtime's other threads between steps.
  setenv("KMP_BLOCKTIME", "1", 0);
}

void recordKernelError(const std::string &message) {
  std::lock_guard<std::mutex> lock(errorMutex);
  if (firstError.empty())
    firstError = message;
}

std::string takeKernelError() {
  std::lock_guard<std::mutex> lock(errorMutex);
  std::string result;
  result.swap(firstError);
  return result;
}

} // namespace runtime
} // namespace mbt

using mbt::MemRef;

#define MBT_BATCH_MATMUL(SUFFIX, T, R)                                         \
  extern "C" void _mlir_ciface_mbt_rt_batch_matmul_##SUFFIX(                   \
      MemRef<T, R> *a, MemRef<T, R> *b, MemRef<T, R> *c, int64_t transposeA,   \
      int64_t transposeB, int64_t accumulate) {                                \
    mbt::runtime::batchMatmul("mbt_rt_batch_matmul_" #SUFFIX, a, b, c,         \
                              transposeA, transposeB, accumulate);             \
  }
MBT_BATCH_MATMUL(f32, float, 3)
MBT_BATCH_MATMUL(f64, double, 3)
MBT_BATCH_MATMUL(f32_4d, float, 4)
MBT_BATCH_MATMUL(f64_4d, double, 4)
MBT_BATCH_MATMUL(f32_5d, float, 5)
MBT_BATCH_MATMUL(f64_5d, double, 5)
MBT_BATCH_MATMUL(f32_6d, float, 6)
MBT_BATCH_MATMUL(f64_6d, double, 6)
#undef MBT_BATCH_MATMUL

extern "C" void _mlir_ciface_mbt_rt_batch_matmul_f32_bf16(
    MemRef<float, 3> *a, MemRef<float, 3> *b, MemRef<float, 3> *c,
    int64_t transposeA, int64_t transposeB, int64_t accumulate) {
  mbt::runtime::startBf16Call();
  mbt::runtime::batchMatmul("mbt_rt_batch_matmul_f32_bf16", a, b, c, transposeA,
                            transposeB, accumulate,
                            mbt::runtime::multiplyRoundedToBf16);
}
