//===- Manifest.cpp - the runtime's manifest reader -----------------------===//
#include "mbt/runtime/Manifest.h"

#include "mbt/runtime/Error.h"

namespace mbt {
namespace runtime {

Manifest parseManifest(const std::string &json, const std::string &origin) {
  try {
    return readManifest(json, origin);
  } catch (const ManifestError &e) {
    throw RuntimeError(e.what());
  }
}

} // namespace runtime
} // namespace mbt
