//===- TorchStateDict.h - Write a model's parameters as a .pt file -*- C++ -*-//
//
// `torch.save(module.state_dict(), path)`'s file format, written by
// LibTorch's pickler without TorchScript's type tags (lib/torch/TorchSave.cpp)
// in libmbt_runtime_torch.so, which the runtime loads the first time it
// writes one (lib/torch/TorchSaveAbi.h says why). `torch.load(path)`, with
// weights_only too, returns a dict from parameter name to tensor, in
// the given order; `module.load_state_dict` of a module whose parameters
// have the same names and shapes takes it. Reading .pt files is
// data/TorchCheckpoint.h's.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_TORCHSTATEDICT_H
#define MBT_RUNTIME_TORCHSTATEDICT_H

#include "mbt/common/Abi.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mbt {
namespace runtime {

/// One entry of a state dict: a dense row-major tensor of `dtype`.
struct NamedTensor {
  std::string name;
  std::vector<int64_t> shape;
  DType dtype = DType::F32;
  /// shape's product elements of dtype, little-endian.
  const void *data = nullptr;
};

/// Whether .pt files can be written here: false (and `why`) where
/// libmbt_runtime_torch.so does not load (a runtime built without
/// LibTorch).
bool canWriteTorchFiles(std::string &why);

/// The bytes of a .pt file holding `tensors` (f32 or f64) as a dict, in
/// order. Throws RuntimeError where canWriteTorchFiles is false.
std::string torchStateDict(const std::vector<NamedTensor> &tensors);

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_TORCHSTATEDICT_H
