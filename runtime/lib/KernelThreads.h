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

/// The batch indices of a call that belong to the step's frozen models
/// (IdleModelsGuard), whose results are discarded: a call's batch is the
/// models, or the models times a per-model count (heads), model-major.
struct IdleIndices {
  const uint8_t *idle = nullptr;
  int64_t perModel = 0;
  bool skips(int64_t i) const { return perModel && idle[i / perModel]; }
};

/// The frozen models' indices in a call of `batch` indices.
IdleIndices idleIndices(int64_t batch);

/// Whether a call of `batch` indices and `flops` of work in all runs on
/// the calling thread: too little work to pay for handing it over, or one
/// thread only.
bool runsOnCallingThread(int64_t batch, double flops);

/// chunk(begin, end) over contiguous parts of [0, batch), one per thread:
/// on the compiled loops' OpenMP team where the artifact has one, else on
/// the kernels' own pool.
void spreadOverThreads(int64_t batch,
                       const std::function<void(int64_t, int64_t)> &chunk);

/// body(i) for every i in [0, batch) but the frozen models', each whole on
/// one thread: on the calling thread where runsOnCallingThread, else
/// spread over the threads.
template <typename Body>
void forEachBatchIndex(int64_t batch, double flops, const Body &body) {
  IdleIndices idle = idleIndices(batch);
  auto range = [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      if (!idle.skips(i))
        body(i);
  };
  if (runsOnCallingThread(batch, flops))
    range(0, batch);
  else
    spreadOverThreads(batch, range);
}

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_LIB_KERNELTHREADS_H
