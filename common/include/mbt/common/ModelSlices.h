//===- ModelSlices.h - The models each rank of a run trains -----*- C++ -*-===//
//
// A run over K processes with its models across ranks (docs/distributed.md)
// gives rank r a contiguous slice of the sweep's N models, as balanced as
// can be, and rank r loads the artifact mbtc compiled for that slice, which
// lies beside the whole sweep's. The compiler (mbtc --ranks) and the
// runtime (mbt-run under torchrun) must agree on both: they are here.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_COMMON_MODELSLICES_H
#define MBT_COMMON_MODELSLICES_H

#include <cstdint>
#include <string>

namespace mbt {

/// Models [first, first + count) of a sweep.
struct ModelSlice {
  int64_t first = 0, count = 0;
};

/// Rank `rank`'s slice of `models` over `ranks` (0 <= rank < ranks <=
/// models): the first models % ranks ranks take one model more.
inline ModelSlice modelSliceOf(int64_t models, int64_t ranks, int64_t rank) {
  int64_t base = models / ranks, extra = models % ranks;
  return {rank * base + (rank < extra ? rank : extra),
          base + (rank < extra ? 1 : 0)};
}

/// Where rank `rank` of `ranks` finds its slice's artifact, beside the whole
/// sweep's `artifact`: DIR/model.so -> DIR/model.rank1-of-4.so.
inline std::string rankArtifactPath(const std::string &artifact, int64_t rank,
                                    int64_t ranks) {
  std::string suffix =
      ".rank" + std::to_string(rank) + "-of-" + std::to_string(ranks);
  size_t slash = artifact.find_last_of('/');
  size_t dot = artifact.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash))
    return artifact + suffix;
  return artifact.substr(0, dot) + suffix + artifact.substr(dot);
}

} // namespace mbt

#endif // MBT_COMMON_MODELSLICES_H
