//===- OneDnnContext.h - the engine and streams of oneDNN -------*- C++ -*-===//
//
// One CPU engine for the process and one stream per calling thread, shared
// by the matmuls (OneDnnMatmul.cpp) and the convolutions (OneDnnConv.cpp).
// The first use of a thread's stream tells oneDNN's OpenMP to keep that
// thread's primitives on it (omp_set_num_threads(1)): a primitive split
// over threads would change its bits with the split.
//
//===----------------------------------------------------------------------===//
#ifndef MBT_RUNTIME_LIB_ONEDNNCONTEXT_H
#define MBT_RUNTIME_LIB_ONEDNNCONTEXT_H

#ifdef MBT_HAVE_DNNL
#include <oneapi/dnnl/dnnl.hpp>

namespace mbt {
namespace runtime {

/// The process's CPU engine.
dnnl::engine &oneDnnEngine();

/// The calling thread's stream, its primitives kept on the thread.
dnnl::stream &oneDnnThreadStream();

/// A primitive's scratchpad, `desc` over the calling thread's scratch
/// buffer.
class ThreadScratchpad {
public:
  ThreadScratchpad() = default;
  explicit ThreadScratchpad(const dnnl::memory::desc &desc);
  /// The scratchpad, on the calling thread's buffer grown to its size: the
  /// thread's primitives share the buffer, as a thread runs one at a time.
  /// One buffer per primitive held 0.8 MB on average for the bf16
  /// transformer's hundreds of matmuls (280 MB of its 410 MB), each a cold
  /// buffer when its shape came round again.
  const dnnl::memory &get();

private:
  dnnl::memory memory;
  size_t size = 0;
};

} // namespace runtime
} // namespace mbt

#endif // MBT_HAVE_DNNL
#endif // MBT_RUNTIME_LIB_ONEDNNCONTEXT_H
