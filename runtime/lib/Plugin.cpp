//===- Plugin.cpp - Libraries of the runtime loaded on demand -------------===//
#include "mbt/runtime/Plugin.h"

#include <dlfcn.h>

namespace mbt {
namespace runtime {

namespace {
/// `library` in the folder of libmbt_runtime.so, else the bare name.
std::string besideThisLibrary(const char *library) {
  Dl_info info;
  if (dladdr(reinterpret_cast<void *>(&openPlugin), &info) && info.dli_fname) {
    std::string self = info.dli_fname;
    size_t slash = self.rfind('/');
    if (slash != std::string::npos)
      return self.substr(0, slash + 1) + library;
  }
  return library;
}
} // namespace

void *openPlugin(const char *library, int flags, std::string &why) {
  why.clear();
  for (const std::string &path :
       {besideThisLibrary(library), std::string(library)}) {
    if (void *handle = dlopen(path.c_str(), RTLD_NOW | flags))
      return handle;
    const char *error = dlerror();
    if (why.empty())
      why = error ? error : "unknown dynamic loader error";
  }
  return nullptr;
}

} // namespace runtime
} // namespace mbt
