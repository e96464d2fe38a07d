//===- FashionMnist.h - Load Fashion-MNIST from idx files -------*- C++ -*-===//
//
// Fashion-MNIST (Xiao et al. 2017) as shipped by Debian's
// dataset-fashion-mnist package: {train,t10k}-{images-idx3,labels-idx1}-ubyte
// (.gz) under /usr/share/datasets/fashion-mnist. Images become 784 floats in
// [0, 1] (pixel / 255), labels int32 in [0, 10).
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_FASHIONMNIST_H
#define MBT_RUNTIME_FASHIONMNIST_H

#include "mbt/runtime/Dataset.h"

#include <string>

namespace mbt {
namespace runtime {

enum class Split { Train, Test };

/// Where the data lives when the caller does not say: $MBT_DATA_DIR if set
/// and non-empty, else /usr/share/datasets/fashion-mnist.
std::string defaultFashionMnistDir();

/// Builds a Dataset from an images idx file (magic 0x803, [n, rows, cols])
/// and a labels idx file (magic 0x801, [n], every label < 10). Throws
/// RuntimeError naming the file at fault.
Dataset loadIdxClassification(const std::string &imagesPath,
                              const std::string &labelsPath,
                              const std::string &name);

/// Loads one split from `dataDir` (empty: defaultFashionMnistDir()). Each
/// file is looked up as NAME.gz first, then as plain NAME. A missing file is
/// reported as "cannot open '<path>': <strerror>" plus an install hint.
Dataset loadFashionMnist(Split split, const std::string &dataDir = "");

/// Train and test split of a data set named in a manifest ("fashion_mnist"
/// is the only one so far).
struct DataSplits {
  Dataset train;
  Dataset test;
};
DataSplits loadDataSplits(const std::string &dataName,
                          const std::string &dataDir = "");

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_FASHIONMNIST_H
