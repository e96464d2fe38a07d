//===- CompileSpec.h - A spec's text to an artifact ------------*- C++ -*-===//
//
// What `mbtc spec.mbt -o model.so` does, for callers that are not the
// command line (the Python module): the spec's text in, the artifact and
// its manifest out, the diagnostics as mbtc prints them in a string. The
// types are plain C++ so that a caller built with exceptions and RTTI
// (pybind11) needs no MLIR header.
//
//===----------------------------------------------------------------------===//
#ifndef MBT_COMPILER_DRIVER_COMPILESPEC_H
#define MBT_COMPILER_DRIVER_COMPILESPEC_H

#include <string>
#include <vector>

namespace mbt {

/// A spec to compile for a CPU (this host's by default).
struct SpecCompileRequest {
  /// The spec's text.
  std::string source;
  /// Its file name: the diagnostics name it, and the files it imports or
  /// names (data, checkpoints) resolve against its folder. A name without
  /// a folder resolves against the working directory.
  std::string name = "<string>";
  /// Where the artifact (a shared library) goes; its folder must exist.
  std::string libraryPath;
  /// The standard library's folder (empty: findStdlibDir's choice).
  std::string stdlibDir;
  /// Sweep settings that replace the spec's, each `KEY = VALUE` as the
  /// sweep would hold it (FrontendOptions::sweepSettings; mbtc --set).
  std::vector<std::string> sweepSettings;
  /// The compiled loops on all cores with OpenMP (where libomp was found
  /// when mbt was built).
  bool parallel = true;
  /// The CPU the artifact's code is for, by LLVM's name, with its own
  /// features (mbtc --mcpu; empty: this host's CPU and features). The
  /// attention kernels follow it (cpuHasAttentionKernelCode).
  std::string cpu;
};

struct SpecCompileResult {
  bool ok = false;
  /// Errors, warnings and notes with their locations and source lines.
  std::string diagnostics;
  /// The artifact's manifest (JSON), when ok.
  std::string manifest;
};

/// Compiles `request.source` into the artifact at `request.libraryPath`.
/// Never throws; a bad spec gives ok = false and its diagnostics.
SpecCompileResult compileSpec(const SpecCompileRequest &request);

} // namespace mbt

#endif // MBT_COMPILER_DRIVER_COMPILESPEC_H
