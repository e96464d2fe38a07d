//===- TorchCheckpoint.h - Read a state dict from a .pt file ----*- C++ -*-===//
//
// `torch.save(module.state_dict(), path)` writes a zip archive (stored
// members): PREFIX/data.pkl, a pickle of an OrderedDict from name to
// tensor, each tensor a `torch._utils._rebuild_tensor_v2` call on a storage
// that the pickle names by a persistent id ('storage', torch.FloatStorage,
// KEY, LOCATION, NUMEL), and each storage's bytes as PREFIX/data/KEY. mbt's
// own models/model-<i>.pt are the same format (TorchStateDict.h).
//
// LibTorch cannot read these files in the version Debian ships (1.13):
// its unpickler turns `collections.OrderedDict` into None (it assumes the
// only OrderedDicts are a tensor's empty backward hooks) and does not know
// the SETITEM opcode, so torch::pickle_load fails on every state dict
// (PyTorch 2.x fixed the first). So mbt interprets the pickle itself, and
// only as far as a state dict needs: dicts, tuples, strings, numbers,
// OrderedDict, _rebuild_tensor_v2, _rebuild_parameter and the type tag
// LibTorch's own pickler puts on a dict. Any other global
// is refused by name, so, as torch.load(weights_only=True), reading a file
// never runs or constructs anything it names.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_DATA_TORCHCHECKPOINT_H
#define MBT_RUNTIME_DATA_TORCHCHECKPOINT_H

#include "mbt/runtime/data/Arrays.h"

#include <string>
#include <utility>
#include <vector>

namespace mbt {
namespace runtime {

/// A state dict: its tensors by name, in the file's order.
using StateDict = std::vector<std::pair<std::string, ArrayView>>;

/// True when the file starts as torch.save's files do: a zip archive
/// ("PK\3\4") or a legacy file (the pickle of torch's magic number), i.e.
/// is a .pt file rather than a .safetensors one (whose first 8 bytes are a
/// little-endian length).
bool isTorchFile(const std::string &path);

/// The tensors of a .pt file whose pickle is a dict (an OrderedDict or a
/// plain one) from names to tensors. A dense tensor points into the file's
/// mapping; one with other strides (a saved view) is copied out in C order.
/// Throws RuntimeError naming the file (and the pickle's byte offset, the
/// tensor or the zip member) for a file that is not a zip archive, a
/// legacy (pre-1.6) torch.save file, a corrupt or truncated pickle, a
/// global other than those above, a top-level object that is not a dict of
/// tensors (e.g. a checkpoint {"model": ..., "optimizer": ...}), a storage
/// type mbt does not convert (complex, quantized), a missing storage
/// member, or a tensor that does not lie within its storage.
StateDict readTorchStateDict(const std::string &path);

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_DATA_TORCHCHECKPOINT_H
