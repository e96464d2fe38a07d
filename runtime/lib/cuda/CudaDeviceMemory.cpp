//===- CudaDeviceMemory.cpp - DeviceMemory over the CUDA driver API -------===//
//
// What the trainer uses to mirror its buffers on device 0 (DeviceMemory.h).
// Exported as a C factory so that libmbt_runtime.so can load this library
// on demand instead of linking it.
//
//===----------------------------------------------------------------------===//
#include "mbt/runtime/DeviceMemory.h"

#include "mbt/runtime/Error.h"
#include "mbt/runtime/Kernels.h"
#include "mbt/runtime/cuda/CudaContext.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

namespace mbt {
namespace runtime {
namespace {

class CudaDeviceMemory : public DeviceMemory {
public:
  void *allocate(size_t bytes) override {
    buffers.emplace_back(std::max<size_t>(bytes, 1));
    return buffers.back().data();
  }
  void upload(void *device, const void *host, size_t bytes) override {
    cuda::copyToDevice(device, host, bytes);
  }
  void download(void *host, const void *device, size_t bytes) override {
    cuda::copyToHost(host, device, bytes);
  }
  std::string takeError() override {
    // Launch and kernel failures surface at the next synchronization.
    try {
      cuda::synchronize();
    } catch (const RuntimeError &error) {
      recordKernelError(error.what());
    }
    return takeKernelError();
  }
  void *captureGraph(const std::function<void()> &issue,
                     std::string &why) override {
    CUstream stream = cuda::sharedStream();
    // Thread-local: other threads' CUDA calls are not part of the capture
    // and do not break it.
    CUresult began =
        cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
    if (began != CUDA_SUCCESS)
      return failed(began, "cuStreamBeginCapture", why);
    issue();
    CUgraph graph = nullptr;
    CUresult ended = cuStreamEndCapture(stream, &graph);
    // A launch or cuBLAS call that failed while capturing recorded why.
    std::string issued = takeKernelError();
    if (ended != CUDA_SUCCESS || !graph || !issued.empty()) {
      if (graph)
        cuGraphDestroy(graph);
      if (!issued.empty()) {
        why = issued;
        return nullptr;
      }
      return failed(ended, "cuStreamEndCapture", why);
    }
    CUgraphExec exec = nullptr;
    CUresult made = cuGraphInstantiate(&exec, graph, 0);
    cuGraphDestroy(graph);
    if (made != CUDA_SUCCESS)
      return failed(made, "cuGraphInstantiate", why);
    return exec;
  }
  void launchGraph(void *graph) override {
    cuda::check(
        cuGraphLaunch(static_cast<CUgraphExec>(graph), cuda::sharedStream()),
        "cuGraphLaunch");
  }
  void destroyGraph(void *graph) override {
    cuGraphExecDestroy(static_cast<CUgraphExec>(graph));
  }
  std::string name() const override {
    CUdevice device;
    char text[256] = {0};
    int ordinal = cuda::deviceOrdinal();
    if (cuDeviceGet(&device, ordinal) != CUDA_SUCCESS ||
        cuDeviceGetName(text, sizeof(text), device) != CUDA_SUCCESS)
      return "CUDA device " + std::to_string(ordinal);
    return text;
  }

private:
  static void *failed(CUresult result, const char *what, std::string &why) {
    try {
      cuda::check(result, what);
    } catch (const RuntimeError &error) {
      why = error.what();
    }
    return nullptr;
  }

  std::vector<cuda::DeviceBuffer> buffers;
};

} // namespace
} // namespace runtime
} // namespace mbt

extern "C" __attribute__((visibility("default"))) mbt::runtime::DeviceMemory *
mbt_cuda_open_device_memory(char *error, size_t errorSize) {
  try {
    if (!mbt::runtime::cuda::deviceAvailable())
      throw mbt::runtime::RuntimeError("no CUDA device (or no driver)");
    mbt::runtime::cuda::sharedStream();
    return new mbt::runtime::CudaDeviceMemory();
  } catch (const mbt::runtime::RuntimeError &e) {
    std::snprintf(error, errorSize, "%s", e.what());
    return nullptr;
  }
}
