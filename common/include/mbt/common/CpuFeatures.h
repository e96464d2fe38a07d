//===- CpuFeatures.h - the CPU features an artifact records -----*- C++ -*-===//
//
// The x86 instruction set extensions that an artifact's generated code
// may use and that a runtime can check before it calls the artifact: the
// compiler records those its target CPU has in the manifest ("cpu"), the
// runtime refuses an artifact that needs one this CPU lacks (rather than
// dying of SIGILL in its first step). Each name is LLVM's feature name
// and GCC's __builtin_cpu_supports name alike (CpuFeatures.def, with the
// kernel's flag for each).
//
//===----------------------------------------------------------------------===//
#ifndef MBT_COMMON_CPUFEATURES_H
#define MBT_COMMON_CPUFEATURES_H

namespace mbt {

constexpr const char *kCheckedCpuFeatures[] = {
#define MBT_CPU_FEATURE(NAME, FLAG) NAME,
#include "mbt/common/CpuFeatures.def"
#undef MBT_CPU_FEATURE
};

} // namespace mbt

#endif
