//===- TorchStateDict.cpp - .pt files through LibTorch, loaded on demand --===//
#include "mbt/runtime/TorchStateDict.h"

#include "mbt/runtime/Error.h"
#include "mbt/runtime/Plugin.h"

#include "torch/TorchSaveAbi.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <memory>
#include <mutex>

namespace mbt {
namespace runtime {

namespace {

constexpr const char *kTorchLibrary = "libmbt_runtime_torch.so";

/// The plugin's two functions, once loaded (null where it is not).
struct TorchSave {
  mbt_torch_state_dict_bytes_fn bytes = nullptr;
  mbt_torch_free_bytes_fn free = nullptr;
  std::string why;
};

const TorchSave &torchSave() {
  static TorchSave save;
  static std::once_flag once;
  std::call_once(once, [] {
    void *handle = openPlugin(kTorchLibrary, RTLD_LOCAL, save.why);
    if (!handle)
      return;
    save.bytes = reinterpret_cast<mbt_torch_state_dict_bytes_fn>(
        dlsym(handle, "mbt_torch_state_dict_bytes"));
    save.free = reinterpret_cast<mbt_torch_free_bytes_fn>(
        dlsym(handle, "mbt_torch_free_bytes"));
    if (!save.bytes || !save.free)
      save.why = std::string(kTorchLibrary) + " lacks its functions";
  });
  return save;
}

} // namespace

bool canWriteTorchFiles(std::string &why) {
  const TorchSave &save = torchSave();
  why = save.why;
  return save.bytes && save.free;
}

std::string torchStateDict(const std::vector<NamedTensor> &tensors) {
  std::string why;
  if (!canWriteTorchFiles(why))
    throw RuntimeError(fmt::format(
        "cannot write a .pt file: {} did not load ({}); mbt was built "
        "without LibTorch (MBT_WITH_TORCH=OFF) or it is not beside "
        "libmbt_runtime.so",
        kTorchLibrary, why));
  std::vector<mbt_torch_tensor> table;
  for (const NamedTensor &t : tensors) {
    if (t.dtype != DType::F32 && t.dtype != DType::F64)
      throw RuntimeError(fmt::format(
          "cannot write tensor '{}' to a .pt file: it is neither f32 nor f64",
          t.name));
    table.push_back({t.name.c_str(), t.shape.data(),
                     static_cast<int64_t>(t.shape.size()),
                     t.dtype == DType::F64 ? 1 : 0, t.data});
  }
  const TorchSave &save = torchSave();
  char *bytes = nullptr;
  size_t size = 0;
  char error[512] = {0};
  if (save.bytes(table.data(), table.size(), &bytes, &size, error,
                 sizeof error) != 0)
    throw RuntimeError(std::string("LibTorch cannot write the .pt file: ") +
                       error);
  std::unique_ptr<char, mbt_torch_free_bytes_fn> owned(bytes, save.free);
  return std::string(bytes, size);
}

} // namespace runtime
} // namespace mbt
