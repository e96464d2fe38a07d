//===- GemmEnginesBench.cpp - the product kernels on each engine ----------===//
//
// Times _mlir_ciface_mbt_rt_batch_matmul_f32 on one model (one thread) with
// every product on OpenBLAS (MBT_F32_MATMUL=openblas) and with every
// product on oneDNN (=onednn), for the products of the benchmarked
// workloads, and prints a Markdown table: GFLOP/s of each, and the library
// the kernel picks by default. Its numbers are the ground of the choice by
// shape in runtime/lib/Kernels.cpp (docs/benchmarks.md).
//
// With --bf16, a second table: _mlir_ciface_mbt_rt_batch_matmul_f32_bf16
// (operands rounded to bf16 as the kernel packs them) on oneDNN's bf16
// matmul (the default where the CPU has bf16 products) and on sgemm
// (MBT_BF16_MATMUL=f32), against the f32 kernel, packing included. The
// operands stay in the cache from call to call, so a step, whose operands
// come from memory, gains less than this table says.
//
//   build/bin/mbt-bench-gemm-engines [--seconds S] [--bf16]   (0.3 s a cell)
//
//===----------------------------------------------------------------------===//

#include "mbt/runtime/BlasKernels.h"
#include "mbt/runtime/Kernels.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

using namespace mbt;

namespace {

struct Shape {
  const char *workload;
  int64_t m, n, k;
  bool ta, tb;
};

// The products of the benchmarked steps, forward and adjoint, with
// m x k times k x n (op(a) op(b)).
const Shape kShapes[] = {
    {"MLP-S layer 1, forward", 128, 128, 784, false, false},
    {"MLP-S layer 1, weight gradient", 784, 128, 128, true, false},
    {"MLP-S logits", 128, 10, 128, false, false},
    {"MLP-S hidden gradient", 128, 128, 10, false, true},
    {"MLP-T layer 2, forward", 64, 128, 128, false, false},
    {"LeNet conv1 (im2col)", 6, 50176, 25, false, false},
    {"LeNet conv1, weight gradient", 6, 25, 50176, false, true},
    {"LeNet conv2 (im2col)", 16, 6400, 150, false, false},
    {"LeNet fc2", 64, 84, 120, false, false},
    {"transformer FFN in", 4096, 64, 32, false, false},
    {"transformer FFN, input gradient", 4096, 32, 64, false, true},
    {"transformer FFN, weight gradient", 32, 64, 4096, true, false},
    {"LM logits", 4096, 259, 64, false, false},
    {"LM logits, input gradient", 4096, 64, 259, false, true},
    {"LM logits, weight gradient", 64, 259, 4096, true, false},
    {"attention scores, head 16", 128, 128, 16, false, true},
    {"attention values, head 16", 128, 16, 128, false, false},
    {"transformer QKV", 4096, 96, 32, false, false},
    {"transformer FFN out", 4096, 32, 64, false, false},
    {"transformer QKV, weight gradient", 32, 96, 4096, true, false},
    {"GRU input projection", 4096, 96, 16, false, false},
    {"GRU input projection, input gradient", 4096, 16, 96, false, true},
    {"GRU input projection, weight gradient", 16, 96, 4096, true, false},
    {"LSTM input projection", 4096, 128, 16, false, false},
    {"small: 32 x 96 x 32", 32, 96, 32, false, false},
};

/// The f32 kernel, or the one of operands rounded to bf16.
enum class Kernel { F32, RoundedToBf16 };

/// GFLOP/s of `kernel` on `shape` with `variable`=`engine` (MBT_F32_MATMUL
/// or MBT_BF16_MATMUL; an empty engine leaves the default).
double rate(const Shape &shape, Kernel kernel, const char *variable,
            const char *engine, double seconds) {
  if (*engine)
    setenv(variable, engine, 1);
  std::vector<float> a(shape.m * shape.k), b(shape.k * shape.n),
      c(shape.m * shape.n);
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = float(i % 7) * 0.25f - 0.75f;
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = float(i % 5) * 0.5f - 1.0f;
  auto ra = shape.ta
                ? makeDenseMemRef<float, 3>(a.data(), {1, shape.k, shape.m})
                : makeDenseMemRef<float, 3>(a.data(), {1, shape.m, shape.k});
  auto rb = shape.tb
                ? makeDenseMemRef<float, 3>(b.data(), {1, shape.n, shape.k})
                : makeDenseMemRef<float, 3>(b.data(), {1, shape.k, shape.n});
  auto rc = makeDenseMemRef<float, 3>(c.data(), {1, shape.m, shape.n});
  auto call = [&] {
    if (kernel == Kernel::F32)
      _mlir_ciface_mbt_rt_batch_matmul_f32(&ra, &rb, &rc, shape.ta, shape.tb,
                                           0);
    else
      _mlir_ciface_mbt_rt_batch_matmul_f32_bf16(&ra, &rb, &rc, shape.ta,
                                                shape.tb, 0);
  };
  using Clock = std::chrono::steady_clock;
  for (int warm = 0; warm < 3; ++warm)
    call();
  int64_t calls = 0;
  auto start = Clock::now();
  double elapsed = 0;
  while (elapsed < seconds) {
    call();
    ++calls;
    elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  }
  unsetenv(variable);
  return 2.0 * shape.m * shape.n * shape.k * calls / elapsed / 1e9;
}

std::string cpuModel() {
  std::ifstream info("/proc/cpuinfo");
  std::string line;
  while (std::getline(info, line))
    if (line.rfind("model name", 0) == 0)
      return line.substr(line.find(':') + 2);
  return "unknown CPU";
}

} // namespace

/// The products of operands rounded to bf16 against f32's: on the
/// default engine (oneDNN's bf16 matmul where the CPU has bf16 products)
/// and on sgemm (the rounded values as f32).
void printBf16Table(double seconds) {
  fmt::print("\n| product | m x n x k | f32 GFLOP/s | bf16, default engine | "
             "bf16 on sgemm | best bf16 / f32 | default engine |\n"
             "|---|---|---:|---:|---:|---:|---|\n");
  for (const Shape &shape : kShapes) {
    double f32 = rate(shape, Kernel::F32, "MBT_F32_MATMUL", "", seconds);
    double engine =
        rate(shape, Kernel::RoundedToBf16, "MBT_BF16_MATMUL", "", seconds);
    double sgemm =
        rate(shape, Kernel::RoundedToBf16, "MBT_BF16_MATMUL", "f32", seconds);
    fmt::print("| {} | {} x {} x {}{}{} | {:.1f} | {:.1f} | {:.1f} | {:.2f}x | "
               "{} |\n",
               shape.workload, shape.m, shape.n, shape.k,
               shape.ta ? " (a^T)" : "", shape.tb ? " (b^T)" : "", f32, engine,
               sgemm, std::max(engine, sgemm) / f32,
               runtime::bf16MatmulEngine());
  }
}

int main(int argc, char **argv) {
  // OpenBLAS takes some CPUs it does not know (Sapphire Rapids, in its
  // 0.3.21) for a generic x86-64 and runs at a fifth of its speed; mbt-run
  // re-executes itself with the vector kernels, and so does this.
  runtime::useVectorBlasKernels(argv);
  double seconds = 0.3;
  bool bf16 = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
      seconds = std::atof(argv[++i]);
    } else if (std::strcmp(argv[i], "--bf16") == 0) {
      bf16 = true;
    } else {
      fmt::print(stderr, "usage: mbt-bench-gemm-engines [--seconds S] "
                         "[--bf16]\n");
      return 2;
    }
  }
  setenv("MBT_F32_MATMUL", "onednn", 1);
  bool haveOneDnn = runtime::f32MatmulEngine(1, 1, 1) == "oneDNN f32";
  unsetenv("MBT_F32_MATMUL");
  if (!haveOneDnn) {
    fmt::print(stderr, "mbt-bench-gemm-engines: the runtime was built "
                       "without oneDNN (MBT_WITH_DNNL)\n");
    return 1;
  }
  // One model: the kernel runs it on the calling thread.
  fmt::print("{}, OpenBLAS core {}, one thread, {:.1f} s a cell\n\n",
             cpuModel(), runtime::blasCoreName(), seconds);
  fmt::print("| product | m x n x k | OpenBLAS GFLOP/s | oneDNN GFLOP/s | "
             "oneDNN / OpenBLAS | default |\n|---|---|---:|---:|---:|---|\n");
  for (const Shape &shape : kShapes) {
    double blas =
        rate(shape, Kernel::F32, "MBT_F32_MATMUL", "openblas", seconds);
    double dnnl = rate(shape, Kernel::F32, "MBT_F32_MATMUL", "onednn", seconds);
    std::string chosen = runtime::f32MatmulEngine(shape.m, shape.n, shape.k);
    fmt::print("| {} | {} x {} x {}{}{} | {:.1f} | {:.1f} | {:.2f}x | {} |\n",
               shape.workload, shape.m, shape.n, shape.k,
               shape.ta ? " (a^T)" : "", shape.tb ? " (b^T)" : "", blas, dnnl,
               dnnl / blas, chosen);
  }
  if (bf16)
    printBf16Table(seconds);
  return runtime::takeKernelError().empty() ? 0 : 1;
}
