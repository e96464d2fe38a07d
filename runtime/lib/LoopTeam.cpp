//===- LoopTeam.cpp - the kernels' threads: the compiled loops' team ------===//
//
// libomp's entry points are those the compiled loops call (the LLVM OpenMP
// ABI: __kmpc_fork_call runs a microtask on a team), looked up in the
// libomp the process has loaded, so that the runtime neither links libomp
// nor binds the omp_* names, which libgomp (oneDNN's OpenMP) defines too.
//
//===----------------------------------------------------------------------===//
#include "mbt/runtime/LoopTeam.h"

#include <atomic>
#include <dlfcn.h>
#include <mutex>

namespace mbt {
namespace runtime {

namespace {

/// libomp's source location record (kmp.h's ident_t); KMP_IDENT_KMPC.
struct Ident {
  int32_t reserved1 = 0, flags = 0x02, reserved2 = 0, reserved3 = 0;
  const char *source = ";libmbt_runtime;batched kernels;0;0;;";
};
Ident ident;

using Microtask = void (*)(int32_t *, int32_t *, ...);

struct LibOmp {
  void (*forkCall)(Ident *, int32_t, Microtask, ...);
  int32_t (*globalThreadNum)(Ident *);
  void (*pushNumThreads)(Ident *, int32_t, int32_t);
  int (*threadNum)();
  int (*numThreads)();
  int (*inParallel)();
};

std::atomic<const LibOmp *> found{nullptr};

template <typename F> bool lookUp(void *library, const char *name, F &to) {
  to = reinterpret_cast<F>(dlsym(library, name));
  return to != nullptr;
}

/// The microtask: the chunk of the calling thread's index in its team.
void runChunk(int32_t *, int32_t *, void *bodyArg, void *nArg) {
  const LibOmp &omp = *found.load(std::memory_order_acquire);
  const auto &body =
      *static_cast<const std::function<void(int64_t, int64_t)> *>(bodyArg);
  int64_t n = *static_cast<int64_t *>(nArg);
  int64_t parts = omp.numThreads(), t = omp.threadNum();
  int64_t begin = n * t / parts, end = n * (t + 1) / parts;
  if (begin < end)
    body(begin, end);
}

} // namespace

void findLoopTeam() {
  // Artifacts may be loaded from several threads at once.
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  if (found.load(std::memory_order_acquire))
    return;
  void *library = dlopen("libomp.so.5", RTLD_LAZY | RTLD_NOLOAD);
  if (!library)
    return;
  static LibOmp omp;
  if (lookUp(library, "__kmpc_fork_call", omp.forkCall) &&
      lookUp(library, "__kmpc_global_thread_num", omp.globalThreadNum) &&
      lookUp(library, "__kmpc_push_num_threads", omp.pushNumThreads) &&
      lookUp(library, "omp_get_thread_num", omp.threadNum) &&
      lookUp(library, "omp_get_num_threads", omp.numThreads) &&
      lookUp(library, "omp_in_parallel", omp.inParallel))
    // The handle stays open: the kernels call into libomp from now on.
    found.store(&omp, std::memory_order_release);
  else
    dlclose(library);
}

bool haveLoopTeam() { return found.load(std::memory_order_acquire) != nullptr; }

void forkOnLoopTeam(int64_t n, int threads,
                    const std::function<void(int64_t, int64_t)> &body) {
  const LibOmp &omp = *found.load(std::memory_order_acquire);
  if (omp.inParallel()) {
    body(0, n);
    return;
  }
  omp.pushNumThreads(&ident, omp.globalThreadNum(&ident), threads);
  omp.forkCall(&ident, 2, reinterpret_cast<Microtask>(runChunk),
               const_cast<void *>(static_cast<const void *>(&body)), &n);
}

} // namespace runtime
} // namespace mbt
