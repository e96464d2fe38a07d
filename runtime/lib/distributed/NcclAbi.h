//===- NcclAbi.h - The C interface of libmbt_runtime_nccl -------*- C++ -*-===//
//
// libmbt_runtime_nccl.so holds the runtime's one use of NCCL: the sums of a
// run whose data is across ranks, on the GPUs' own memory (the gradients
// never cross to the host). The runtime loads it with dlopen when such a
// run trains a --target=cuda artifact (DeviceCollectives.cpp); the ranks
// agree on NCCL's unique id through the c10d store's group first, as
// PyTorch's ProcessGroupNCCL does.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_LIB_DISTRIBUTED_NCCLABI_H
#define MBT_RUNTIME_LIB_DISTRIBUTED_NCCLABI_H

#include <stddef.h>
#include <stdint.h>

extern "C" {

/// NCCL's unique id (ncclUniqueId), which rank 0 makes and every rank
/// needs to join.
enum { MBT_NCCL_ID_BYTES = 128 };

struct mbt_nccl;

/// Makes a unique id into id[0, MBT_NCCL_ID_BYTES). 0 on success, else 1
/// with a message in error[0, errorSize).
typedef int (*mbt_nccl_unique_id_fn)(char *id, char *error, size_t errorSize);
/// Joins the communicator of `size` ranks as `rank`, on GPU `device`.
/// Null on failure, with a message.
typedef mbt_nccl *(*mbt_nccl_open_fn)(const char *id, int64_t rank,
                                      int64_t size, int32_t device, char *error,
                                      size_t errorSize);
/// data[0, count) (device memory; dtype 0: float32, 1: float64) becomes
/// sum_r scale_r * data_r over the ranks, where scale_r is each rank's
/// `scale` (NCCL's ncclRedOpCreatePreMulSum); waits until it is done.
typedef int (*mbt_nccl_scaled_sum_fn)(mbt_nccl *comm, void *data, size_t count,
                                      int32_t dtype, double scale, char *error,
                                      size_t errorSize);
/// data[0, count) on every rank becomes rank `root`'s; waits until done.
typedef int (*mbt_nccl_broadcast_fn)(mbt_nccl *comm, void *data, size_t count,
                                     int32_t dtype, int64_t root, char *error,
                                     size_t errorSize);
/// Leaves the communicator (after a failure too: it aborts).
typedef void (*mbt_nccl_close_fn)(mbt_nccl *comm);
}

#endif // MBT_RUNTIME_LIB_DISTRIBUTED_NCCLABI_H
