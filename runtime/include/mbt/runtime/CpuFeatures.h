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

#include <iosfwd>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mbt {
namespace runtime {

/// Each of kCheckedCpuFeatures (its name) and whether a CPU has it.
using CpuFeatureTable = std::vector<std::pair<const char *, bool>>;

/// This CPU's features, as the runtime checks them: by GCC's
/// __builtin_cpu_supports where the runtime was built with GCC (which also
/// asks whether the OS keeps the registers), else by /proc/cpuinfo's flags
/// (cpuFeaturesFromCpuinfo); empty on a CPU other than x86-64.
const CpuFeatureTable &hostCpuFeatures();

/// The features a /proc/cpuinfo text's first `flags` line names, by the
/// kernel's flag of each (CpuFeatures.def); all false where it has none.
CpuFeatureTable cpuFeaturesFromCpuinfo(std::istream &cpuinfo);

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
