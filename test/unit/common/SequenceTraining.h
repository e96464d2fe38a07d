//===- SequenceTraining.h - train token models in tests ---------*- C++ -*-===//
//
// What the sequence equivalence tests share (classifiers in
// SequenceEquivalenceTest.cpp, language models in
// LanguageModelEquivalenceTest.cpp): a compiled spec trained through the
// Trainer's sequence path for some steps, and the check that model i of a
// batch ends where model i trained alone ends.
//
//===----------------------------------------------------------------------===//
#ifndef MBT_TEST_UNIT_COMMON_SEQUENCETRAINING_H
#define MBT_TEST_UNIT_COMMON_SEQUENCETRAINING_H

#include "CompileWithMbtc.h"

#include "mbt/runtime/Artifact.h"
#include "mbt/runtime/Trainer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

namespace mbt {
namespace test {

/// `[a, b, ...]`: a list for a spec.
inline std::string listOf(const std::vector<double> &values) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < values.size(); ++i)
    os << (i ? ", " : "") << values[i];
  os << "]";
  return os.str();
}

/// A token model `name` over byte tokens (with `target` its target type)
/// whose body is `network`, trained by cross-entropy as a sweep of one
/// model per learning rate in `lrs` (Adam, seeds `seeds`) on fortunes,
/// batched by `batching`; `extraSweep` adds settings.
inline std::string
tokenModelSpec(const std::string &name, const std::string &target,
               const std::string &network, const std::vector<double> &lrs,
               const std::vector<double> &seeds, const std::string &batching,
               const std::string &extraSweep = "") {
  std::ostringstream os;
  os << "import \"nn\"\nmodel " << name << " {\n  input  x: tokens[259]\n"
     << "  target y: " << target << "\n"
     << network << "  loss   = cross_entropy(logits, y)\n"
     << "  metric acc = accuracy(logits, y)\n}\n"
     << "sweep {\n  models = " << lrs.size() << "\n  seed   = " << listOf(seeds)
     << "\n  optim  = adam(lr = " << listOf(lrs) << ")\n"
     << "  data   = fortunes(batching = " << batching
     << ", token_budget = 512, window = 64, shuffle_seed = 9)\n"
     << extraSweep << "}\n";
  return os.str();
}

/// Options of a quiet run whose results go next to the artifact.
inline runtime::TrainOptions quietOptions(const std::string &artifactPath) {
  runtime::TrainOptions options;
  options.quiet = true;
  options.outDir = artifactPath + ".out";
  return options;
}

/// max |a - b| / max |b|.
inline double maxRelativeDifference(const std::vector<double> &a,
                                    const std::vector<double> &b) {
  double diff = 0, scale = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::fabs(a[i] - b[i]));
    scale = std::max(scale, std::fabs(b[i]));
  }
  return diff / scale;
}

/// Every model's parameters after `steps` train steps of the artifact at
/// `path` on `train` (`test` is the test split).
inline std::vector<std::vector<double>>
trainedParams(const std::string &path, const runtime::SequenceDataset &train,
              const runtime::SequenceDataset &test, int64_t steps) {
  runtime::Artifact artifact = runtime::Artifact::load(path);
  runtime::Trainer trainer(artifact, train, test, quietOptions(path));
  trainer.runSteps(steps);
  std::vector<std::vector<double>> params;
  for (int64_t m = 0; m < trainer.numModels(); ++m)
    params.push_back(trainer.modelParams(m));
  return params;
}

/// 4 models (own seed, own Adam learning rate) of `specOf(lrs, seeds)`
/// trained together for `steps` end within 1e-5 of each trained alone;
/// each moved more than 1e-3 from where a learning rate of 0 leaves it.
inline void expectBatchEqualsAlone(
    const std::string &tag,
    const std::function<std::string(const std::vector<double> &,
                                    const std::vector<double> &)> &specOf,
    const runtime::SequenceDataset &train, const runtime::SequenceDataset &test,
    int64_t steps) {
  std::vector<double> lrs{1e-3, 3e-3, 1e-2, 3e-2}, seeds{4, 8, 15, 16};
  auto batch = trainedParams(compileSpec(tag + "_batch", specOf(lrs, seeds)),
                             train, test, steps);
  ASSERT_EQ(batch.size(), lrs.size());
  for (size_t m = 0; m < lrs.size(); ++m) {
    auto alone = trainedParams(compileSpec(tag + "_alone" + std::to_string(m),
                                           specOf({lrs[m]}, {seeds[m]})),
                               train, test, steps);
    EXPECT_LE(maxRelativeDifference(batch[m], alone[0]), 1e-5) << "model " << m;
    auto initial = trainedParams(compileSpec(tag + "_zero" + std::to_string(m),
                                             specOf({0.0}, {seeds[m]})),
                                 train, test, steps);
    EXPECT_GT(maxRelativeDifference(initial[0], alone[0]), 1e-3)
        << "model " << m;
  }
}

} // namespace test
} // namespace mbt

#endif // MBT_TEST_UNIT_COMMON_SEQUENCETRAINING_H
