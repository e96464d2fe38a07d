//===- CudaContext.cpp - Device 0, its primary context, one stream --------===//
#include "mbt/runtime/cuda/CudaContext.h"

#include "mbt/runtime/Error.h"

#include <fmt/format.h>

#include <cstdlib>
#include <mutex>
#include <utility>

namespace mbt {
namespace runtime {
namespace cuda {

void check(CUresult result, const char *what) {
  if (result == CUDA_SUCCESS)
    return;
  const char *name = nullptr, *message = nullptr;
  cuGetErrorName(result, &name);
  cuGetErrorString(result, &message);
  throw RuntimeError(std::string(what) + ": " + (name ? name : "CUDA error") +
                     " (" + (message ? message : "no description") + ")");
}

bool deviceAvailable() {
  int count = 0;
  return cuInit(0) == CUDA_SUCCESS &&
         cuDeviceGetCount(&count) == CUDA_SUCCESS && count > 0;
}

int deviceOrdinal() {
  static int ordinal = [] {
    const char *world = std::getenv("WORLD_SIZE");
    const char *local = std::getenv("LOCAL_RANK");
    if (!world || std::atoi(world) <= 1 || !local)
      return 0;
    int wanted = std::atoi(local), count = 0;
    check(cuInit(0), "cuInit");
    check(cuDeviceGetCount(&count), "cuDeviceGetCount");
    if (wanted < 0 || wanted >= count)
      throw RuntimeError("LOCAL_RANK=" + std::string(local) +
                         " names a GPU this host does not have (it has " +
                         std::to_string(count) +
                         "): start at most as many ranks per host as GPUs");
    return wanted;
  }();
  return ordinal;
}

namespace {
struct Device {
  CUcontext context = nullptr;
  CUstream stream = nullptr;
};

Device &device() {
  static Device dev;
  static std::once_flag once;
  std::call_once(once, [] {
    check(cuInit(0), "cuInit");
    CUdevice handle;
    check(cuDeviceGet(&handle, deviceOrdinal()), "cuDeviceGet");
    check(cuDevicePrimaryCtxRetain(&dev.context, handle),
          "cuDevicePrimaryCtxRetain");
    check(cuCtxSetCurrent(dev.context), "cuCtxSetCurrent");
    // Blocking: it also orders against the legacy default stream.
    check(cuStreamCreate(&dev.stream, CU_STREAM_DEFAULT), "cuStreamCreate");
  });
  // Each thread that calls in needs the context current.
  CUcontext current = nullptr;
  cuCtxGetCurrent(&current);
  if (current != dev.context)
    check(cuCtxSetCurrent(dev.context), "cuCtxSetCurrent");
  return dev;
}
} // namespace

CUstream sharedStream() { return device().stream; }

void synchronize() {
  check(cuStreamSynchronize(sharedStream()), "cuStreamSynchronize");
}

void copyToDevice(void *device, const void *host, size_t bytes) {
  if (!bytes)
    return;
  check(cuMemcpyHtoDAsync(reinterpret_cast<CUdeviceptr>(device), host, bytes,
                          sharedStream()),
        "cuMemcpyHtoD");
  synchronize();
}

void copyToHost(void *host, const void *device, size_t bytes) {
  if (!bytes)
    return;
  check(cuMemcpyDtoHAsync(host, reinterpret_cast<CUdeviceptr>(device), bytes,
                          sharedStream()),
        "cuMemcpyDtoH");
  synchronize();
}

DeviceBuffer::DeviceBuffer(size_t size) : bytes(size) {
  sharedStream(); // the context
  if (bytes)
    check(cuMemAlloc(&pointer, bytes), "cuMemAlloc");
}

DeviceBuffer::~DeviceBuffer() {
  if (pointer)
    cuMemFree(pointer);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer &&other) noexcept {
  *this = std::move(other);
}

DeviceBuffer &DeviceBuffer::operator=(DeviceBuffer &&other) noexcept {
  if (this != &other) {
    if (pointer)
      cuMemFree(pointer);
    pointer = std::exchange(other.pointer, 0);
    bytes = std::exchange(other.bytes, 0);
  }
  return *this;
}

void DeviceBuffer::upload(const void *host, size_t count) {
  if (count > bytes)
    throw RuntimeError(fmt::format(
        "upload of {} bytes into a device buffer of {}", count, bytes));
  copyToDevice(data(), host, count);
}

void DeviceBuffer::download(void *host, size_t count) const {
  if (count > bytes)
    throw RuntimeError(fmt::format(
        "download of {} bytes from a device buffer of {}", count, bytes));
  copyToHost(host, data(), count);
}

} // namespace cuda
} // namespace runtime
} // namespace mbt
