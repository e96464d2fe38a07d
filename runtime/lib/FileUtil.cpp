//===- FileUtil.cpp - POSIX file helpers with clear errors ----------------===//

#include "mbt/runtime/FileUtil.h"

#include "mbt/runtime/Error.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <unistd.h>

namespace mbt {
namespace runtime {

namespace fs = std::filesystem;

namespace {
[[noreturn]] void fail(const std::string &what, const std::string &path,
                       int code) {
  throw RuntimeError(
      fmt::format("{} '{}': {}", what, path, std::strerror(code)));
}

/// Writes all of `contents` to `fd`, retrying short writes and EINTR.
bool writeAll(int fd, const std::string &contents) {
  const char *data = contents.data();
  size_t left = contents.size();
  while (left > 0) {
    ssize_t wrote = ::write(fd, data, left);
    if (wrote < 0) {
      if (errno == EINTR)
        continue;
      return false;
    }
    data += wrote;
    left -= static_cast<size_t>(wrote);
  }
  return true;
}

/// The directory holding `path`: "." for a bare name.
std::string parentOf(const std::string &path) {
  std::string parent = fs::path(path).parent_path().string();
  return parent.empty() ? "." : parent;
}
} // namespace

void createDirectories(const std::string &dir) {
  if (dir.empty())
    throw RuntimeError("cannot create directory: empty path");
  // One level at a time (not fs::create_directories): the error names the
  // level that failed.
  std::error_code error;
  fs::file_status status = fs::status(dir, error);
  if (fs::exists(status)) {
    if (!fs::is_directory(status))
      fail("cannot create directory", dir, ENOTDIR);
    return;
  }
  std::string parent = parentOf(dir);
  if (parent != dir && parent != "." && parent != "/")
    createDirectories(parent);
  // An existing directory is not an error; neither is EEXIST (a racing
  // creator).
  if (!fs::create_directory(dir, error) && error &&
      error != std::errc::file_exists)
    fail("cannot create directory", dir, error.value());
}

void writeFileAtomically(const std::string &path, const std::string &contents) {
  std::string temp = path + ".tmp";
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0)
    fail("cannot write", temp, errno);
  std::error_code ignored; // removing the temp file is best effort
  if (!writeAll(fd, contents) || ::fsync(fd) != 0) {
    int code = errno;
    ::close(fd);
    fs::remove(temp, ignored);
    fail("cannot write", temp, code);
  }
  if (::close(fd) != 0) {
    int code = errno;
    fs::remove(temp, ignored);
    fail("cannot write", temp, code);
  }
  std::error_code error;
  fs::rename(temp, path, error);
  if (error) {
    fs::remove(temp, ignored);
    fail(fmt::format("cannot rename '{}' to", temp), path, error.value());
  }
  // Best effort: make the rename itself durable.
  int dirFd =
      ::open(parentOf(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirFd >= 0) {
    ::fsync(dirFd);
    ::close(dirFd);
  }
}

namespace {
std::string readWholeFile(const std::string &path, bool missingIsEmpty) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT && missingIsEmpty)
      return "";
    fail(errno == ENOENT ? "cannot open" : "cannot read", path, errno);
  }
  std::string bytes;
  char buffer[1 << 16];
  for (;;) {
    ssize_t got = ::read(fd, buffer, sizeof(buffer));
    if (got < 0) {
      if (errno == EINTR)
        continue;
      int code = errno;
      ::close(fd);
      fail("cannot read", path, code);
    }
    if (got == 0)
      break;
    bytes.append(buffer, static_cast<size_t>(got));
  }
  ::close(fd);
  return bytes;
}
} // namespace

std::string readFileBytes(const std::string &path) {
  return readWholeFile(path, /*missingIsEmpty=*/true);
}

std::string readInputFile(const std::string &path) {
  return readWholeFile(path, /*missingIsEmpty=*/false);
}

void appendToFile(const std::string &path, const std::string &contents) {
  int fd =
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
  if (fd < 0)
    fail("cannot open", path, errno);
  if (!writeAll(fd, contents)) {
    int code = errno;
    ::close(fd);
    fail("cannot append to", path, code);
  }
  if (::close(fd) != 0)
    fail("cannot append to", path, errno);
}

} // namespace runtime
} // namespace mbt
