//===- Workspace.h - The scratch memory an entry point runs in --*- C++ -*-===//
//
// ABI 5: a compiled step keeps its temporaries in a workspace its caller
// owns, of the size the artifact's `<entry>_workspace_bytes` function
// returns (docs/abi.md, "The workspace"). A Workspace holds one, 64-byte
// aligned, and grows it when a call needs more; a caller that sizes it
// once, for its largest batch, allocates nothing per step.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_WORKSPACE_H
#define MBT_RUNTIME_WORKSPACE_H

#include "mbt/common/Abi.h"
#include "mbt/runtime/AlignedBuffer.h"
#include "mbt/runtime/Error.h"

#include <algorithm>
#include <string>

namespace mbt {
namespace runtime {

class Workspace {
public:
  /// Makes the workspace at least `bytes` long (what a `_workspace_bytes`
  /// function returned); throws RuntimeError for a negative size. It grows
  /// by half again at least: batches sorted by length ask for a little
  /// more at each step of an epoch's first pass, and each new buffer's
  /// pages fault in again.
  void reserve(int64_t bytes) {
    if (bytes < 0)
      throw RuntimeError("an artifact asked for a workspace of " +
                         std::to_string(bytes) + " bytes");
    if (bytes > buffer.size())
      buffer = AlignedBuffer<uint8_t>(
          std::max(bytes, buffer.size() + buffer.size() / 2), "workspace");
  }
  /// The descriptor to pass as an entry point's last argument.
  WorkspaceRef descriptor() {
    return makeDenseMemRef<uint8_t, 1>(buffer.data(), {buffer.size()});
  }
  /// reserve(bytes), then descriptor().
  WorkspaceRef descriptor(int64_t bytes) {
    reserve(bytes);
    return descriptor();
  }
  int64_t size() const { return buffer.size(); }

private:
  AlignedBuffer<uint8_t> buffer{0, "workspace"};
};

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_WORKSPACE_H
