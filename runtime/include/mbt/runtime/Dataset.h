//===- Dataset.h - In-memory supervised classification data ----*- C++ -*-===//
//
// The runtime's common currency for data: n samples of F float features and
// a target each, an int32 class label (classification) or K floats
// (regression). Loaders (FashionMnist.h, the readers under data/) produce
// it; the Trainer consumes it without knowing where it came from.
// SampleLayout is what the spec asks of every sample: readers convert to it
// and check the file against it.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_DATASET_H
#define MBT_RUNTIME_DATASET_H

#include <cstdint>
#include <functional>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

namespace mbt {
namespace runtime {

struct Dataset {
  std::string name;        // for messages, e.g. "fashion_mnist/train"
  int64_t count = 0;       // n
  int64_t numFeatures = 0; // F
  int64_t numClasses = 0;  // labels lie in [0, numClasses)
  std::vector<float> x;    // [n, F] row-major (empty for a borrowed x)
  std::vector<int32_t> y;  // [n]; empty for regression
  /// Regression: K float targets per sample, [n, K] row-major.
  int64_t targetWidth = 0; // K; 0 for classification
  std::vector<float> targets;
  /// The classes' names when the file named them (class i is
  /// classNames[i], sorted); empty when the labels were numbers.
  std::vector<std::string> classNames;

  /// A borrowed x: [n, F] float32 samples where the caller keeps them (a
  /// NumPy array, read in place), alive as long as `borrowedOwner`; null
  /// when the Dataset holds its own samples in `x`.
  const float *borrowed = nullptr;
  std::shared_ptr<const void> borrowedOwner;

  bool regression() const { return targetWidth > 0; }
  const float *sample(int64_t i) const {
    return (borrowed ? borrowed : x.data()) + i * numFeatures;
  }
  /// The floats of x the Dataset reads: n * F when it is complete.
  size_t storedFeatures() const {
    return borrowed ? size_t(count) * size_t(numFeatures) : x.size();
  }
};

/// What the spec's input and target declare for one sample.
struct SampleLayout {
  /// The input's dims without the batch, e.g. {784} or {1, 28, 28}.
  std::vector<int64_t> inputShape;
  /// A class index in [0, classes) per sample, or targetWidth floats.
  enum class Target { Classes, Values } target = Target::Classes;
  int64_t classes = 0;
  int64_t targetWidth = 0;

  int64_t features() const {
    return std::accumulate(inputShape.begin(), inputShape.end(), int64_t(1),
                           std::multiplies<int64_t>());
  }
};

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_DATASET_H
