//===- StepPlan.h - an epoch's steps as a file ------------------*- C++ -*-===//
//
// A plan of training steps written by one tool and read by another: JSONL,
// one step per line, `{"samples": [i, ...], "padded_length": L}` (sample
// indices into the training split, and the length the step is padded to).
// `mbt-data batch --steps-out` writes mbt's plans; tools/bench writes
// another batcher's (the online-dynamic-batching package's) in the same
// form, and `mbt-run --steps FILE` trains on it, so training throughput can
// be compared across batchers on the same compiled step.
//
//===----------------------------------------------------------------------===//
#ifndef MBT_RUNTIME_STEPPLAN_H
#define MBT_RUNTIME_STEPPLAN_H

#include "mbt/runtime/LengthBatching.h"

#include <string>
#include <vector>

namespace mbt {
namespace runtime {

/// The JSONL text of `steps`.
std::string formatStepPlan(const std::vector<LengthGroup> &steps);

/// Reads a plan. Throws RuntimeError "PATH:LINE: message" for a line that
/// is not an object with a non-empty "samples" array of non-negative
/// integers and a positive integer "padded_length", or "cannot open" for a
/// missing file. `realTokens` is left 0 (the plan does not know lengths).
std::vector<LengthGroup> readStepPlan(const std::string &path);

/// Throws RuntimeError unless `steps` take every sample of a data set with
/// these `lengths` exactly once, each padded to at least its length.
void checkStepPlan(const std::vector<LengthGroup> &steps,
                   const std::vector<int64_t> &lengths,
                   const std::string &dataName);

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_STEPPLAN_H
