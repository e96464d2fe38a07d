//===- DeviceMemory.cpp - Load the CUDA runtime on demand -----------------===//
#include "mbt/runtime/DeviceMemory.h"

#include "mbt/runtime/Error.h"

#include <dlfcn.h>

#include <mutex>

namespace mbt {
namespace runtime {

namespace {
/// The factory libmbt_runtime_cuda.so exports (CudaDeviceMemory.cpp).
using Factory = DeviceMemory *(*)(char *error, size_t errorSize);
constexpr const char *kCudaLibrary = "libmbt_runtime_cuda.so";
constexpr const char *kFactorySymbol = "mbt_cuda_open_device_memory";

/// libmbt_runtime_cuda.so beside this library, else the bare name.
std::string cudaLibraryPath() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void *>(&loadCudaRuntime), &info) &&
      info.dli_fname) {
    std::string self = info.dli_fname;
    size_t slash = self.rfind('/');
    if (slash != std::string::npos)
      return self.substr(0, slash + 1) + kCudaLibrary;
  }
  return kCudaLibrary;
}

void *cudaHandle = nullptr;
std::string cudaLoadError;
std::once_flag cudaOnce;
} // namespace

bool loadCudaRuntime(std::string &why) {
  std::call_once(cudaOnce, [] {
    for (const std::string &path :
         {cudaLibraryPath(), std::string(kCudaLibrary)}) {
      cudaHandle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
      if (cudaHandle)
        return;
      const char *error = dlerror();
      if (cudaLoadError.empty())
        cudaLoadError = error ? error : "unknown dynamic loader error";
    }
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
