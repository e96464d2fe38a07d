//===- TorchStateDict.h - Write a model's parameters as a .pt file -*- C++ -*-//
//
// `torch.save(module.state_dict(), path)`'s file format, written without
// LibTorch: a ZIP archive (entries stored, not compressed) holding
// `archive/data.pkl`, a pickle (protocol 2) of an OrderedDict from
// parameter name to tensor, each tensor a `torch._utils._rebuild_tensor_v2`
// call on a storage the pickle names by a persistent id, and each storage's
// bytes as `archive/data/<key>` (64-byte aligned, as torch writes them so
// they can be mapped), plus `archive/version` and `archive/byteorder`.
// `torch.load(path)` returns the OrderedDict; `module.load_state_dict` of
// a module whose parameters have the same names and shapes takes it.
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

/// The bytes of a .pt file holding `tensors` as an OrderedDict, in order.
std::string torchStateDict(const std::vector<NamedTensor> &tensors);

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_TORCHSTATEDICT_H
