// Batched SGEMM: MLIR-generated (transform-dialect schedules) vs OpenBLAS.
// Built by build.sh; run by run.sh. Single-threaded (1T) and batch split
// over 2 std::threads (2T) for both. Variants are interleaved per repeat and
// medians reported, since the machine is shared.
#include <algorithm>
#include <cblas.h>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <immintrin.h>
#include <random>
#include <string>
#include <thread>
#include <vector>

extern "C" void openblas_set_num_threads(int);

struct MemRef3 {
  float *allocated, *aligned;
  int64_t offset, sizes[3], strides[3];
};
using Kernel = void (*)(MemRef3 *, MemRef3 *, MemRef3 *);

#define DECL(s)                                                                \
  extern "C" void _mlir_ciface_bmm_nn_##s(MemRef3 *, MemRef3 *, MemRef3 *);    \
  extern "C" void _mlir_ciface_bmm_tn_##s(MemRef3 *, MemRef3 *, MemRef3 *);    \
  extern "C" void _mlir_ciface_bmm_nn2_##s(MemRef3 *, MemRef3 *, MemRef3 *);
DECL(s1)
DECL(s2)
DECL(s3)
DECL(s4)
DECL(s5)
DECL(s6)

static MemRef3 view(float *p, int64_t b0, int64_t nb, int64_t d1, int64_t d2) {
  MemRef3 m;
  m.allocated = m.aligned = p;
  m.offset = b0 * d1 * d2;
  m.sizes[0] = nb;
  m.sizes[1] = d1;
  m.sizes[2] = d2;
  m.strides[0] = d1 * d2;
  m.strides[1] = d2;
  m.strides[2] = 1;
  return m;
}

// One problem: C[b] (MxN) = op(A[b]) (MxK) * B[b] (KxN), row-major.
// transA: A[b] is stored KxM (shape 2: x^T * dh).
struct Problem {
  const char *name;
  int64_t batch, M, N, K;
  bool transA;
  std::vector<std::pair<std::string, Kernel>> mlir; // schedule -> kernel
};

// Single-core FMA peak: 24 independent zmm FMA chains (no memory traffic).
__attribute__((target("avx512f,fma"))) static double fmaPeakGflops() {
  constexpr int kChains = 24;
  volatile float seed = 1.0f;
  __m512 acc[kChains];
  for (int i = 0; i < kChains; ++i)
    acc[i] = _mm512_set1_ps(seed * i);
  const __m512 a = _mm512_set1_ps(seed * 0.999f),
               b = _mm512_set1_ps(seed * 1e-6f);
  const long iters = 20000000;
  auto t0 = std::chrono::steady_clock::now();
  for (long it = 0; it < iters; ++it)
    for (int i = 0; i < kChains; ++i)
      acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  double s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  float sink = 0;
  for (int i = 0; i < kChains; ++i)
    sink += _mm512_reduce_add_ps(acc[i]);
  if (sink == 12345.f)
    printf(" ");
  return 2.0 * 16 * kChains * iters / s * 1e-9;
}

static float *alloc(size_t n) {
  void *p = nullptr;
  if (posix_memalign(&p, 64, n * sizeof(float)))
    abort();
  return static_cast<float *>(p);
}

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 20;
  openblas_set_num_threads(1);
  const char *core = getenv("OPENBLAS_CORETYPE");
  printf("OPENBLAS_CORETYPE=%s  OpenBLAS config: %s\n", core ? core : "(unset)",
         openblas_get_config());
  double peak = 0;
  for (int i = 0; i < 5; ++i)
    peak = std::max(peak, fmaPeakGflops());
  printf("single-core AVX-512 FMA peak (measured, best of 5): %.1f GFLOP/s\n",
         peak);
  printf("repeats=%d (median reported, variants interleaved); %%peak = 1T GF/s "
         "/ peak;\n"
         "err = max|C - C_blas| / max|C_blas|\n\n",
         reps);
  std::vector<Problem> probs = {
      {"L1 fwd   64x(128x784 . 784x128)",
       64,
       128,
       128,
       784,
       false,
       {{"s1", _mlir_ciface_bmm_nn_s1},
        {"s2", _mlir_ciface_bmm_nn_s2},
        {"s3", _mlir_ciface_bmm_nn_s3},
        {"s4", _mlir_ciface_bmm_nn_s4},
        {"s5", _mlir_ciface_bmm_nn_s5},
        {"s6", _mlir_ciface_bmm_nn_s6}}},
      {"L1 dW    64x(784x128^T . 128x128)",
       64,
       784,
       128,
       128,
       true,
       {{"s1", _mlir_ciface_bmm_tn_s1},
        {"s2", _mlir_ciface_bmm_tn_s2},
        {"s3", _mlir_ciface_bmm_tn_s3},
        {"s4", _mlir_ciface_bmm_tn_s4},
        {"s5", _mlir_ciface_bmm_tn_s5},
        {"s6", _mlir_ciface_bmm_tn_s6}}},
      {"L2 fwd   64x(128x128 . 128x10)",
       64,
       128,
       10,
       128,
       false,
       {{"s1", _mlir_ciface_bmm_nn2_s1},
        {"s2", _mlir_ciface_bmm_nn2_s2},
        {"s3", _mlir_ciface_bmm_nn2_s3},
        {"s4", _mlir_ciface_bmm_nn2_s4},
        {"s5", _mlir_ciface_bmm_nn2_s5},
        {"s6", _mlir_ciface_bmm_nn2_s6}}},
  };
  for (auto &p : probs) {
    const int64_t Ar = p.transA ? p.K : p.M, Ac = p.transA ? p.M : p.K;
    const size_t nA = p.batch * p.M * p.K, nB = p.batch * p.K * p.N,
                 nC = p.batch * p.M * p.N;
    float *A = alloc(nA), *B = alloc(nB), *Cref = alloc(nC), *C = alloc(nC);
    std::mt19937 rng(42);
    std::uniform_real_distribution<float> U(-1.f, 1.f);
    for (size_t i = 0; i < nA; ++i)
      A[i] = U(rng);
    for (size_t i = 0; i < nB; ++i)
      B[i] = U(rng);

    auto blas = [&](int64_t b0, int64_t nb, float *Cout) {
      for (int64_t b = b0; b < b0 + nb; ++b)
        cblas_sgemm(CblasRowMajor, p.transA ? CblasTrans : CblasNoTrans,
                    CblasNoTrans, p.M, p.N, p.K, 1.f, A + b * p.M * p.K, Ac,
                    B + b * p.K * p.N, p.N, 0.f, Cout + b * p.M * p.N, p.N);
    };
    auto mlir = [&](Kernel k, int64_t b0, int64_t nb, float *Cout) {
      MemRef3 a = view(A, b0, nb, Ar, Ac), bb = view(B, b0, nb, p.K, p.N),
              c = view(Cout, b0, nb, p.M, p.N);
      k(&a, &bb, &c);
    };
    // Variant = (label, fn(b0, nb)); run with 1 or 2 threads over the batch.
    struct Variant {
      std::string label;
      std::function<void(int64_t, int64_t)> fn;
    };
    std::vector<Variant> vs;
    vs.push_back(
        {"openblas", [&](int64_t b0, int64_t nb) { blas(b0, nb, Cref); }});
    for (auto &[s, k] : p.mlir) {
      Kernel kk = k;
      vs.push_back({"mlir-" + s,
                    [&, kk](int64_t b0, int64_t nb) { mlir(kk, b0, nb, C); }});
    }
    blas(0, p.batch, Cref);
    double refmax = 0;
    for (size_t i = 0; i < nC; ++i)
      refmax = std::max(refmax, (double)std::fabs(Cref[i]));
    std::vector<double> relerr(vs.size(), 0);
    for (size_t v = 1; v < vs.size(); ++v) {
      memset(C, 0xff, nC * sizeof(float)); // NaN: catches unwritten outputs
      vs[v].fn(0, p.batch);
      double e = 0;
      for (size_t i = 0; i < nC; ++i) {
        double d = std::fabs((double)C[i] - Cref[i]);
        e = std::max(e, std::isnan(d) ? INFINITY : d / refmax);
      }
      relerr[v] = e;
    }
    const double gflop = 2.0 * p.batch * p.M * p.N * p.K * 1e-9;
    printf("%s  (%.3f GFLOP per call)\n", p.name, gflop);
    printf("  %-10s %9s %7s %9s %9s %9s %11s\n", "variant", "1T GF/s", "%peak",
           "1T ms", "2T GF/s", "2T ms", "err");
    for (int nt : {1, 2}) {
      auto run = [&](Variant &v) {
        auto t0 = std::chrono::steady_clock::now();
        if (nt == 1) {
          v.fn(0, p.batch);
        } else {
          int64_t h = p.batch / 2;
          std::thread t([&] { v.fn(h, p.batch - h); });
          v.fn(0, h);
          t.join();
        }
        return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                             t0)
            .count();
      };
      std::vector<std::vector<double>> ts(vs.size());
      for (int w = 0; w < 3; ++w)
        for (auto &v : vs)
          run(v);
      for (int r = 0; r < reps; ++r)
        for (size_t v = 0; v < vs.size(); ++v)
          ts[v].push_back(run(vs[v]));
      for (size_t v = 0; v < vs.size(); ++v) {
        std::sort(ts[v].begin(), ts[v].end());
        double med = ts[v][ts[v].size() / 2];
        vs[v].label +=
            "|" + std::to_string(gflop / med) + "|" + std::to_string(med * 1e3);
      }
    }
    for (size_t v = 0; v < vs.size(); ++v) {
      // label|gf1|ms1|gf2|ms2
      char name[64];
      double g1, m1, g2, m2;
      std::string l = vs[v].label;
      for (auto &ch : l)
        if (ch == '|')
          ch = ' ';
      sscanf(l.c_str(), "%63s %lf %lf %lf %lf", name, &g1, &m1, &g2, &m2);
      printf("  %-10s %9.1f %6.0f%% %9.2f %9.1f %9.2f %11.2e\n", name, g1,
             100 * g1 / peak, m1, g2, m2, relerr[v]);
    }
    printf("\n");
    free(A);
    free(B);
    free(Cref);
    free(C);
  }
}
