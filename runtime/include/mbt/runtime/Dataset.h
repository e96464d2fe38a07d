//===- Dataset.h - In-memory supervised classification data ----*- C++ -*-===//
//
// The runtime's common currency for data: n samples of F float features and
// an int32 class label each. Loaders (FashionMnist.h, later CSV/JSONL)
// produce it; the Trainer consumes it without knowing where it came from.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_DATASET_H
#define MBT_RUNTIME_DATASET_H

#include <cstdint>
#include <string>
#include <vector>

namespace mbt {
namespace runtime {

struct Dataset {
  std::string name;        // for messages, e.g. "fashion_mnist/train"
  int64_t count = 0;       // n
  int64_t numFeatures = 0; // F
  int64_t numClasses = 0;  // labels lie in [0, numClasses)
  std::vector<float> x;    // [n, F] row-major
  std::vector<int32_t> y;  // [n]

  const float *sample(int64_t i) const { return x.data() + i * numFeatures; }
};

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_DATASET_H
