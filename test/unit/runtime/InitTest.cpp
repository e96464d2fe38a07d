//===- InitTest.cpp - Parameter initialization ----------------------------===//
//
// Two properties: determinism keyed by (seed, parameter, element), which is
// what makes a model's start independent of the batch it is in; and that
// each init kind draws from the distribution it names.
//
//===----------------------------------------------------------------------===//

#include "mbt/runtime/Init.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

using namespace mbt::runtime;

namespace {

ParamSpec param(const std::string &name, std::vector<int64_t> shape,
                InitSpec init, int64_t offset = 0) {
  ParamSpec p;
  p.name = name;
  p.shape = std::move(shape);
  p.size = std::accumulate(p.shape.begin(), p.shape.end(), int64_t(1),
                           std::multiplies<int64_t>());
  p.offset = offset;
  p.init = init;
  return p;
}

InitSpec normal(double mean, double stddev) {
  InitSpec s;
  s.kind = InitSpec::Kind::Normal;
  s.mean = mean;
  s.stddev = stddev;
  return s;
}
InitSpec uniform(double low, double high) {
  InitSpec s;
  s.kind = InitSpec::Kind::Uniform;
  s.low = low;
  s.high = high;
  return s;
}
InitSpec ofKind(InitSpec::Kind kind) {
  InitSpec s;
  s.kind = kind;
  return s;
}

/// A two-parameter model (w: normal [5,3], b: uniform [3]) with one row per
/// seed.
Manifest manifestWithSeeds(std::vector<uint64_t> seeds) {
  Manifest m;
  m.models = static_cast<int64_t>(seeds.size());
  m.seeds = std::move(seeds);
  m.params = {param("w", {5, 3}, normal(0, 1), 0),
              param("b", {3}, uniform(-1, 1), 15)};
  m.paramCount = 18;
  return m;
}

std::vector<float> draw(const ParamSpec &p, uint32_t index, uint64_t seed) {
  std::vector<float> values(p.size);
  initParam(p, index, seed, values.data());
  return values;
}

TEST(InitTest, ModelRowDependsOnlyOnItsSeedNotOnBatchSize) {
  Manifest batch = manifestWithSeeds({5, 6, 7});
  Manifest alone = manifestWithSeeds({6});
  std::vector<float> batchParams(3 * 18), aloneParams(18);
  initAllParams(batch, batchParams.data());
  initAllParams(alone, aloneParams.data());
  EXPECT_TRUE(std::equal(aloneParams.begin(), aloneParams.end(),
                         batchParams.begin() + 18));
}

TEST(InitTest, ModelRowDoesNotDependOnItsPositionInTheBatch) {
  Manifest first = manifestWithSeeds({6, 5});
  Manifest second = manifestWithSeeds({5, 6});
  std::vector<float> a(36), b(36);
  initAllParams(first, a.data());
  initAllParams(second, b.data());
  EXPECT_TRUE(std::equal(a.begin(), a.begin() + 18, b.begin() + 18));
}

TEST(InitTest, DifferentSeedsAndParamsGiveDifferentValues) {
  ParamSpec p = param("w", {64}, normal(0, 1));
  EXPECT_NE(draw(p, 0, 1), draw(p, 0, 2));
  EXPECT_NE(draw(p, 0, 1), draw(p, 1, 1));
  EXPECT_EQ(draw(p, 0, 1), draw(p, 0, 1));
}

TEST(InitTest, ElementValueDoesNotDependOnParamSize) {
  // Element e is addressed directly, so a longer parameter extends a
  // shorter one with the same (seed, index) instead of reshuffling it.
  std::vector<float> shortDraw = draw(param("w", {7}, normal(0, 1)), 2, 9);
  std::vector<float> longDraw = draw(param("w", {100}, normal(0, 1)), 2, 9);
  EXPECT_TRUE(std::equal(shortDraw.begin(), shortDraw.end(), longDraw.begin()));
}

TEST(InitTest, NormalHasRequestedMeanAndStd) {
  std::vector<float> v = draw(param("w", {100000}, normal(0.5, 2.0)), 0, 42);
  double mean = std::accumulate(v.begin(), v.end(), 0.0) / v.size();
  double var = 0;
  for (float x : v)
    var += (x - mean) * (x - mean);
  double stddev = std::sqrt(var / v.size());
  // Standard error of the mean is 2/sqrt(1e5) ~ 0.006.
  EXPECT_NEAR(mean, 0.5, 0.03);
  EXPECT_NEAR(stddev, 2.0, 0.03);
}

TEST(InitTest, UniformStaysInBoundsAndFillsThem) {
  std::vector<float> v = draw(param("b", {100000}, uniform(-3, 5)), 1, 42);
  auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  EXPECT_GE(*lo, -3.0f);
  EXPECT_LT(*hi, 5.0f);
  EXPECT_LT(*lo, -2.99f);
  EXPECT_GT(*hi, 4.99f);
  double mean = std::accumulate(v.begin(), v.end(), 0.0) / v.size();
  EXPECT_NEAR(mean, 1.0, 0.05);
}

TEST(InitTest, KaimingUniformBoundIsOneOverSqrtFanIn) {
  ParamSpec p = param("w", {400, 250}, ofKind(InitSpec::Kind::KaimingUniform));
  EXPECT_DOUBLE_EQ(initUniformBound(p), 1.0 / 20.0);
  std::vector<float> v = draw(p, 0, 3);
  auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  EXPECT_GE(*lo, -0.05f);
  EXPECT_LE(*hi, 0.05f);
  EXPECT_GT(*hi, 0.0499f);
}

TEST(InitTest, XavierUniformBoundUsesFanInAndFanOut) {
  ParamSpec p = param("w", {100, 200}, ofKind(InitSpec::Kind::XavierUniform));
  EXPECT_DOUBLE_EQ(initUniformBound(p), std::sqrt(6.0 / 300.0));
  ParamSpec bias = param("b", {5}, ofKind(InitSpec::Kind::XavierUniform));
  EXPECT_DOUBLE_EQ(initUniformBound(bias), std::sqrt(6.0 / 6.0));
  std::vector<float> v = draw(p, 0, 3);
  float bound = static_cast<float>(std::sqrt(6.0 / 300.0));
  for (float x : v)
    ASSERT_LE(std::fabs(x), bound);
}

TEST(InitTest, ZerosOnesAndConstantsAreConstant) {
  std::vector<float> zeros =
      draw(param("z", {9}, ofKind(InitSpec::Kind::Zeros)), 0, 1);
  std::vector<float> ones =
      draw(param("o", {9}, ofKind(InitSpec::Kind::Ones)), 0, 1);
  EXPECT_EQ(zeros, std::vector<float>(9, 0.0f));
  EXPECT_EQ(ones, std::vector<float>(9, 1.0f));
  InitSpec constant = ofKind(InitSpec::Kind::Constant);
  constant.value = 65536.0; // a loss scale's start
  EXPECT_EQ(draw(param("c", {}, constant), 0, 1),
            std::vector<float>(1, 65536.0f));
}

TEST(InitTest, ParamsLandAtTheirManifestOffsets) {
  Manifest m = manifestWithSeeds({11});
  std::vector<float> row(18, -7.0f);
  initModelParams(m, 11, row.data());
  EXPECT_EQ(std::vector<float>(row.begin(), row.begin() + 15),
            draw(m.params[0], 0, 11));
  EXPECT_EQ(std::vector<float>(row.begin() + 15, row.end()),
            draw(m.params[1], 1, 11));
}

} // namespace
