//===- InitCheckpoint.h - Models that start from given weights -*- C++ -*-===//
//
// A warm start (`init = checkpoint(...)`, Manifest::initCheckpoint): after
// the parameters and buffers are drawn from their initializers, each model
// takes the tensors of its file (safetensors, or .pt as torch.save writes
// it: data/TorchCheckpoint.h, or its model of a run checkpoint:
// RunStateDict.h; told apart by their first bytes), matched by
// name (the spec's, or the one `rename` gives), as PyTorch's
// load_state_dict does: by default every parameter and buffer must be in
// the file and the file must hold nothing else (strict; a batch norm's
// num_batches_tracked aside); `partial` lets a parameter the file lacks
// keep its initializer and ignores the file's other tensors. Shapes must match,
// or match reversed for a parameter the sweep lists in `transpose`; F32, F64,
// F16 and BF16 tensors convert to the model's float type (exactly, except F64
// into an f32 model, which rounds). The optimizer's state starts fresh.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_INITCHECKPOINT_H
#define MBT_RUNTIME_INITCHECKPOINT_H

#include "mbt/runtime/FloatBuffer.h"
#include "mbt/runtime/Manifest.h"
#include "mbt/runtime/RunStateDict.h"

#include <optional>
#include <string>

namespace mbt {
namespace runtime {

/// Overwrites every model's row of `params` [M, P] and `buffers` [M, Q]
/// (not a loss scale's buffers, which are the run's, not the module's)
/// from manifest.initCheckpoint; does nothing without one. Each tensor is
/// converted once however many models start from its file. Throws RuntimeError
/// naming the file and the tensor: a missing tensor, one the model does not
/// have, a wrong shape (both shown), a tensor of integers or with a non-finite
/// value, or a file that is neither a consistent safetensors file nor a .pt
/// state dict. A run checkpoint's rows are named by `writerOf`'s manifest
/// (StepRunner passes manifestBesideCheckpoint); without one, a run
/// checkpoint is an error.
void loadInitCheckpoint(const Manifest &manifest, FloatBuffer &params,
                        FloatBuffer &buffers,
                        const RunWriterManifest &writerOf = {});

/// The same from `init` in place of the manifest's (`--init FILE`).
void loadInitCheckpoint(const Manifest &manifest,
                        const InitCheckpointSpec &init, FloatBuffer &params,
                        FloatBuffer &buffers,
                        const RunWriterManifest &writerOf = {});

/// The warm start a run makes: the manifest's, with its files replaced by
/// `initFile` when that is not empty (TrainOptions::initFile); none when
/// neither says one.
std::optional<InitCheckpointSpec>
chosenInitCheckpoint(const Manifest &manifest, const std::string &initFile);

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_INITCHECKPOINT_H
