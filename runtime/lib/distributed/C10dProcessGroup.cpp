//===- C10dProcessGroup.cpp - A run's ranks through c10d and Gloo ---------===//
//
// What torch.distributed.init_process_group("gloo", init_method="env://")
// builds, in C++: a TCPStore at MASTER_ADDR:MASTER_PORT (served by rank 0,
// or by torchrun's agent), under a prefix of mbt's own so that it shares
// the agent's store with nothing, and a ProcessGroupGloo on it whose
// collectives fail after the timeout instead of waiting forever.
//
//===----------------------------------------------------------------------===//

#include "ProcessGroupAbi.h"

#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

struct mbt_pg {
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> group;
  int64_t rank = 0, worldSize = 1;
};

namespace {

/// The first line of `e`'s message (c10::Error's what() carries a
/// backtrace after it) into error[0, size).
void report(const std::exception &e, char *error, size_t size) {
  std::snprintf(error, size, "%s", e.what());
  if (char *newline = std::strchr(error, '\n'))
    *newline = '\0';
}

template <typename F> int guarded(char *error, size_t size, F &&body) {
  try {
    body();
    return 0;
  } catch (const std::exception &e) {
    report(e, error, size);
    return 1;
  }
}

std::shared_ptr<gloo::transport::Device>
glooDevice(const mbt_pg_options &options) {
  if (options.interface && *options.interface)
    return c10d::ProcessGroupGloo::createDeviceForInterface(options.interface);
  return c10d::ProcessGroupGloo::createDefaultDevice();
}

} // namespace

extern "C" mbt_pg *mbt_pg_open(const mbt_pg_options *options, char *error,
                               size_t errorSize) {
  auto group = std::make_unique<mbt_pg>();
  int failed = guarded(error, errorSize, [&] {
    auto timeout = std::chrono::milliseconds(options->timeout_ms);
    c10d::TCPStoreOptions storeOptions;
    storeOptions.port = static_cast<uint16_t>(options->master_port);
    storeOptions.isServer = !options->use_agent_store && options->rank == 0;
    storeOptions.numWorkers = options->world_size;
    storeOptions.waitWorkers = false;
    storeOptions.timeout = timeout;
    auto tcp =
        c10::make_intrusive<c10d::TCPStore>(options->master_addr, storeOptions);
    group->store = c10::make_intrusive<c10d::PrefixStore>("mbt", tcp);
    auto glooOptions = c10d::ProcessGroupGloo::Options::create(timeout);
    glooOptions->devices.push_back(glooDevice(*options));
    group->group = c10::make_intrusive<c10d::ProcessGroupGloo>(
        group->store, options->rank, options->world_size, glooOptions);
    group->rank = options->rank;
    group->worldSize = options->world_size;
  });
  return failed ? nullptr : group.release();
}

extern "C" int mbt_pg_all_gather(mbt_pg *group, const void *bytes, size_t size,
                                 void *out, char *error, size_t errorSize) {
  return guarded(error, errorSize, [&] {
    auto options = at::TensorOptions().dtype(at::kByte);
    at::Tensor mine =
        at::from_blob(const_cast<void *>(bytes), {int64_t(size)}, options)
            .clone();
    at::Tensor all = at::empty({group->worldSize * int64_t(size)}, options);
    std::vector<at::Tensor> parts;
    for (int64_t r = 0; r < group->worldSize; ++r)
      parts.push_back(all.narrow(0, r * int64_t(size), int64_t(size)));
    std::vector<std::vector<at::Tensor>> outputs{parts};
    std::vector<at::Tensor> inputs{mine};
    group->group->allgather(outputs, inputs)->wait();
    for (int64_t r = 0; r < group->worldSize; ++r)
      std::memcpy(static_cast<char *>(out) + r * size, outputs[0][r].data_ptr(),
                  size);
  });
}

extern "C" int mbt_pg_all_reduce_sum(mbt_pg *group, void *data, size_t count,
                                     int32_t dtype, char *error,
                                     size_t errorSize) {
  return guarded(error, errorSize, [&] {
    auto options =
        at::TensorOptions().dtype(dtype == 1 ? at::kDouble : at::kFloat);
    std::vector<at::Tensor> tensors{
        at::from_blob(data, {int64_t(count)}, options)};
    group->group->allreduce(tensors)->wait();
  });
}

extern "C" int mbt_pg_store_set(mbt_pg *group, const char *key,
                                const char *value, char *error,
                                size_t errorSize) {
  return guarded(error, errorSize, [&] {
    group->store->set(key, std::vector<uint8_t>(value, value + strlen(value)));
  });
}

extern "C" int mbt_pg_store_check(mbt_pg *group, const char *const *keys,
                                  size_t count, int32_t *present, char *error,
                                  size_t errorSize) {
  return guarded(error, errorSize, [&] {
    for (size_t i = 0; i < count; ++i)
      present[i] = group->store->check({keys[i]}) ? 1 : 0;
  });
}

extern "C" void mbt_pg_close(mbt_pg *group) { delete group; }
