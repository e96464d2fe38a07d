//===- CpuFeatures.h - whether this CPU runs an artifact's code -*- C++ -*-===//
//
// An artifact's manifest lists the instruction set extensions its code may
// use (kCheckedCpuFeatures, "cpu" in docs/abi.md); the runtime checks them
// against this CPU before it calls the artifact, so an artifact compiled
// for another CPU is refused with a message instead of dying of SIGILL.
//
//===----------------------------------------------------------------------===//
#ifndef MBT_RUNTIME_CPUFEATURES_H
#define MBT_RUNTIME_CPUFEATURES_H

#include <optional>
#include <string>
#include <vector>

namespace mbt {
namespace runtime {

/// Whether this CPU has `feature` (a name of kCheckedCpuFeatures); nullopt
/// for a name this runtime cannot check (or on a CPU other than x86-64).
std::optional<bool> cpuHasFeature(const std::string &feature);

/// The features of `needed` this CPU lacks or this runtime cannot check,
/// in `needed`'s order.
std::vector<std::string>
missingCpuFeatures(const std::vector<std::string> &needed);

} // namespace runtime
} // namespace mbt

#endif
