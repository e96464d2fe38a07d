//===- Kernels.cpp - BLAS-backed kernels imported by artifacts ------------===//
//
// Batched matmul on top of cblas_sgemm (cblas_dgemm for f64 models), one
// call per batch index. Batches are
// never merged into one larger GEMM even when the strides would allow it: a
// merged call could pick a different blocking (and thus summation order) and
// break the promise that model i's numbers do not depend on M.
//
// The batch indices (the models) are spread over a pool of threads
// (MBT_NUM_THREADS, else OPENBLAS_NUM_THREADS, else the cores), each sgemm
// running single-threaded: the models' GEMMs are small, and OpenBLAS's own
// threads spent more time handing work over (sched_yield) than computing
// (docs/benchmarks.md). A lone model therefore runs on one thread.
//
//===----------------------------------------------------------------------===//

#include "mbt/runtime/Kernels.h"

#ifdef MBT_HAVE_OPENBLAS
#include <cblas.h>
#endif
#include <fmt/format.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <functional>
#include <limits>
#include <mutex>
#include <thread>
#include <vector>

namespace mbt {
namespace runtime {

namespace {
std::mutex errorMutex;
std::string firstError;

/// A rank-2 view of batch slice `i` of a 3-d operand.
template <typename T> struct Matrix {
  T *data;
  int64_t rows, cols; // stored shape (before any transpose)
  int64_t rowStride;  // elements between rows
  int64_t colStride;  // elements between columns (1 for BLAS)
};

template <typename T> Matrix<T> slice(const MemRef<T, 3> &ref, int64_t i) {
  return {ref.data + ref.offset + i * ref.strides[0], ref.sizes[1],
          ref.sizes[2], ref.strides[1], ref.strides[2]};
}

/// BLAS takes a row-major matrix when columns are contiguous and the row
/// stride covers a row. A single row or column may carry any stride, since
/// only one step along that dim is ever taken.
template <typename T> bool blasCompatible(const Matrix<T> &m) {
  return (m.colStride == 1 || m.cols <= 1) &&
         (m.rowStride >= m.cols || m.rows <= 1);
}

template <typename T> int blasLeadingDim(const Matrix<T> &m) {
  return static_cast<int>(std::max<int64_t>({m.rowStride, m.cols, 1}));
}

/// op(m)(r, k): element of the possibly transposed matrix.
template <typename T>
inline T at(const Matrix<T> &m, bool transposed, int64_t r, int64_t k) {
  return transposed ? m.data[k * m.rowStride + r * m.colStride]
                    : m.data[r * m.rowStride + k * m.colStride];
}

/// Fallback for layouts BLAS cannot take (non-unit column strides). Not
/// produced by the compiler today, but it keeps a surprising layout correct
/// instead of wrong.
template <typename T>
void naiveMatmul(const Matrix<T> &a, bool ta, const Matrix<T> &b, bool tb,
                 const Matrix<T> &c, int64_t m, int64_t n, int64_t k,
                 bool accumulate) {
  for (int64_t r = 0; r < m; ++r)
    for (int64_t col = 0; col < n; ++col) {
      T sum = accumulate ? c.data[r * c.rowStride + col * c.colStride] : T(0);
      for (int64_t j = 0; j < k; ++j)
        sum += at(a, ta, r, j) * at(b, tb, j, col);
      c.data[r * c.rowStride + col * c.colStride] = sum;
    }
}

template <typename T> void fillNaN(MemRef<T, 3> *c) {
  if (!c || !c->data)
    return;
  for (int64_t i = 0; i < c->sizes[0]; ++i)
    for (int64_t r = 0; r < c->sizes[1]; ++r)
      for (int64_t col = 0; col < c->sizes[2]; ++col)
        c->data[c->offset + i * c->strides[0] + r * c->strides[1] +
                col * c->strides[2]] = std::numeric_limits<T>::quiet_NaN();
}

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

template <typename T> std::string shapeOf(const MemRef<T, 3> &ref) {
  return fmt::format("[{},{},{}]", ref.sizes[0], ref.sizes[1], ref.sizes[2]);
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
  Matrix<T> sa{const_cast<T *>(a), ta ? k : m, ta ? m : k, lda, 1};
  Matrix<T> sb{const_cast<T *>(b), tb ? n : k, tb ? k : n, ldb, 1};
  Matrix<T> sc{c, m, n, ldc, 1};
  naiveMatmul(sa, ta, sb, tb, sc, m, n, k, accumulate);
}
#endif

/// The batched kernel for elements of T; `name` is its ABI name, for
/// error messages.
/// The calling thread's frozen models (IdleModelsGuard).
struct IdleModels {
  const uint8_t *idle = nullptr;
  int64_t models = 0;
};
thread_local IdleModels idleModels;

template <typename T>
void batchMatmul(const char *name, MemRef<T, 3> *a, MemRef<T, 3> *b,
                 MemRef<T, 3> *c, int64_t transposeA, int64_t transposeB,
                 int64_t accumulate) {
  if (!a || !b || !c) {
    recordKernelError(std::string(name) + ": null descriptor");
    return;
  }
  bool ta = transposeA != 0, tb = transposeB != 0;
  int64_t batch = c->sizes[0];
  int64_t m = c->sizes[1], n = c->sizes[2];
  int64_t k = ta ? a->sizes[1] : a->sizes[2];
  int64_t am = ta ? a->sizes[2] : a->sizes[1];
  int64_t bk = tb ? b->sizes[2] : b->sizes[1];
  int64_t bn = tb ? b->sizes[1] : b->sizes[2];
  if (a->sizes[0] != batch || b->sizes[0] != batch || am != m || bk != k ||
      bn != n) {
    recordKernelError(
        fmt::format("{}: operand shapes do not agree: a {}{}, b {}{}, c {}",
                    name, shapeOf(*a), ta ? " (transposed)" : "", shapeOf(*b),
                    tb ? " (transposed)" : "", shapeOf(*c)));
    fillNaN(c);
    return;
  }
  constexpr int64_t kIntMax = std::numeric_limits<int>::max();
  if (m > kIntMax || n > kIntMax || k > kIntMax) {
    recordKernelError(std::string(name) + ": dimension exceeds BLAS int range");
    fillNaN(c);
    return;
  }
  // Slices of frozen models are skipped (their results are discarded).
  const IdleModels idle = idleModels;
  int64_t perModel = idle.idle && idle.models > 0 && batch % idle.models == 0
                         ? batch / idle.models
                         : 0;
  auto multiply = [&](int64_t i) {
    if (perModel && idle.idle[i / perModel])
      return;
    Matrix<T> sa = slice(*a, i), sb = slice(*b, i), sc = slice(*c, i);
    if (m == 0 || n == 0)
      return;
    if (k == 0) {
      // An empty contraction adds nothing; BLAS with k = 0 may not write c.
      if (accumulate)
        return;
      for (int64_t r = 0; r < m; ++r)
        for (int64_t col = 0; col < n; ++col)
          sc.data[r * sc.rowStride + col * sc.colStride] = T(0);
      return;
    }
    if (!blasCompatible(sa) || !blasCompatible(sb) || !blasCompatible(sc)) {
      naiveMatmul(sa, ta, sb, tb, sc, m, n, k, accumulate != 0);
      return;
    }
    gemm(ta, tb, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k),
         sa.data, blasLeadingDim(sa), sb.data, blasLeadingDim(sb),
         accumulate != 0, sc.data, blasLeadingDim(sc));
  };
  // Every GEMM runs single-threaded, whatever the number of models and
  // threads: OpenBLAS's threading, and any split of one product, changes
  // its last bits with the split (measured), and model i must get the same
  // bits alone as in a batch. The pool spreads the models over threads.
  ThreadPool &pool = kernelPool();
#ifdef MBT_HAVE_OPENBLAS
  if (openblas_get_num_threads() != 1)
    openblas_set_num_threads(1);
#endif
  if (batch < 2 || pool.size() < 2) {
    for (int64_t i = 0; i < batch; ++i)
      multiply(i);
    return;
  }
  pool.parallelFor(batch, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      multiply(i);
  });
}
} // namespace

IdleModelsGuard::IdleModelsGuard(const uint8_t *idle, int64_t models) {
  idleModels = {idle, models};
}

IdleModelsGuard::~IdleModelsGuard() { idleModels = {}; }

void configureLoopThreads() {
  // setenv with overwrite = 0 keeps what the user set.
  std::string threads = std::to_string(kernelThreads());
  setenv("OMP_NUM_THREADS", threads.c_str(), 0);
  setenv("KMP_BLOCKTIME", "0", 0);
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

using mbt::MemRef3D;
using mbt::MemRef3F;

extern "C" void _mlir_ciface_mbt_rt_batch_matmul_f32(MemRef3F *a, MemRef3F *b,
                                                     MemRef3F *c,
                                                     int64_t transposeA,
                                                     int64_t transposeB,
                                                     int64_t accumulate) {
  mbt::runtime::batchMatmul("mbt_rt_batch_matmul_f32", a, b, c, transposeA,
                            transposeB, accumulate);
}

extern "C" void _mlir_ciface_mbt_rt_batch_matmul_f64(MemRef3D *a, MemRef3D *b,
                                                     MemRef3D *c,
                                                     int64_t transposeA,
                                                     int64_t transposeB,
                                                     int64_t accumulate) {
  mbt::runtime::batchMatmul("mbt_rt_batch_matmul_f64", a, b, c, transposeA,
                            transposeB, accumulate);
}
