//===- DataSources.h - the data a manifest names, loaded --------*- C++ -*-===//
//
// One entry point from a manifest's "data" to the two splits the Trainer
// takes: a built-in data set (Fashion-MNIST) or the user's own files
// (DataSource: npz, npy, csv, image_folder, safetensors), each read by its
// reader under data/ and converted to what the artifact's input and
// target declare (SampleLayout). Every routing, evaluation and checkpoint
// feature works on the result alike, because the Trainer never learns
// where it came from.
//
//===----------------------------------------------------------------------===//
#ifndef MBT_RUNTIME_DATA_DATASOURCES_H
#define MBT_RUNTIME_DATA_DATASOURCES_H

#include "mbt/runtime/Dataset.h"
#include "mbt/runtime/FashionMnist.h"
#include "mbt/runtime/Manifest.h"

#include <string>

namespace mbt {
namespace runtime {

/// What the artifact's input and target ask of every sample.
SampleLayout sampleLayout(const Manifest &manifest);

/// A split that was not given: no samples, the layout's shape.
Dataset emptySplit(const SampleLayout &layout, const std::string &name);

/// The training and test splits of the manifest's data set, converted to
/// sampleLayout(manifest). Without test files the test split is empty
/// (count 0). `dataDir` overrides where Fashion-MNIST is read from (empty:
/// defaultFashionMnistDir()). Throws RuntimeError naming the file and
/// the place at fault.
DataSplits loadDataSource(const Manifest &manifest,
                          const std::string &dataDir = "");

/// What the compiler can check of the user's arrays (npy, npz,
/// safetensors) from their headers alone, without reading the data: that
/// each split's input array holds samples of the input's shape.
/// `manifestJson` is the artifact's manifest. Returns the error training
/// would report ("'x.npy' holds samples of shape [28, 28] but the input is
/// f32[784]: ..."), or "" when the arrays fit or cannot be told from here
/// (a file that is not there yet, another kind of data). Never throws: the
/// compiler is built without exceptions.
std::string checkArrayHeaders(const std::string &manifestJson) noexcept;

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_DATA_DATASOURCES_H
