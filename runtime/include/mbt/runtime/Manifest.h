//===- Manifest.h - the artifact's self-description -------------*- C++ -*-===//
//
// The runtime's view of the manifest schema (mbt/common/Manifest.h, shared
// with the compiler that writes it): the same structs, and a reader that
// reports a bad manifest as a RuntimeError like every other bad input.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_MANIFEST_H
#define MBT_RUNTIME_MANIFEST_H

#include "mbt/common/Manifest.h"

#include <string>

namespace mbt {
namespace runtime {

using ::mbt::DataSource;
using ::mbt::DataSpec;
using ::mbt::InitCheckpointSpec;
using ::mbt::initKindName;
using ::mbt::InitSpec;
using ::mbt::isFileDataSet;
using ::mbt::LossScaleSpec;
using ::mbt::Manifest;
using ::mbt::ParamSpec;
using ::mbt::SplitOutput;

/// readManifest(), its ManifestError thrown as a RuntimeError.
Manifest parseManifest(const std::string &json, const std::string &origin);

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_MANIFEST_H
