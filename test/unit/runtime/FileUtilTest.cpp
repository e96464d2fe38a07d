//===- FileUtilTest.cpp - Results-directory file helpers ------------------===//

#include "mbt/runtime/FileUtil.h"
#include "mbt/runtime/Error.h"

#include "TestUtil.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>

using namespace mbt::runtime;
using namespace mbt::test;
using ::testing::AllOf;
using ::testing::HasSubstr;

namespace {

bool exists(const std::string &path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0;
}

TEST(FileUtilTest, AtomicWriteReplacesContentAndLeavesNoTempFile) {
  TempDir dir;
  std::string path = dir.file("leaderboard.json");
  writeFileAtomically(path, "first");
  writeFileAtomically(path, "second");
  EXPECT_EQ(readWholeFile(path), "second");
  EXPECT_FALSE(exists(path + ".tmp"));
}

TEST(FileUtilTest, AtomicWriteIntoMissingDirectoryNamesTheTempPath) {
  TempDir dir;
  std::string path = dir.file("missing/leaderboard.json");
  EXPECT_THAT(errorOf([&] { writeFileAtomically(path, "x"); }),
              AllOf(HasSubstr(path + ".tmp"), HasSubstr("No such file")));
}

TEST(FileUtilTest, CreatesNestedDirectoriesAndAcceptsExistingOnes) {
  TempDir dir;
  std::string nested = dir.file("a/b/c");
  createDirectories(nested);
  createDirectories(nested);
  struct stat info;
  ASSERT_EQ(::stat(nested.c_str(), &info), 0);
  EXPECT_TRUE(S_ISDIR(info.st_mode));
}

TEST(FileUtilTest, DirectoryUnderAFileFailsNamingIt) {
  TempDir dir;
  writeFileAtomically(dir.file("plain"), "x");
  std::string bad = dir.file("plain/results");
  EXPECT_THAT(errorOf([&] { createDirectories(bad); }),
              AllOf(HasSubstr("cannot create directory"),
                    HasSubstr(dir.file("plain"))));
}

TEST(FileUtilTest, AppendCreatesThenAppends) {
  TempDir dir;
  appendToFile(dir.file("log"), "1");
  appendToFile(dir.file("log"), "2");
  EXPECT_EQ(readWholeFile(dir.file("log")), "12");
}

} // namespace
