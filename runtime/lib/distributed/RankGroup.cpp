//===- RankGroup.cpp - torchrun's environment, the c10d plugin ------------===//
#include "mbt/runtime/distributed/RankGroup.h"

#include "ProcessGroupAbi.h"
#include "mbt/runtime/Error.h"
#include "mbt/runtime/Plugin.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <thread>

namespace mbt {
namespace runtime {

namespace {
constexpr const char *kC10dLibrary = "libmbt_runtime_c10d.so";

/// Environment variable `name` as an integer; `fallback` when unset.
int64_t integerVariable(const char *name, int64_t fallback, bool required) {
  const char *text = std::getenv(name);
  if (!text || !*text) {
    if (required)
      throw RuntimeError(fmt::format(
          "{} is not set: a run over several processes reads RANK, "
          "WORLD_SIZE, MASTER_ADDR and MASTER_PORT, as torchrun sets them",
          name));
    return fallback;
  }
  char *end = nullptr;
  long long value = std::strtoll(text, &end, 10);
  if (*end != '\0' || value < 0)
    throw RuntimeError(
        fmt::format("{}='{}' is not a non-negative integer", name, text));
  return value;
}

std::string stringVariable(const char *name) {
  const char *text = std::getenv(name);
  return text ? text : "";
}

/// The plugin's functions.
struct C10dFunctions {
  mbt_pg_open_fn open = nullptr;
  mbt_pg_all_gather_fn allGather = nullptr;
  mbt_pg_all_reduce_sum_fn allReduceSum = nullptr;
  mbt_pg_store_set_fn storeSet = nullptr;
  mbt_pg_store_check_fn storeCheck = nullptr;
  mbt_pg_close_fn close = nullptr;
};

C10dFunctions loadC10d() {
  std::string why;
  void *handle = openPlugin(kC10dLibrary, RTLD_LOCAL, why);
  if (!handle)
    throw RuntimeError(fmt::format(
        "a run over several processes needs {} (c10d, from LibTorch): {}; "
        "mbt was built without it, or it is not beside libmbt_runtime.so",
        kC10dLibrary, why));
  C10dFunctions f;
  auto symbol = [&](auto &fn, const char *name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
        dlsym(handle, name));
    if (!fn)
      throw RuntimeError(fmt::format("{} lacks {}", kC10dLibrary, name));
  };
  symbol(f.open, "mbt_pg_open");
  symbol(f.allGather, "mbt_pg_all_gather");
  symbol(f.allReduceSum, "mbt_pg_all_reduce_sum");
  symbol(f.storeSet, "mbt_pg_store_set");
  symbol(f.storeCheck, "mbt_pg_store_check");
  symbol(f.close, "mbt_pg_close");
  return f;
}

class C10dRankGroup final : public RankGroup {
public:
  C10dRankGroup(C10dFunctions fns, mbt_pg *group, const LaunchEnvironment &env)
      : fns(fns), group(group), env(env) {}
  ~C10dRankGroup() override { fns.close(group); }

  int64_t rank() const override { return env.rank; }
  int64_t size() const override { return env.worldSize; }

  std::vector<std::string> allGather(const std::string &bytes,
                                     const std::string &what) override {
    Timed timed(*this);
    // Sizes first, then every rank's bytes padded to the largest.
    std::vector<int64_t> sizes(env.worldSize);
    int64_t mine = static_cast<int64_t>(bytes.size());
    check(fns.allGather(group, &mine, sizeof mine, sizes.data(), error,
                        sizeof error),
          what);
    int64_t largest = 0;
    for (int64_t size : sizes)
      largest = std::max(largest, size);
    // Nothing to send (Gloo divides by the bytes of an all-gather).
    if (largest == 0)
      return std::vector<std::string>(env.worldSize);
    std::string padded = bytes;
    padded.resize(largest);
    std::string all(largest * env.worldSize, '\0');
    check(fns.allGather(group, padded.data(), largest, all.data(), error,
                        sizeof error),
          what);
    std::vector<std::string> parts;
    for (int64_t r = 0; r < env.worldSize; ++r)
      parts.push_back(all.substr(r * largest, sizes[r]));
    return parts;
  }

  void allReduceSum(double *data, size_t count,
                    const std::string &what) override {
    Timed timed(*this);
    check(fns.allReduceSum(group, data, count, 1, error, sizeof error), what);
  }
  void allReduceSum(float *data, size_t count,
                    const std::string &what) override {
    Timed timed(*this);
    check(fns.allReduceSum(group, data, count, 0, error, sizeof error), what);
  }

private:
  /// Counts a collective and its time.
  struct Timed {
    explicit Timed(C10dRankGroup &group)
        : group(group), start(std::chrono::steady_clock::now()) {}
    ~Timed() {
      ++group.collectiveCount;
      group.collectiveTime += std::chrono::duration<double>(
                                  std::chrono::steady_clock::now() - start)
                                  .count();
    }
    C10dRankGroup &group;
    std::chrono::steady_clock::time_point start;
  };

  void check(int status, const std::string &what) {
    if (status == 0)
      return;
    std::string cause = error;
    throw RuntimeError(fmt::format(
        "rank {}: {} failed: {} ({}); the checkpoints in the results "
        "directory resume the run on {} processes (--resume)",
        env.rank, what, lostRanks(), cause, env.worldSize));
  }

  /// Which ranks are gone, asked through the store: every rank that meets
  /// a failed collective says so under a key of its own; after a grace
  /// period, the ranks that said nothing are the lost ones.
  std::string lostRanks() {
    char storeError[512];
    std::string key = fmt::format("survivor/{}", env.rank);
    if (fns.storeSet(group, key.c_str(), "1", storeError, sizeof storeError))
      return env.useAgentStore
                 ? "the launcher's store is gone too"
                 : "rank 0, which serves the rendezvous store, is lost";
    std::this_thread::sleep_for(std::chrono::seconds(2));
    std::vector<std::string> keys;
    std::vector<const char *> pointers;
    for (int64_t r = 0; r < env.worldSize; ++r)
      keys.push_back(fmt::format("survivor/{}", r));
    for (const std::string &k : keys)
      pointers.push_back(k.c_str());
    std::vector<int32_t> present(env.worldSize, 0);
    if (fns.storeCheck(group, pointers.data(), pointers.size(), present.data(),
                       storeError, sizeof storeError))
      return "rank 0, which serves the rendezvous store, is lost";
    std::vector<int64_t> lost;
    for (int64_t r = 0; r < env.worldSize; ++r)
      if (!present[r])
        lost.push_back(r);
    if (lost.empty())
      return "every rank is still there";
    return fmt::format("lost rank{} {} (exited, killed or not answering)",
                       lost.size() > 1 ? "s" : "", fmt::join(lost, ", "));
  }

  C10dFunctions fns;
  mbt_pg *group;
  LaunchEnvironment env;
  char error[1024] = {};
};
} // namespace

LaunchEnvironment readLaunchEnvironment() {
  LaunchEnvironment env;
  env.worldSize = integerVariable("WORLD_SIZE", 1, false);
  if (env.worldSize < 1)
    throw RuntimeError("WORLD_SIZE=0: a run needs at least one rank");
  if (env.worldSize == 1)
    return env;
  env.rank = integerVariable("RANK", 0, true);
  if (env.rank >= env.worldSize)
    throw RuntimeError(fmt::format("RANK={} is not a rank of WORLD_SIZE={}",
                                   env.rank, env.worldSize));
  env.localRank = integerVariable("LOCAL_RANK", 0, false);
  env.masterAddr = stringVariable("MASTER_ADDR");
  if (env.masterAddr.empty())
    throw RuntimeError("MASTER_ADDR is not set: a run over several processes "
                       "meets at MASTER_ADDR:MASTER_PORT, as torchrun sets "
                       "them");
  env.masterPort = integerVariable("MASTER_PORT", 0, true);
  if (env.masterPort < 1 || env.masterPort > 65535)
    throw RuntimeError(
        fmt::format("MASTER_PORT={} is not a TCP port", env.masterPort));
  env.useAgentStore = stringVariable("TORCHELASTIC_USE_AGENT_STORE") == "True";
  env.interface = stringVariable("GLOO_SOCKET_IFNAME");
  return env;
}

std::unique_ptr<RankGroup> joinRankGroup(const LaunchEnvironment &launch,
                                         std::chrono::milliseconds timeout) {
  C10dFunctions fns = loadC10d();
  mbt_pg_options options{};
  options.rank = launch.rank;
  options.world_size = launch.worldSize;
  options.master_addr = launch.masterAddr.c_str();
  options.master_port = launch.masterPort;
  options.use_agent_store = launch.useAgentStore ? 1 : 0;
  options.interface =
      launch.interface.empty() ? nullptr : launch.interface.c_str();
  options.timeout_ms = timeout.count();
  char error[1024] = {};
  mbt_pg *group = fns.open(&options, error, sizeof error);
  if (!group)
    throw RuntimeError(fmt::format(
        "rank {} of {} could not join the others at {}:{}: {}", launch.rank,
        launch.worldSize, launch.masterAddr, launch.masterPort, error));
  return std::make_unique<C10dRankGroup>(fns, group, launch);
}

} // namespace runtime
} // namespace mbt
