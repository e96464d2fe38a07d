//===- DeviceCollectives.h - Sums across ranks on the GPUs ------*- C++ -*-===//
//
// A run with its data across ranks sums every step's gradients over the
// ranks. On CPUs the sum goes through Gloo (RankGroup); with a
// --target=cuda artifact it stays on the GPUs: NCCL, from the plugin
// libmbt_runtime_nccl.so (lib/distributed/NcclCommunicator.cpp), which the
// runtime loads only for such a run. Without the plugin the gradients go
// through the host and Gloo instead (a warning says so).
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_DISTRIBUTED_DEVICECOLLECTIVES_H
#define MBT_RUNTIME_DISTRIBUTED_DEVICECOLLECTIVES_H

#include "mbt/common/Abi.h"

#include <cstddef>
#include <memory>
#include <string>

namespace mbt {
namespace runtime {

class RankGroup;

class DeviceCollectives {
public:
  virtual ~DeviceCollectives() = default;
  /// data[0, count) (device memory of `type`) becomes sum_r f_r * data_r
  /// over the ranks, f_r each rank's `fraction`. Throws RuntimeError
  /// naming `what` if the collective fails.
  virtual void scaledSum(void *data, size_t count, DType type, double fraction,
                         const std::string &what) = 0;
  /// data[0, count) on every rank becomes rank 0's.
  virtual void broadcastFromRank0(void *data, size_t count, DType type,
                                  const std::string &what) = 0;
};

/// NCCL's communicator over the ranks of `group`, on GPU `device` (rank 0's
/// unique id reaches the others through `group`). Null, with `why`, when
/// libmbt_runtime_nccl.so cannot be loaded; throws RuntimeError when NCCL
/// fails to join.
std::unique_ptr<DeviceCollectives> joinNccl(RankGroup &group, int device,
                                            std::string &why);

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_DISTRIBUTED_DEVICECOLLECTIVES_H
