//===- RunStateDict.h - A run checkpoint's models, by name ------*- C++ -*-===//
//
// A warm start from `checkpoint.mbtrun` (Checkpoint.h): model m of the new
// sweep starts where model m of the run that wrote it stopped. The file
// holds unnamed rows; their names, shapes and element type come from the
// manifest of the artifact that wrote it, which `mbtc train` keeps beside
// it (DIR/model.so), and the checkpoint's manifest digest must be that
// artifact's, so that a recompiled artifact is refused rather than read
// with the wrong layout. The loss scale's buffers are the run's state, not
// the model's, and are left out.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_RUNSTATEDICT_H
#define MBT_RUNTIME_RUNSTATEDICT_H

#include "mbt/runtime/Checkpoint.h"
#include "mbt/runtime/Manifest.h"
#include "mbt/runtime/data/TorchCheckpoint.h"

#include <functional>
#include <memory>
#include <string>

namespace mbt {
namespace runtime {

/// The manifest of the artifact that wrote the run checkpoint `checkpoint`
/// read from `path` (manifestBesideCheckpoint in Artifact.h finds it
/// beside the file); throws RuntimeError when there is none or it is not
/// the writer.
using RunWriterManifest = std::function<Manifest(
    const std::string &path, const RunCheckpoint &checkpoint)>;

/// The models of one run checkpoint file.
class RunStateDicts {
public:
  /// Reads `path` and, through `writerOf`, the manifest of the artifact
  /// that wrote it; throws RuntimeError naming the file: no such artifact,
  /// sizes that are not its, a damaged checkpoint.
  RunStateDicts(const std::string &path, const RunWriterManifest &writerOf);

  /// The number of models the run trained.
  int64_t models() const { return checkpoint->models; }
  /// Model `model`'s parameters and buffers, views into the checkpoint.
  StateDict stateDict(int64_t model) const;

private:
  std::string path;
  Manifest writer;
  std::shared_ptr<const RunCheckpoint> checkpoint;
};

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_RUNSTATEDICT_H
