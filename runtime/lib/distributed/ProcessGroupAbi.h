//===- ProcessGroupAbi.h - The C interface of libmbt_runtime_c10d -*- C++ -*-=//
//
// libmbt_runtime_c10d.so holds the runtime's one use of PyTorch's c10d: the
// rendezvous store (TCPStore) and the process group (ProcessGroupGloo) of a
// run over several processes. The runtime loads it with dlopen when a run
// has more than one rank (RankGroup.cpp), as it loads the .pt writer: a
// one-process run never pays for LibTorch, and the interface is plain C so
// that the plugin may be built against another LibTorch than the
// runtime's host has (pip's, on a GPU host).
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_LIB_DISTRIBUTED_PROCESSGROUPABI_H
#define MBT_RUNTIME_LIB_DISTRIBUTED_PROCESSGROUPABI_H

#include <stddef.h>
#include <stdint.h>

extern "C" {

/// How to join the group: torchrun's environment, read by the runtime.
struct mbt_pg_options {
  int64_t rank, world_size;
  const char *master_addr;
  int64_t master_port;
  /// 1: the launcher's agent already serves the store at
  /// master_addr:master_port (TORCHELASTIC_USE_AGENT_STORE), every rank
  /// is a client; 0: rank 0 serves it.
  int32_t use_agent_store;
  /// The network interface Gloo binds (GLOO_SOCKET_IFNAME), or null: the
  /// one the host name resolves to.
  const char *interface;
  /// How long a collective or the rendezvous waits for the others.
  int64_t timeout_ms;
};

struct mbt_pg;

/// Joins the group. Null on failure, with a message in error[0, size).
typedef mbt_pg *(*mbt_pg_open_fn)(const mbt_pg_options *options, char *error,
                                  size_t errorSize);
/// out[r * size, (r + 1) * size) gets rank r's `size` bytes, the same size
/// on every rank. 0 on success, else 1 with a message.
typedef int (*mbt_pg_all_gather_fn)(mbt_pg *group, const void *bytes,
                                    size_t size, void *out, char *error,
                                    size_t errorSize);
/// data[0, count) becomes the sum over the ranks, elementwise; dtype 0:
/// float32, 1: float64. 0 on success, else 1 with a message.
typedef int (*mbt_pg_all_reduce_sum_fn)(mbt_pg *group, void *data, size_t count,
                                        int32_t dtype, char *error,
                                        size_t errorSize);
/// The store's key/value pairs (under the group's prefix): set, and check
/// which of `count` keys are there (present[i] = 0 or 1), without waiting.
/// 0 on success, else 1 with a message (the store is gone).
typedef int (*mbt_pg_store_set_fn)(mbt_pg *group, const char *key,
                                   const char *value, char *error,
                                   size_t errorSize);
typedef int (*mbt_pg_store_check_fn)(mbt_pg *group, const char *const *keys,
                                     size_t count, int32_t *present,
                                     char *error, size_t errorSize);
/// Leaves the group (after a failure too).
typedef void (*mbt_pg_close_fn)(mbt_pg *group);
}

#endif // MBT_RUNTIME_LIB_DISTRIBUTED_PROCESSGROUPABI_H
