//===- DeviceMemory.h - Where a CUDA artifact's buffers live ----*- C++ -*-===//
//
// A --target=cuda artifact (manifest "device": "cuda") takes device
// pointers in every descriptor. The trainer keeps its host buffers (the
// data it loads, the outputs it reads) and mirrors them on the device
// through this interface. The CUDA implementation lives in
// libmbt_runtime_cuda.so, which libmbt_runtime.so does not link (so that
// the CPU runtime runs where no CUDA driver is): openDeviceMemory() loads
// it on demand, globally, which also gives CUDA artifacts the mgpu*
// functions they import.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_DEVICEMEMORY_H
#define MBT_RUNTIME_DEVICEMEMORY_H

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

namespace mbt {
namespace runtime {

class DeviceMemory {
public:
  virtual ~DeviceMemory() = default;
  /// `bytes` of device memory, owned by this object until it is destroyed.
  virtual void *allocate(size_t bytes) = 0;
  /// Host to device and device to host; both wait until the copy (and
  /// everything queued before it) is done.
  virtual void upload(void *device, const void *host, size_t bytes) = 0;
  virtual void download(void *host, const void *device, size_t bytes) = 0;
  /// The first failure recorded by the artifact's kernels and launches
  /// since the last call (empty if none).
  virtual std::string takeError() = 0;
  /// What it runs on, for messages ("NVIDIA H200").
  virtual std::string name() const = 0;

  /// Graphs (CUDA graphs): records the device work that `issue` submits,
  /// without running it, as a graph that launchGraph() replays; the work
  /// must then be replayed to happen. Returns null, with `why`, where the
  /// device cannot capture it (the work did not run either).
  virtual void *captureGraph(const std::function<void()> & /*issue*/,
                             std::string &why) {
    why = "this device does not capture graphs";
    return nullptr;
  }
  /// Queues a captured graph's work, after everything queued before.
  virtual void launchGraph(void * /*graph*/) {}
  /// Frees a captured graph.
  virtual void destroyGraph(void * /*graph*/) {}
};

/// Loads libmbt_runtime_cuda.so (next to libmbt_runtime.so, else by the
/// loader's search) and returns device 0's memory. Throws RuntimeError
/// naming what is missing: the library, the CUDA driver, a device.
std::unique_ptr<DeviceMemory> openCudaDeviceMemory();

/// Makes the CUDA runtime's symbols (mgpu*, the cuBLAS kernel) visible to
/// artifacts loaded afterwards; false if the library cannot be loaded
/// (`why` says why).
bool loadCudaRuntime(std::string &why);

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_DEVICEMEMORY_H
