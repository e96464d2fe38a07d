// Checks which training samples each model sees under shared, k-fold and
// bootstrap routing: folds partition the data, a model's samples depend
// only on its own seed or fold (never on the number of models).
#include "mbt/runtime/DataRouting.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

using namespace mbt::runtime;

namespace {

Manifest manifestWith(DataSpec::Routing routing, std::vector<uint64_t> seeds,
                      int64_t folds = 0, std::vector<int64_t> fold = {}) {
  Manifest m;
  m.models = static_cast<int64_t>(seeds.size());
  m.seeds = std::move(seeds);
  m.data.routing = routing;
  m.data.shuffleSeed = 5;
  m.data.folds = folds;
  m.data.fold = std::move(fold);
  return m;
}

TEST(DataRoutingTest, SharedRoutingGivesEveryModelEverySampleInOrder) {
  DataRouting routing(manifestWith(DataSpec::Routing::Shared, {1, 2}), 10);
  EXPECT_TRUE(routing.shared());
  EXPECT_FALSE(routing.hasValidation());
  EXPECT_EQ(routing.trainSize(), 10);
  for (int64_t pos = 0; pos < 10; ++pos)
    EXPECT_EQ(routing.trainSample(1, pos), pos);
}

TEST(DataRoutingTest, KFoldHoldsOutOneFoldAndTrainsOnTheRest) {
  const int64_t n = 103, k = 5; // 3 samples past the last fold always train
  DataRouting routing(manifestWith(DataSpec::Routing::KFold, {0, 0, 0, 0, 0}, k,
                                   {0, 1, 2, 3, 4}),
                      n);
  ASSERT_TRUE(routing.hasValidation());
  EXPECT_EQ(routing.validationSize(), n / k);
  EXPECT_EQ(routing.trainSize(), n - n / k);
  std::set<int64_t> allValidation;
  for (int64_t model = 0; model < k; ++model) {
    std::set<int64_t> train, validation;
    for (int64_t pos = 0; pos < routing.trainSize(); ++pos)
      train.insert(routing.trainSample(model, pos));
    for (int64_t pos = 0; pos < routing.validationSize(); ++pos)
      validation.insert(routing.validationSample(model, pos));
    EXPECT_EQ(static_cast<int64_t>(train.size()), routing.trainSize());
    EXPECT_EQ(static_cast<int64_t>(validation.size()), n / k);
    for (int64_t s : validation)
      EXPECT_EQ(train.count(s), 0u) << "model " << model << " trains on " << s;
    EXPECT_EQ(static_cast<int64_t>(train.size() + validation.size()), n);
    for (int64_t s : validation)
      EXPECT_TRUE(allValidation.insert(s).second) << "folds overlap at " << s;
  }
  EXPECT_EQ(static_cast<int64_t>(allValidation.size()), k * (n / k));
}

TEST(DataRoutingTest, KFoldSamplesDependOnlyOnTheFoldIndex) {
  DataRouting eight(manifestWith(DataSpec::Routing::KFold,
                                 {0, 1, 2, 3, 4, 5, 6, 7}, 4,
                                 {0, 1, 2, 3, 0, 1, 2, 3}),
                    50);
  DataRouting alone(manifestWith(DataSpec::Routing::KFold, {6}, 4, {2}), 50);
  for (int64_t pos = 0; pos < alone.trainSize(); ++pos)
    EXPECT_EQ(eight.trainSample(6, pos), alone.trainSample(0, pos));
  for (int64_t pos = 0; pos < alone.validationSize(); ++pos)
    EXPECT_EQ(eight.validationSample(6, pos), alone.validationSample(0, pos));
}

TEST(DataRoutingTest, BootstrapResamplesWithReplacementKeyedByTheSeed) {
  const int64_t n = 1000;
  DataRouting three(manifestWith(DataSpec::Routing::Bootstrap, {7, 8, 9}), n);
  DataRouting alone(manifestWith(DataSpec::Routing::Bootstrap, {9}), n);
  EXPECT_EQ(three.trainSize(), n);
  std::set<int64_t> distinct;
  for (int64_t pos = 0; pos < n; ++pos) {
    int64_t s = three.trainSample(2, pos);
    ASSERT_GE(s, 0);
    ASSERT_LT(s, n);
    distinct.insert(s);
    EXPECT_EQ(s, alone.trainSample(0, pos));
  }
  // A resample of n from n holds about 1 - 1/e = 63% distinct samples.
  EXPECT_GT(distinct.size(), 560u);
  EXPECT_LT(distinct.size(), 700u);
  int64_t same = 0;
  for (int64_t pos = 0; pos < n; ++pos)
    same += three.trainSample(0, pos) == three.trainSample(1, pos);
  EXPECT_LT(same, 20) << "two seeds gave nearly the same resample";
}

// A validation fraction carves the same held-out samples for every model
// out of the training data, keyed by the shuffle seed; shared models train
// on the rest in ascending order, bootstrap models draw only from the rest.
TEST(DataRoutingTest, ValidationSplitIsCarvedOutOfTheTrainingData) {
  const int64_t n = 200;
  Manifest shared = manifestWith(DataSpec::Routing::Shared, {1, 2});
  shared.data.validation = 0.1;
  DataRouting routing(shared, n);
  EXPECT_TRUE(routing.shared());
  ASSERT_TRUE(routing.hasValidation());
  EXPECT_EQ(routing.validationSize(), 20);
  EXPECT_EQ(routing.trainSize(), 180);
  std::set<int64_t> held, trained;
  for (int64_t pos = 0; pos < 20; ++pos) {
    EXPECT_EQ(routing.validationSample(0, pos),
              routing.validationSample(1, pos));
    held.insert(routing.validationSample(0, pos));
  }
  for (int64_t pos = 0; pos < 180; ++pos) {
    trained.insert(routing.trainSample(1, pos));
    if (pos > 0) {
      EXPECT_LT(routing.sharedSample(pos - 1), routing.sharedSample(pos));
    }
  }
  EXPECT_EQ(held.size(), 20u);
  EXPECT_EQ(trained.size(), 180u);
  for (int64_t s : held)
    EXPECT_EQ(trained.count(s), 0u)
        << "sample " << s << " both held and trained";
  // Not simply the first or last samples.
  EXPECT_NE(*held.rbegin() - *held.begin(), 19);
  // The same split for the same seed, another for another seed.
  DataRouting again(shared, n);
  for (int64_t pos = 0; pos < 20; ++pos)
    EXPECT_EQ(again.validationSample(0, pos), routing.validationSample(0, pos));
  Manifest other = shared;
  other.data.shuffleSeed = 6;
  DataRouting moved(other, n);
  bool differs = false;
  for (int64_t pos = 0; pos < 20; ++pos)
    differs |=
        moved.validationSample(0, pos) != routing.validationSample(0, pos);
  EXPECT_TRUE(differs);

  Manifest boot = manifestWith(DataSpec::Routing::Bootstrap, {1, 2});
  boot.data.validation = 0.1;
  DataRouting drawn(boot, n);
  EXPECT_EQ(drawn.trainSize(), 180);
  for (int64_t model = 0; model < 2; ++model)
    for (int64_t pos = 0; pos < 180; ++pos)
      EXPECT_EQ(held.count(drawn.trainSample(model, pos)), 0u);
}

} // namespace
