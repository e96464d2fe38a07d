//===- RankGroup.h - The processes of a run over several ranks --*- C++ -*-===//
//
// A run launched by torchrun (or srun around it) is one process per rank.
// A RankGroup joins them as torch.distributed.init_process_group("env://")
// does: rendezvous at MASTER_ADDR:MASTER_PORT through c10d's TCPStore,
// collectives through Gloo (lib/distributed/C10dProcessGroup.cpp, a plugin
// loaded only by a run of several ranks). A collective that fails (a rank
// died) or waits past the timeout (a rank hangs) throws RuntimeError naming
// the ranks that are gone, found through the store: no rank waits forever.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_DISTRIBUTED_RANKGROUP_H
#define MBT_RUNTIME_DISTRIBUTED_RANKGROUP_H

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mbt {
namespace runtime {

/// Where this process stands in its launch, from torchrun's environment:
/// RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT,
/// TORCHELASTIC_USE_AGENT_STORE and Gloo's GLOO_SOCKET_IFNAME.
struct LaunchEnvironment {
  int64_t rank = 0, worldSize = 1, localRank = 0;
  std::string masterAddr;
  int64_t masterPort = 0;
  /// The launcher's agent serves the store (torchrun); else rank 0 does.
  bool useAgentStore = false;
  /// The interface Gloo binds, or "": the host name's.
  std::string interface;

  bool distributed() const { return worldSize > 1; }
};

/// The launch this process belongs to: one rank of one when WORLD_SIZE is
/// unset. Throws RuntimeError for a partial or malformed environment (a
/// WORLD_SIZE without RANK, a rank outside it, a missing MASTER_ADDR).
LaunchEnvironment readLaunchEnvironment();

class RankGroup {
public:
  virtual ~RankGroup() = default;
  virtual int64_t rank() const = 0;
  virtual int64_t size() const = 0;
  /// Every rank's `bytes` (their sizes may differ), in rank order. `what`
  /// says what is gathered, for the error if a rank is lost.
  virtual std::vector<std::string> allGather(const std::string &bytes,
                                             const std::string &what) = 0;
  /// data[0, count) becomes its sum over the ranks.
  virtual void allReduceSum(double *data, size_t count,
                            const std::string &what) = 0;
  virtual void allReduceSum(float *data, size_t count,
                            const std::string &what) = 0;

  /// The collectives this rank took part in so far, and the seconds they
  /// took (waiting for the others included): what running on several
  /// processes costs this one.
  int64_t collectives() const { return collectiveCount; }
  double collectiveSeconds() const { return collectiveTime; }

protected:
  int64_t collectiveCount = 0;
  double collectiveTime = 0;
};

/// The ranks of a run of one process: every collective gives back what it
/// was given (a one-rank NCCL check, tests of the paths across ranks).
class SingleRankGroup final : public RankGroup {
public:
  int64_t rank() const override { return 0; }
  int64_t size() const override { return 1; }
  std::vector<std::string> allGather(const std::string &bytes,
                                     const std::string &) override {
    return {bytes};
  }
  void allReduceSum(double *, size_t, const std::string &) override {}
  void allReduceSum(float *, size_t, const std::string &) override {}
};

/// Joins the ranks of `launch` (the c10d plugin, libmbt_runtime_c10d.so);
/// the rendezvous and every collective give up after `timeout`. Throws
/// RuntimeError if the plugin does not load or the rendezvous fails.
std::unique_ptr<RankGroup> joinRankGroup(const LaunchEnvironment &launch,
                                         std::chrono::milliseconds timeout);

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_DISTRIBUTED_RANKGROUP_H
