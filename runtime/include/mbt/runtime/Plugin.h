//===- Plugin.h - Libraries of the runtime loaded on demand -----*- C++ -*-===//
//
// Parts of the runtime that need a heavy library live in a shared library
// of their own, loaded the first time they are needed: the CUDA runtime
// (libmbt_runtime_cuda.so) and the .pt writer (libmbt_runtime_torch.so,
// LibTorch). Each is looked for beside libmbt_runtime.so first, then by
// its bare name on the loader's search path.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_PLUGIN_H
#define MBT_RUNTIME_PLUGIN_H

#include <string>

namespace mbt {
namespace runtime {

/// dlopen(`library`, RTLD_NOW | `flags`) beside this library, else by
/// name; null if neither loads, with the loader's first error in `why`.
void *openPlugin(const char *library, int flags, std::string &why);

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_PLUGIN_H
