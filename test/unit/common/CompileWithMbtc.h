//===- CompileWithMbtc.h - compile specs in tests through mbtc --*- C++ -*-===//
//
// Tests that check the compiler end to end build their artifacts with the
// real driver. The including target defines MBTC_PATH (the mbtc binary)
// and MBT_TEST_TMP (where specs and artifacts go). MBT_TEST_MBTC_FLAGS in
// the environment adds flags, e.g. --blas=false to test the loop path.
//
//===----------------------------------------------------------------------===//
#ifndef MBT_TEST_UNIT_COMMON_COMPILEWITHMBTC_H
#define MBT_TEST_UNIT_COMMON_COMPILEWITHMBTC_H

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <functional>
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

/// Compiles the spec or module at `path` into testFileStem(NAME).so.
inline std::string compileFile(const std::string &name,
                               const std::string &path) {
  const char *flags = std::getenv("MBT_TEST_MBTC_FLAGS");
  std::string out = testFileStem(name) + ".so";
  std::string command = std::string(MBTC_PATH) + " " + path + " -o " + out +
                        (flags ? std::string(" ") + flags : "");
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  return out;
}

/// Writes `source` to MBT_TEST_TMP/NAME.mbt and compiles it.
inline std::string compileSpec(const std::string &name,
                               const std::string &source) {
  std::string path = testFileStem(name) + ".mbt";
  std::ofstream(path) << source;
  return compileFile(name, path);
}

} // namespace mbt::test

#endif
