//===- SingleThreadedTorch.cpp - LibTorch on one thread in the references -===//
//
// The reference suites run LibTorch on one intra-op thread. Its parallel
// reductions split their sums by thread count, so with as many threads as
// cores the reference's float32 rounding would depend on the machine; and
// its OpenMP threads spin while another suite's do, which under
// `ctest -j` made these small models several times slower. The models
// here are too small for threads to pay.
//
//===----------------------------------------------------------------------===//
#include <ATen/Parallel.h>

namespace {
[[maybe_unused]] const bool kSingleThreaded = [] {
  at::set_num_threads(1);
  return true;
}();
} // namespace
