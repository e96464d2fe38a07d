//===- TokenModelChecks.h - gradient checks of a token model ----*- C++ -*-===//
//
// The two gradient checks every model over token ids gets (classifiers in
// SequenceGradientTest.cpp, language models in LanguageModelGradientTest):
// finite differences of the compiled gradient, and the same gradient
// whatever padding a batch's block has.
//
//===----------------------------------------------------------------------===//
#ifndef MBT_TEST_UNIT_COMMON_TOKENMODELCHECKS_H
#define MBT_TEST_UNIT_COMMON_TOKENMODELCHECKS_H

#include "TokenModel.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <vector>

namespace mbt {
namespace test {

/// ||a - b|| / ||b||.
inline double relativeError(const std::vector<double> &a,
                            const std::vector<double> &b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    num += (a[i] - b[i]) * (a[i] - b[i]);
    den += b[i] * b[i];
  }
  return std::sqrt(num / den);
}

/// The compiled gradient on `batch` against central differences of step
/// `eps`, within `tolerance`; a gradient off by 20 tolerances must fail,
/// so the check can.
template <typename T>
void expectFiniteDifferences(TokenModel<T> &model, const TokenBatch &batch,
                             T eps, double tolerance) {
  std::vector<double> analytic = model.gradient(batch, model.longest(batch));
  std::vector<double> numeric = model.finiteDifferences(batch, eps);
  double error = relativeError(analytic, numeric);
  std::printf("relative error of the compiled %s gradient: %.3g\n",
              sizeof(T) == 8 ? "f64" : "f32", error);
  EXPECT_LT(error, tolerance);
  std::vector<double> wrong(analytic);
  for (double &g : wrong)
    g *= 1 + 20 * tolerance;
  EXPECT_GT(relativeError(wrong, numeric), tolerance);
}

/// The gradient of `batch` as a dynamic batch (as wide as its longest row)
/// equals that of the same samples padded to `tight + extra` for each of
/// `extras` (a padded fixed batch), within 1e-6; `other`'s gradient
/// differs, so the comparison is not vacuous.
template <typename T>
void expectPaddingInvariance(TokenModel<T> &model, const TokenBatch &batch,
                             const TokenBatch &other,
                             std::initializer_list<int64_t> extras) {
  int64_t tight = model.longest(batch);
  std::vector<double> dynamic = model.gradient(batch, tight);
  double norm = 0;
  for (double g : dynamic)
    norm += g * g;
  ASSERT_GT(norm, 1e-8) << "the loss does not depend on the parameters";
  for (int64_t extra : extras) {
    int64_t width = tight + extra;
    double error = relativeError(model.gradient(batch, width), dynamic);
    std::printf("width %lld vs %lld: relative difference %.3g\n",
                (long long)width, (long long)tight, error);
    EXPECT_LE(error, 1e-6) << "padded to " << width;
  }
  EXPECT_GT(relativeError(model.gradient(other, tight), dynamic), 1e-3);
}

} // namespace test
} // namespace mbt

#endif // MBT_TEST_UNIT_COMMON_TOKENMODELCHECKS_H
