//===- KernelThreads.h - a kernel's batch over threads ----------*- C++ -*-===//
//
// The runtime's batched kernels (matmuls, convolutions) run each batch
// index (a model, or a model's head) whole on one thread and spread the
// indices over the threads: a split of one index's work would change its
// bits with the split, and model i must get the same bits alone as in a
// batch.
//
//===----------------------------------------------------------------------===//
#ifndef MBT_RUNTIME_LIB_KERNELTHREADS_H
#define MBT_RUNTIME_LIB_KERNELTHREADS_H

#include <cstdint>
#include <functional>

namespace mbt {
namespace runtime {

/// body(i) for every i in [0, batch), each on one thread: on the compiled
/// loops' OpenMP team where the artifact has one, else on the kernels'
/// own pool; on the calling thread alone where `flops` (the call's work)
/// is too little to pay for the hand-over. Indices of the step's frozen
/// models (IdleModelsGuard) are skipped: their results are discarded.
void forEachBatchIndex(int64_t batch, double flops,
                       const std::function<void(int64_t)> &body);

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_LIB_KERNELTHREADS_H
