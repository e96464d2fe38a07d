//===- mbt-nccl-check.cpp - NCCL's sums of data across ranks on one GPU ---===//
//
// Checks libmbt_runtime_nccl.so where a GPU is: a communicator of one
// rank (NCCL's K = 1) sums a buffer of the size of MLP-S's gradients at
// N = 64 with each rank's fraction, as a run with its data across ranks
// does every step, and broadcasts it; both must give the exact values
// (a fraction of 1/4 scales a float exactly), and the sum is timed.
//
//   mbt-nccl-check [--count N] [--repeat R]
//
//===----------------------------------------------------------------------===//

#include "mbt/runtime/DeviceMemory.h"
#include "mbt/runtime/Error.h"
#include "mbt/runtime/distributed/DeviceCollectives.h"
#include "mbt/runtime/distributed/RankGroup.h"

#include "ToolOptions.h"

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <vector>

using namespace mbt;
using namespace mbt::runtime;

namespace {

/// Sums `count` values of T on the device with a fraction of 1/4 and
/// broadcasts them; true if both give the exact values. Prints the sum's
/// time, best of `repeat`.
template <typename T>
bool check(DeviceMemory &device, DeviceCollectives &sums, size_t count,
           int64_t repeat, DType type) {
  std::vector<T> values(count), back(count);
  for (size_t i = 0; i < count; ++i)
    values[i] = static_cast<T>(static_cast<double>(i % 1000) - 500.25);
  void *data = device.allocate(sizeof(T) * count);
  double best = 1e30;
  bool exact = true;
  for (int64_t r = 0; r < repeat; ++r) {
    device.upload(data, values.data(), sizeof(T) * count);
    auto start = std::chrono::steady_clock::now();
    sums.scaledSum(data, count, type, 0.25, "the check's sum");
    best = std::min(best, std::chrono::duration<double>(
                              std::chrono::steady_clock::now() - start)
                              .count());
    sums.broadcastFromRank0(data, count, type, "the check's broadcast");
    device.download(back.data(), data, sizeof(T) * count);
    for (size_t i = 0; i < count; ++i)
      exact = exact && back[i] == values[i] * T(0.25);
  }
  std::printf("%s: %zu values (%.1f MB), sum times 1/4 and broadcast %s; "
              "sum %.3f ms (best of %lld)\n",
              dtypeName(type), count, sizeof(T) * count / 1e6,
              exact ? "exact" : "WRONG", 1e3 * best, (long long)repeat);
  return exact;
}

} // namespace

int main(int argc, char **argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  // MLP-S (784-128-10) has 101,770 parameters: N = 64 of them.
  int64_t count = 64 * 101770, repeat = 5;
  CLI::App app("Sums on one GPU through libmbt_runtime_nccl.so (NCCL, one "
               "rank), as a run with its data across ranks does",
               "mbt-nccl-check");
  tools::addCount(app, "--count", count,
                  "Values to sum (default 6513280: MLP-S at N = 64)");
  tools::addCount(app, "--repeat", repeat, "Times to sum (default 5)");
  if (std::optional<int> status =
          tools::parseCommandLine(app, argc, argv, "mbt-nccl-check"))
    return *status;
  try {
    std::unique_ptr<DeviceMemory> device = openCudaDeviceMemory();
    SingleRankGroup group;
    std::string why;
    std::unique_ptr<DeviceCollectives> sums = joinNccl(group, 0, why);
    if (!sums)
      throw RuntimeError("no NCCL: " + why);
    std::printf("device: %s, NCCL of one rank\n", device->name().c_str());
    bool ok = check<float>(*device, *sums, static_cast<size_t>(count), repeat,
                           DType::F32) &&
              check<double>(*device, *sums, static_cast<size_t>(count), repeat,
                            DType::F64);
    return ok ? 0 : 1;
  } catch (const std::exception &error) {
    std::cerr << "mbt-nccl-check: error: " << error.what() << "\n";
    return 1;
  }
}
