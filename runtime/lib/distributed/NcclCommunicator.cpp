//===- NcclCommunicator.cpp - The NCCL sums of data across ranks ----------===//
//
// libmbt_runtime_nccl.so (NcclAbi.h): an NCCL communicator over the ranks'
// GPUs, on the legacy default stream, which orders it after the
// artifact's kernels (they run on a blocking stream of the same primary
// context, CudaContext.cpp) and before what the runtime queues next. Every
// call waits for its collective, so that a rank that is gone surfaces as
// an error of this call (NCCL's own timeout, or the peer's closed
// connection) rather than of a later one.
//
//===----------------------------------------------------------------------===//

#include "NcclAbi.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdio>
#include <cstring>
#include <new>

struct mbt_nccl {
  ncclComm_t comm = nullptr;
};

namespace {
void say(char *error, size_t size, const char *what, const char *why) {
  if (size)
    std::snprintf(error, size, "%s: %s", what, why);
}

/// 0 if `result` is ncclSuccess, else 1 with NCCL's message.
int nccl(ncclResult_t result, ncclComm_t comm, const char *what, char *error,
         size_t size) {
  if (result == ncclSuccess)
    return 0;
  const char *last = comm ? ncclGetLastError(comm) : nullptr;
  say(error, size, what, last && *last ? last : ncclGetErrorString(result));
  return 1;
}

int cuda(cudaError_t result, const char *what, char *error, size_t size) {
  if (result == cudaSuccess)
    return 0;
  say(error, size, what, cudaGetErrorString(result));
  return 1;
}

ncclDataType_t typeOf(int32_t dtype) {
  return dtype == 1 ? ncclFloat64 : ncclFloat32;
}
} // namespace

extern "C" {

int mbt_nccl_unique_id(char *id, char *error, size_t errorSize) {
  static_assert(sizeof(ncclUniqueId) == MBT_NCCL_ID_BYTES,
                "NCCL's unique id is not 128 bytes");
  ncclUniqueId unique;
  if (nccl(ncclGetUniqueId(&unique), nullptr, "ncclGetUniqueId", error,
           errorSize))
    return 1;
  std::memcpy(id, &unique, sizeof unique);
  return 0;
}

mbt_nccl *mbt_nccl_open(const char *id, int64_t rank, int64_t size,
                        int32_t device, char *error, size_t errorSize) {
  if (cuda(cudaSetDevice(device), "cudaSetDevice", error, errorSize))
    return nullptr;
  ncclUniqueId unique;
  std::memcpy(&unique, id, sizeof unique);
  auto *group = new (std::nothrow) mbt_nccl;
  if (!group) {
    say(error, errorSize, "mbt_nccl_open", "out of memory");
    return nullptr;
  }
  if (nccl(ncclCommInitRank(&group->comm, static_cast<int>(size), unique,
                            static_cast<int>(rank)),
           nullptr, "ncclCommInitRank", error, errorSize)) {
    delete group;
    return nullptr;
  }
  return group;
}

int mbt_nccl_scaled_sum(mbt_nccl *group, void *data, size_t count,
                        int32_t dtype, double scale, char *error,
                        size_t errorSize) {
  ncclRedOp_t op;
  float scale32 = static_cast<float>(scale);
  void *scalar =
      dtype == 1 ? static_cast<void *>(&scale) : static_cast<void *>(&scale32);
  if (nccl(ncclRedOpCreatePreMulSum(&op, scalar, typeOf(dtype),
                                    ncclScalarHostImmediate, group->comm),
           group->comm, "ncclRedOpCreatePreMulSum", error, errorSize))
    return 1;
  int failed = nccl(ncclAllReduce(data, data, count, typeOf(dtype), op,
                                  group->comm, /*stream=*/nullptr),
                    group->comm, "ncclAllReduce", error, errorSize);
  ncclRedOpDestroy(op, group->comm);
  if (failed)
    return 1;
  return cuda(cudaStreamSynchronize(nullptr), "ncclAllReduce", error,
              errorSize);
}

int mbt_nccl_broadcast(mbt_nccl *group, void *data, size_t count, int32_t dtype,
                       int64_t root, char *error, size_t errorSize) {
  if (nccl(ncclBroadcast(data, data, count, typeOf(dtype),
                         static_cast<int>(root), group->comm,
                         /*stream=*/nullptr),
           group->comm, "ncclBroadcast", error, errorSize))
    return 1;
  return cuda(cudaStreamSynchronize(nullptr), "ncclBroadcast", error,
              errorSize);
}

void mbt_nccl_close(mbt_nccl *group) {
  if (!group)
    return;
  // After a failure the communicator may hang in a collective: abort it.
  ncclCommAbort(group->comm);
  delete group;
}
}
