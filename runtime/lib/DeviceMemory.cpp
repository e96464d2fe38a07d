//===- DeviceMemory.cpp - Load the CUDA runtime on demand -----------------===//
#include "mbt/runtime/DeviceMemory.h"

#include "mbt/runtime/Error.h"
#include "mbt/runtime/Plugin.h"

#include <dlfcn.h>

#include <mutex>

namespace mbt {
namespace runtime {

namespace {
/// The factory libmbt_runtime_cuda.so exports (CudaDeviceMemory.cpp).
using Factory = DeviceMemory *(*)(char *error, size_t errorSize);
constexpr const char *kCudaLibrary = "libmbt_runtime_cuda.so";
constexpr const char *kFactorySymbol = "mbt_cuda_open_device_memory";

void *cudaHandle = nullptr;
std::string cudaLoadError;
std::once_flag cudaOnce;
} // namespace

bool loadCudaRuntime(std::string &why) {
  std::call_once(cudaOnce, [] {
    cudaHandle = openPlugin(kCudaLibrary, RTLD_GLOBAL, cudaLoadError);
  });
  why = cudaLoadError;
  return cudaHandle != nullptr;
}

std::unique_ptr<DeviceMemory> openCudaDeviceMemory() {
  std::string why;
  if (!loadCudaRuntime(why))
    throw RuntimeError("cannot load the CUDA runtime (" +
                       std::string(kCudaLibrary) + "): " + why);
  auto factory = reinterpret_cast<Factory>(dlsym(cudaHandle, kFactorySymbol));
  if (!factory)
    throw RuntimeError(std::string(kCudaLibrary) + " has no " + kFactorySymbol);
  char error[512] = {0};
  DeviceMemory *memory = factory(error, sizeof(error));
  if (!memory)
    throw RuntimeError(std::string("cannot use the GPU: ") + error);
  return std::unique_ptr<DeviceMemory>(memory);
}

} // namespace runtime
} // namespace mbt
