//===- CudaContext.h - The one GPU the CUDA runtime uses --------*- C++ -*-===//
//
// The CUDA side of the runtime (libmbt_runtime_cuda.so) works on one device
// (deviceOrdinal(): 0, or under torchrun the rank's LOCAL_RANK, as
// torch.cuda.set_device(local_rank) in a PyTorch job) through the CUDA
// driver API, in its primary context, on one stream that
// the artifact's kernel launches (the mgpu* functions, MgpuWrappers.cpp)
// and the cuBLAS matmuls (CudaKernels.cpp) share, so they run in program
// order. Errors become RuntimeError with the driver's message.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_CUDA_CUDACONTEXT_H
#define MBT_RUNTIME_CUDA_CUDACONTEXT_H

#include <cuda.h>

#include <cstddef>
#include <string>

namespace mbt {
namespace runtime {
namespace cuda {

/// Throws RuntimeError("<what>: <driver message>") unless `result` is
/// CUDA_SUCCESS.
void check(CUresult result, const char *what);

/// Whether a CUDA device can be used here (driver present, one device or
/// more); never throws.
bool deviceAvailable();

/// The device this process uses: LOCAL_RANK in a launch of several ranks
/// (WORLD_SIZE > 1), else 0. Throws RuntimeError if the host has no such
/// device.
int deviceOrdinal();

/// Makes the primary context of deviceOrdinal() current on this thread,
/// creating it on first use; returns the stream every launch and matmul uses.
CUstream sharedStream();

/// Waits for everything queued on the shared stream.
void synchronize();

/// Copies `bytes` bytes host to device, or device to host, on the shared
/// stream (after everything queued before), and waits for the copy.
void copyToDevice(void *device, const void *host, size_t bytes);
void copyToHost(void *host, const void *device, size_t bytes);

/// Device memory of `bytes` bytes, freed on destruction.
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer &&other) noexcept;
  DeviceBuffer &operator=(DeviceBuffer &&other) noexcept;
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;

  void *data() const { return reinterpret_cast<void *>(pointer); }
  size_t size() const { return bytes; }
  /// Copies `count` bytes from host memory to offset 0, or back.
  void upload(const void *host, size_t count);
  void download(void *host, size_t count) const;

private:
  CUdeviceptr pointer = 0;
  size_t bytes = 0;
};

} // namespace cuda
} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_CUDA_CUDACONTEXT_H
