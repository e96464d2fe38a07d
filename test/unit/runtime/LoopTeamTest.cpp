//===- LoopTeamTest.cpp - the batched kernels on libomp's team ------------===//
//
// Once the process has libomp (an artifact with parallel loops loads it),
// the batched kernels run their models on its team: every index once, in
// contiguous chunks, the first on the caller and the others on other
// threads; on the caller alone inside a parallel loop; and each model's
// product with the bits of the model alone.
//
//===----------------------------------------------------------------------===//

#include "mbt/runtime/LoopTeam.h"
#include "mbt/runtime/Kernels.h"

#include "DeterministicValues.h"

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <algorithm>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

using namespace mbt;
using namespace mbt::runtime;
using mbt::test::filled;

namespace {

class LoopTeamTest : public ::testing::Test {
protected:
  void SetUp() override {
    // As an artifact's loops would: the team's library in the process.
    if (!dlopen("libomp.so.5", RTLD_NOW | RTLD_LOCAL))
      GTEST_SKIP() << "no libomp on this host: " << dlerror();
    findLoopTeam();
    ASSERT_TRUE(haveLoopTeam());
  }
};

TEST_F(LoopTeamTest, SplitsTheIndicesIntoOneChunkPerThread) {
  const int64_t n = 10;
  std::mutex mutex;
  std::vector<std::thread::id> owner(n);
  std::vector<int> visits(n, 0);
  std::vector<std::pair<int64_t, int64_t>> chunks;
  forkOnLoopTeam(n, 2, [&](int64_t begin, int64_t end) {
    std::lock_guard<std::mutex> lock(mutex);
    chunks.push_back({begin, end});
    for (int64_t i = begin; i < end; ++i) {
      ++visits[i];
      owner[i] = std::this_thread::get_id();
    }
  });
  EXPECT_EQ(visits, std::vector<int>(n, 1));
  std::sort(chunks.begin(), chunks.end());
  EXPECT_EQ(chunks,
            (std::vector<std::pair<int64_t, int64_t>>{{0, 5}, {5, 10}}));
  EXPECT_EQ(owner.front(), std::this_thread::get_id());
  EXPECT_NE(owner.back(), std::this_thread::get_id());
}

// libomp does not nest teams: a kernel called from inside a parallel loop
// runs all its models on that loop's thread, and returns.
TEST_F(LoopTeamTest, InsideAParallelLoopRunsOnTheCaller) {
  std::mutex mutex;
  std::set<std::pair<std::thread::id, std::thread::id>> seen;
  std::vector<int> visits(2 * 6, 0);
  forkOnLoopTeam(2, 2, [&](int64_t begin, int64_t end) {
    for (int64_t outer = begin; outer < end; ++outer) {
      std::thread::id caller = std::this_thread::get_id();
      forkOnLoopTeam(6, 2, [&](int64_t b, int64_t e) {
        std::lock_guard<std::mutex> lock(mutex);
        EXPECT_EQ(b, 0);
        EXPECT_EQ(e, 6);
        seen.insert({caller, std::this_thread::get_id()});
        for (int64_t i = b; i < e; ++i)
          ++visits[outer * 6 + i];
      });
    }
  });
  EXPECT_EQ(visits, std::vector<int>(12, 1));
  for (auto [caller, worker] : seen)
    EXPECT_EQ(caller, worker);
}

// The kernel's models on the team: model i's bits are those of model i
// alone (a batch of one, on the calling thread).
TEST_F(LoopTeamTest, BatchOnTheTeamAgreesBitwiseWithEachModelAlone) {
  // 12.6 MFLOP: enough work for the kernel to use its threads.
  const int64_t batch = 6, m = 128, n = 64, k = 128;
  std::vector<float> a = filled(batch * m * k, 51),
                     b = filled(batch * k * n, 52), c(batch * m * n);
  auto ra = makeDenseMemRef<float, 3>(a.data(), {batch, m, k});
  auto rb = makeDenseMemRef<float, 3>(b.data(), {batch, k, n});
  auto rc = makeDenseMemRef<float, 3>(c.data(), {batch, m, n});
  _mlir_ciface_mbt_rt_batch_matmul_f32(&ra, &rb, &rc, 0, 0, 0);
  for (int64_t i = 0; i < batch; ++i) {
    std::vector<float> one(m * n);
    auto a1 = makeDenseMemRef<float, 3>(a.data() + i * m * k, {1, m, k});
    auto b1 = makeDenseMemRef<float, 3>(b.data() + i * k * n, {1, k, n});
    auto c1 = makeDenseMemRef<float, 3>(one.data(), {1, m, n});
    _mlir_ciface_mbt_rt_batch_matmul_f32(&a1, &b1, &c1, 0, 0, 0);
    for (int64_t j = 0; j < m * n; ++j)
      ASSERT_EQ(one[j], c[i * m * n + j]) << "model " << i << " elem " << j;
  }
  EXPECT_EQ(takeKernelError(), "");
}

} // namespace
