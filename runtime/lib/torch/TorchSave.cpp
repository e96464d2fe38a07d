//===- TorchSave.cpp - A state dict's .pt bytes through LibTorch ----------===//
//
// What torch.save writes, through LibTorch's own writers: a zip archive
// (archive/data.pkl, archive/data/<key>, archive/version) whose pickle
// torch.load reads in Python. As torch::pickle_save, but with the
// Pickler's type tags off: pickle_save wraps each dict in
// torch.jit._pickle.restore_type_tag (TorchScript's Dict[str, Tensor]),
// which torch.load(weights_only=True), the default since PyTorch 2.6,
// refuses to call. Without the tag the pickle is a plain dict of tensors,
// in insertion order, as torch.save(module.state_dict()) writes one; the
// module's load_state_dict takes it as it takes an OrderedDict. The
// tensors wrap the caller's memory (from_blob, no copy): they only live
// for the call.
//
//===----------------------------------------------------------------------===//

#include "TorchSaveAbi.h"

#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/export.h>
#include <torch/csrc/jit/serialization/pickler.h>
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

/// `value` pickled without type tags into a torch.save archive.
std::vector<char> savedWithoutTypeTags(const c10::IValue &value) {
  std::vector<char> pickle;
  torch::jit::Pickler pickler(
      [&](const char *bytes, size_t size) {
        pickle.insert(pickle.end(), bytes, bytes + size);
      },
      /*tensor_table=*/nullptr, /*type_renamer=*/nullptr,
      /*memoized_class_types=*/nullptr, /*get_tensor_id=*/nullptr,
      /*tag_aggregates=*/false);
  pickler.protocol();
  pickler.pushIValue(value);
  pickler.stop();
  std::vector<char> archive;
  caffe2::serialize::PyTorchStreamWriter writer(
      [&](const void *bytes, size_t size) {
        const char *from = static_cast<const char *>(bytes);
        archive.insert(archive.end(), from, from + size);
        return size;
      });
  torch::jit::writeArchiveAndTensors("data", pickle.data(), pickle.size(),
                                     pickler.tensorData(), writer);
  writer.writeEndOfFile();
  return archive;
}

} // namespace

extern "C" int mbt_torch_state_dict_bytes(const mbt_torch_tensor *tensors,
                                          size_t count, char **bytes,
                                          size_t *size, char *error,
                                          size_t errorSize) {
  try {
    std::vector<char> pickled =
        savedWithoutTypeTags(c10::IValue(dictOf(tensors, count)));
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
