//===- MgpuWrappers.cpp - MLIR's GPU runtime interface over the driver API ===//
//
// LLVM 19 translates every gpu.launch_func of an artifact into: load the
// kernel's module from its embedded fatbin, get the function, create a
// stream, launch, synchronize, destroy the stream, unload the module. Done
// literally that would load a module per launch; here a module is loaded
// once per fatbin and kept (unload is a no-op until the process exits), and
// every "created" stream is the shared one, so launches and cuBLAS calls
// queue in program order. Synchronizing after each launch is skipped too:
// the host code of an mbt artifact never reads device memory (it computes
// sizes and launches), so the runtime waits once, when it reads the
// step's outputs, and the GPU runs the launches back to back. Debian ships
// no libmlir_cuda_runtime; this is mbt's, with the signatures of MLIR's
// CudaRuntimeWrappers.cpp.
//
//===----------------------------------------------------------------------===//
#include "mbt/runtime/cuda/CudaKernels.h"

#include "mbt/runtime/Error.h"
#include "mbt/runtime/Kernels.h"
#include "mbt/runtime/cuda/CudaContext.h"

#include <fmt/format.h>

#include <map>
#include <mutex>

using namespace mbt::runtime;

namespace {
std::mutex moduleMutex;
/// Loaded modules by the address of their fatbin (a constant of the
/// artifact, stable while it is loaded).
std::map<const void *, CUmodule> &loadedModules() {
  static std::map<const void *, CUmodule> modules;
  return modules;
}

/// Runs `body`, recording a RuntimeError instead of letting it reach the
/// compiled caller.
template <typename Body> void guarded(Body body) {
  try {
    body();
  } catch (const RuntimeError &error) {
    recordKernelError(error.what());
  }
}
} // namespace

extern "C" CUmodule mgpuModuleLoad(void *data, size_t) {
  CUmodule module = nullptr;
  guarded([&] {
    cuda::sharedStream(); // the context
    std::lock_guard<std::mutex> lock(moduleMutex);
    auto &modules = loadedModules();
    auto found = modules.find(data);
    if (found != modules.end()) {
      module = found->second;
      return;
    }
    cuda::check(cuModuleLoadData(&module, data), "cuModuleLoadData");
    modules.emplace(data, module);
  });
  return module;
}

extern "C" void mgpuModuleUnload(CUmodule) {
  // Kept for the next launch of the same kernel (see the file comment).
}

extern "C" CUfunction mgpuModuleGetFunction(CUmodule module, const char *name) {
  CUfunction function = nullptr;
  guarded([&] {
    if (!module)
      throw RuntimeError(std::string("no module for kernel ") + name);
    cuda::check(cuModuleGetFunction(&function, module, name),
                "cuModuleGetFunction");
  });
  return function;
}

extern "C" void mgpuLaunchKernel(CUfunction function, intptr_t gridX,
                                 intptr_t gridY, intptr_t gridZ,
                                 intptr_t blockX, intptr_t blockY,
                                 intptr_t blockZ, int32_t sharedMemory,
                                 CUstream stream, void **params, void **extra,
                                 size_t) {
  guarded([&] {
    if (!function)
      throw RuntimeError("launch of a kernel that failed to load");
    // An empty grid (a batch of 0 samples) launches nothing.
    if (gridX <= 0 || gridY <= 0 || gridZ <= 0)
      return;
    // The compiler puts the long dimension on x (MapLoopsToGpu.cpp); a
    // model too large for y or z is named here, not as a bare
    // CUDA_ERROR_INVALID_VALUE.
    constexpr intptr_t kMaxGridX = 2147483647, kMaxGridYZ = 65535;
    if (gridX > kMaxGridX || gridY > kMaxGridYZ || gridZ > kMaxGridYZ)
      throw RuntimeError(fmt::format(
          "a kernel's grid of {} x {} x {} blocks exceeds the device's limits "
          "(x < 2^31, y and z <= 65535): the model or batch is too large for "
          "the CUDA target",
          gridX, gridY, gridZ));
    cuda::check(cuLaunchKernel(function, gridX, gridY, gridZ, blockX, blockY,
                               blockZ, sharedMemory, stream, params, extra),
                "cuLaunchKernel");
  });
}

extern "C" CUstream mgpuStreamCreate() {
  CUstream stream = nullptr;
  guarded([&] { stream = cuda::sharedStream(); });
  return stream;
}

extern "C" void mgpuStreamDestroy(CUstream) {}

extern "C" void mgpuStreamSynchronize(CUstream) {
  // Deferred to the runtime's next read of device memory (file comment).
}
