//===- TestUtil.h - Shared helpers of the runtime unit tests ----*- C++ -*-===//
//
// Temporary directories, small synthetic data sets, and the location of the
// fake artifacts built next to the tests (FakeArtifact.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef MBT_TEST_UNIT_RUNTIME_TESTUTIL_H
#define MBT_TEST_UNIT_RUNTIME_TESTUTIL_H

#include "mbt/runtime/Dataset.h"
#include "mbt/runtime/Error.h"
#include "mbt/runtime/Trainer.h"

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>
#include <unistd.h>

namespace mbt {
namespace test {

/// A fresh directory under $TMPDIR (or /tmp), removed with its contents
/// when the object dies.
class TempDir {
public:
  TempDir() {
    const char *base = std::getenv("TMPDIR");
    std::string pattern =
        std::string(base && *base ? base : "/tmp") + "/mbt-rt-test-XXXXXX";
    if (!::mkdtemp(pattern.data()))
      throw std::runtime_error("mkdtemp failed");
    dir = pattern;
  }
  ~TempDir() {
    std::string command = "rm -rf '" + dir + "'";
    if (std::system(command.c_str()) != 0) {
      // Leaving a temp dir behind is not worth failing a test over.
    }
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;

  const std::string &path() const { return dir; }
  std::string file(const std::string &name) const { return dir + "/" + name; }

private:
  std::string dir;
};

inline std::string readWholeFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// n samples of F features in [0, 1) and labels in [0, C): the label is
/// mostly determined by which feature block is brightest, so a linear model
/// can learn it. Deterministic (a fixed LCG).
inline runtime::Dataset makeSyntheticDataset(int64_t n, int64_t f, int64_t c,
                                             uint32_t seed,
                                             const std::string &name) {
  runtime::Dataset data;
  data.name = name;
  data.count = n;
  data.numFeatures = f;
  data.numClasses = c;
  data.x.resize(n * f);
  data.y.resize(n);
  uint32_t state = seed * 2654435761u + 1;
  auto next = [&] {
    state = state * 1664525u + 1013904223u;
    return static_cast<float>(state >> 8) / 16777216.0f;
  };
  for (int64_t i = 0; i < n; ++i) {
    int32_t label = static_cast<int32_t>(i % c);
    data.y[i] = label;
    for (int64_t j = 0; j < f; ++j) {
      float value = 0.5f * next();
      if (j % c == label)
        value += 0.5f;
      data.x[i * f + j] = value;
    }
  }
  return data;
}

/// The message of the RuntimeError `body` throws, or "(no error)".
inline std::string errorOf(const std::function<void()> &body) {
  try {
    body();
  } catch (const runtime::RuntimeError &error) {
    return error.what();
  }
  return "(no error)";
}

/// Path of a fake artifact variant built by this directory's CMakeLists.
/// Trainer options that print nothing (no progress, no table), writing
/// results to `outDir` (none when empty).
inline runtime::TrainOptions silentOptions(const std::string &outDir = "") {
  runtime::TrainOptions options;
  options.outDir = outDir;
  options.quiet = true;
  options.progress = nullptr;
  options.report = nullptr;
  return options;
}

inline std::string fakeArtifactPath(const std::string &name) {
  return std::string(MBT_TEST_ARTIFACT_DIR) + "/" + name + ".so";
}

} // namespace test
} // namespace mbt

#endif // MBT_TEST_UNIT_RUNTIME_TESTUTIL_H
