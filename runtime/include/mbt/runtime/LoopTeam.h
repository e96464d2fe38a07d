//===- LoopTeam.h - the kernels' threads, the loops' team -------*- C++ -*-===//
//
// The batched kernels run their models on the threads of libomp's team,
// the one an artifact's compiled loops run on, where the process has
// libomp: one set of threads serves the whole step, and it stays awake
// between the loops and the products instead of two pools handing the
// cores back and forth through the kernel.
//
//===----------------------------------------------------------------------===//
#ifndef MBT_RUNTIME_LOOPTEAM_H
#define MBT_RUNTIME_LOOPTEAM_H

#include <cstdint>
#include <functional>

namespace mbt {
namespace runtime {

/// Looks for libomp in the process (an artifact compiled with --parallel
/// loads it); the kernels use its team from then on. Artifact::load calls
/// it after opening an artifact.
void findLoopTeam();

/// Whether the kernels run on libomp's team (findLoopTeam found it).
bool haveLoopTeam();

/// Runs body(begin, end) over [0, n) in `threads` contiguous chunks, one
/// per thread of a libomp team, the caller's chunk on the caller; on the
/// caller alone inside a parallel loop (libomp does not nest teams).
/// Needs haveLoopTeam().
void forkOnLoopTeam(int64_t n, int threads,
                    const std::function<void(int64_t, int64_t)> &body);

} // namespace runtime
} // namespace mbt

#endif
