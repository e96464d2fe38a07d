//===- TorchSave.cpp - A state dict's .pt bytes through LibTorch ----------===//
//
// torch::pickle_save is LibTorch's writer of what torch.save writes: a zip
// archive (archive/data.pkl, archive/data/<key>, archive/version) whose
// pickle torch.load reads in Python. It pickles a c10::Dict, which keeps
// the order of insertion; torch.load gives a dict, which
// module.load_state_dict takes as it takes an OrderedDict. The tensors wrap
// the caller's memory (from_blob, no copy): they only live for the call.
//
//===----------------------------------------------------------------------===//

#include "TorchSaveAbi.h"

#include <torch/csrc/jit/serialization/pickle.h>
#include <torch/torch.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <new>

namespace {

c10::Dict<std::string, at::Tensor> dictOf(const mbt_torch_tensor *tensors,
                                          size_t count) {
  c10::Dict<std::string, at::Tensor> dict;
  for (size_t i = 0; i < count; ++i) {
    const mbt_torch_tensor &t = tensors[i];
    auto options = torch::TensorOptions().dtype(t.dtype == 1 ? torch::kFloat64
                                                             : torch::kFloat32);
    std::vector<int64_t> shape(t.shape, t.shape + t.rank);
    dict.insert(t.name,
                torch::from_blob(const_cast<void *>(t.data), shape, options));
  }
  return dict;
}

} // namespace

extern "C" int mbt_torch_state_dict_bytes(const mbt_torch_tensor *tensors,
                                          size_t count, char **bytes,
                                          size_t *size, char *error,
                                          size_t errorSize) {
  try {
    std::vector<char> pickled =
        torch::pickle_save(c10::IValue(dictOf(tensors, count)));
    *bytes = new char[pickled.size()];
    std::memcpy(*bytes, pickled.data(), pickled.size());
    *size = pickled.size();
    return 0;
  } catch (const std::exception &e) {
    // c10::Error's what() carries a backtrace after its first line.
    std::snprintf(error, errorSize, "%s", e.what());
    if (char *newline = std::strchr(error, '\n'))
      *newline = '\0';
    return 1;
  }
}

extern "C" void mbt_torch_free_bytes(char *bytes) { delete[] bytes; }
