//===- CompileWithMbtc.h - compile specs in tests through mbtc --*- C++ -*-===//
//
// Tests that check the compiler end to end build their artifacts with the
// real driver. The including target defines MBTC_PATH (the mbtc binary)
// and MBT_TEST_TMP (where specs and artifacts go). MBT_TEST_MBTC_FLAGS in
// the environment adds flags, e.g. --blas=false to test the loop path.
//
// MBT_TEST_REUSE_ARTIFACTS=1 reuses an artifact that an earlier run compiled
// from the same source, flags, standard library and mbtc binary (a stamp
// beside the .so records them). tools/dev/test-blas-kernels.sh sets it when
// it reruns the numeric suites under other BLAS kernels: the artifacts do
// not depend on the kernel, and compiling is most of those suites' time.
//
//===----------------------------------------------------------------------===//
#ifndef MBT_TEST_UNIT_COMMON_COMPILEWITHMBTC_H
#define MBT_TEST_UNIT_COMMON_COMPILEWITHMBTC_H

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

namespace mbt::test {

/// MBT_TEST_TMP/NAME, or with extra flags MBT_TEST_TMP/NAME-<hash of the
/// flags>, so that a run with flags and one without can go on at once.
inline std::string testFileStem(const std::string &name) {
  const char *flags = std::getenv("MBT_TEST_MBTC_FLAGS");
  std::string stem = std::string(MBT_TEST_TMP) + "/" + name;
  if (flags && *flags)
    stem += "-" + std::to_string(std::hash<std::string>{}(flags));
  return stem;
}

/// What an artifact was compiled from: the mbtc binary (path, size and
/// modification time), the standard library's files (mbtc reads them from
/// MBT_STDLIB_PATH or the source tree at every compile), the command line
/// and the source's bytes.
inline std::string compileStamp(const std::string &command,
                                const std::string &path) {
  namespace fs = std::filesystem;
  std::ostringstream stamp;
  struct stat mbtc{};
  if (::stat(MBTC_PATH, &mbtc) == 0)
    stamp << MBTC_PATH << " " << mbtc.st_size << " " << mbtc.st_mtime << "\n";
  const char *stdlibPath = std::getenv("MBT_STDLIB_PATH");
  fs::path stdlib = stdlibPath ? stdlibPath : MBT_TEST_STDLIB_DIR;
  std::error_code error;
  for (const fs::directory_entry &entry :
       fs::recursive_directory_iterator(stdlib, error)) {
    if (!entry.is_regular_file())
      continue;
    std::ifstream file(entry.path(), std::ios::binary);
    stamp << entry.path().string() << "\n" << file.rdbuf() << "\n";
  }
  std::ifstream source(path, std::ios::binary);
  stamp << command << "\n" << source.rdbuf();
  return stamp.str();
}

/// Whether `file` exists and holds exactly `contents`.
inline bool fileHolds(const std::string &file, const std::string &contents) {
  std::ifstream in(file, std::ios::binary);
  if (!in)
    return false;
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str() == contents;
}

/// `file` + ".<this process's id>.tmp": where a file is written before it
/// is renamed into place. ctest runs a suite's tests as processes in
/// parallel, and two of them may compile the same spec: each writes its
/// own file and the rename replaces the old one at once, so no process
/// reads (or dlopens) one half written.
inline std::string privateTemporary(const std::string &file) {
  return file + "." + std::to_string(::getpid()) + ".tmp";
}

/// Compiles the spec or module at `path` into testFileStem(NAME).so, with
/// mbtc's `extraFlags` besides MBT_TEST_MBTC_FLAGS.
inline std::string compileFile(const std::string &name, const std::string &path,
                               const std::string &extraFlags = "") {
  const char *flags = std::getenv("MBT_TEST_MBTC_FLAGS");
  std::string out = testFileStem(name) + ".so";
  std::string options = (flags ? std::string(" ") + flags : "") +
                        (extraFlags.empty() ? "" : " " + extraFlags);
  std::string command =
      std::string(MBTC_PATH) + " " + path + " -o " + out + options;
  std::string stamp = compileStamp(command, path), stampFile = out + ".stamp";
  const char *reuse = std::getenv("MBT_TEST_REUSE_ARTIFACTS");
  if (reuse && std::string(reuse) == "1" && fileHolds(stampFile, stamp))
    return out;
  std::remove(stampFile.c_str());
  std::string written = privateTemporary(out);
  int status = std::system(
      (std::string(MBTC_PATH) + " " + path + " -o " + written + options)
          .c_str());
  EXPECT_EQ(status, 0) << command;
  if (status == 0) {
    EXPECT_EQ(std::rename(written.c_str(), out.c_str()), 0) << out;
    std::ofstream(stampFile, std::ios::binary) << stamp;
  }
  return out;
}

/// Writes `source` to MBT_TEST_TMP/NAME.mbt and compiles it.
inline std::string compileSpec(const std::string &name,
                               const std::string &source,
                               const std::string &extraFlags = "") {
  std::string path = testFileStem(name) + ".mbt";
  std::string written = privateTemporary(path);
  std::ofstream(written) << source;
  EXPECT_EQ(std::rename(written.c_str(), path.c_str()), 0) << path;
  return compileFile(name, path, extraFlags);
}

/// The sweep of the gradient and reference tests: one model, plain SGD with
/// a learning rate of 1 (a step moves it by its gradient), on `data`;
/// `settings` adds lines.
inline std::string oneModelSgdSweep(const std::string &data,
                                    const std::string &settings = "") {
  return "sweep {\n  models = 1\n  optim  = sgd(lr = 1.0)\n  data   = " + data +
         "\n" + settings + "}\n";
}

} // namespace mbt::test

#endif
