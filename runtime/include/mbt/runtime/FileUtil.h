//===- FileUtil.h - Results-directory file helpers --------------*- C++ -*-===//
//
// Results must never be seen half-written (a killed run, a reader polling
// leaderboard.json), so whole-file outputs go through writeFileAtomically:
// write NAME.tmp, fsync, rename over NAME.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_FILEUTIL_H
#define MBT_RUNTIME_FILEUTIL_H

#include <string>

namespace mbt {
namespace runtime {

/// Creates `dir` and its missing parents (like mkdir -p). Throws
/// RuntimeError naming the directory that could not be created and why.
void createDirectories(const std::string &dir);

/// Replaces `path` with `contents` atomically: PATH.tmp is written and
/// fsync'ed, then renamed over PATH, and the directory is fsync'ed so the
/// rename survives a crash. Throws RuntimeError naming the path.
void writeFileAtomically(const std::string &path, const std::string &contents);

/// The bytes of `path`; "" if it does not exist. Throws RuntimeError naming
/// the path if it exists but cannot be read.
std::string readFileBytes(const std::string &path);

/// Like readFileBytes, but a missing file is an error too ("cannot open
/// 'PATH': No such file or directory"): for inputs, which must exist.
std::string readInputFile(const std::string &path);

/// Appends `contents` to `path` (created if missing) and flushes it to the
/// OS. Throws RuntimeError naming the path.
void appendToFile(const std::string &path, const std::string &contents);

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_FILEUTIL_H
