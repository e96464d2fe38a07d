//===- DeviceCollectives.cpp - NCCL through libmbt_runtime_nccl -----------===//
#include "mbt/runtime/distributed/DeviceCollectives.h"

#include "NcclAbi.h"
#include "mbt/runtime/Error.h"
#include "mbt/runtime/Plugin.h"
#include "mbt/runtime/distributed/RankGroup.h"

#include <fmt/format.h>

#include <dlfcn.h>

#include <type_traits>

namespace mbt {
namespace runtime {

namespace {
constexpr const char *kNcclLibrary = "libmbt_runtime_nccl.so";

struct NcclFunctions {
  mbt_nccl_unique_id_fn uniqueId = nullptr;
  mbt_nccl_open_fn open = nullptr;
  mbt_nccl_scaled_sum_fn scaledSum = nullptr;
  mbt_nccl_broadcast_fn broadcast = nullptr;
  mbt_nccl_close_fn close = nullptr;
};

int32_t dtypeCode(DType type) { return type == DType::F64 ? 1 : 0; }

class NcclCollectives final : public DeviceCollectives {
public:
  NcclCollectives(NcclFunctions fns, mbt_nccl *comm) : fns(fns), comm(comm) {}
  ~NcclCollectives() override { fns.close(comm); }

  void scaledSum(void *data, size_t count, DType type, double fraction,
                 const std::string &what) override {
    check(fns.scaledSum(comm, data, count, dtypeCode(type), fraction, error,
                        sizeof error),
          what);
  }
  void broadcastFromRank0(void *data, size_t count, DType type,
                          const std::string &what) override {
    check(fns.broadcast(comm, data, count, dtypeCode(type), 0, error,
                        sizeof error),
          what);
  }

private:
  void check(int failed, const std::string &what) {
    if (failed)
      throw RuntimeError(
          fmt::format("{} failed on the GPUs (NCCL): {}", what, error));
  }
  NcclFunctions fns;
  mbt_nccl *comm;
  char error[1024] = {};
};
} // namespace

std::unique_ptr<DeviceCollectives> joinNccl(RankGroup &group, int device,
                                            std::string &why) {
  void *handle = openPlugin(kNcclLibrary, RTLD_LOCAL, why);
  if (!handle)
    return nullptr;
  NcclFunctions f;
  auto symbol = [&](auto &fn, const char *name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
        dlsym(handle, name));
    if (!fn)
      throw RuntimeError(fmt::format("{} lacks {}", kNcclLibrary, name));
  };
  symbol(f.uniqueId, "mbt_nccl_unique_id");
  symbol(f.open, "mbt_nccl_open");
  symbol(f.scaledSum, "mbt_nccl_scaled_sum");
  symbol(f.broadcast, "mbt_nccl_broadcast");
  symbol(f.close, "mbt_nccl_close");
  // Rank 0's id, to every rank (each rank's problem too, so that none
  // waits in NCCL for a rank that could not make or read it).
  char error[1024] = {};
  std::string id(MBT_NCCL_ID_BYTES, '\0');
  std::string mine;
  if (group.rank() == 0 && f.uniqueId(id.data(), error, sizeof error))
    mine = std::string("!") + error;
  else if (group.rank() == 0)
    mine = id;
  std::vector<std::string> ids = group.allGather(mine, "NCCL's unique id");
  if (ids[0].size() != MBT_NCCL_ID_BYTES)
    throw RuntimeError(
        "rank 0 could not start NCCL: " +
        (ids[0].empty() ? std::string("no id") : ids[0].substr(1)));
  mbt_nccl *comm = f.open(ids[0].data(), group.rank(), group.size(), device,
                          error, sizeof error);
  if (!comm)
    throw RuntimeError(fmt::format("rank {} could not join NCCL on GPU {}: {}",
                                   group.rank(), device, error));
  return std::make_unique<NcclCollectives>(f, comm);
}

} // namespace runtime
} // namespace mbt
