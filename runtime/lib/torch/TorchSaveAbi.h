//===- TorchSaveAbi.h - The C interface of libmbt_runtime_torch -*- C++ -*-===//
//
// libmbt_runtime_torch.so holds the one piece of the runtime that uses
// LibTorch: the .pt writer. The runtime loads it with dlopen the first
// time it writes a .pt file (TorchStateDict.cpp), because LibTorch's static
// initializers (its operator registry) add about 0.4 s to the start of
// every process that links it, and most runs of mbtc and mbt-run never
// write one (compiling, checking, --bench-steps, --check-data). Its
// interface is plain C so that the plugin may be built against another
// LibTorch than the one the runtime's host has (pip's, on a CUDA host).
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_LIB_TORCH_TORCHSAVEABI_H
#define MBT_RUNTIME_LIB_TORCH_TORCHSAVEABI_H

#include <stddef.h>
#include <stdint.h>

extern "C" {

/// One tensor of a state dict: dense, row-major, little-endian.
struct mbt_torch_tensor {
  const char *name;
  const int64_t *shape;
  int64_t rank;
  /// 0: float32, 1: float64.
  int32_t dtype;
  const void *data;
};

/// The bytes torch.save writes for an OrderedDict of `count` tensors (in
/// that order), through torch::pickle_save: *bytes (release with
/// mbt_torch_free_bytes) and *size. 0 on success; else 1, with a message in
/// error[0, errorSize).
typedef int (*mbt_torch_state_dict_bytes_fn)(const mbt_torch_tensor *tensors,
                                             size_t count, char **bytes,
                                             size_t *size, char *error,
                                             size_t errorSize);
typedef void (*mbt_torch_free_bytes_fn)(char *bytes);
}

#endif // MBT_RUNTIME_LIB_TORCH_TORCHSAVEABI_H
