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

} // namespace runtime
} // namespace mbt

#endif // MBT_HAVE_DNNL
#endif // MBT_RUNTIME_LIB_ONEDNNCONTEXT_H
