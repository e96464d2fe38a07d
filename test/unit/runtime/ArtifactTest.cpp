//===- ArtifactTest.cpp - Loading artifacts and rejecting bad ones --------===//

#include "mbt/runtime/Artifact.h"
#include "mbt/runtime/CpuFeatures.h"
#include "mbt/runtime/Error.h"

#include "TestUtil.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

using namespace mbt;
using namespace mbt::runtime;
using namespace mbt::test;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

TEST(ArtifactTest, LoadsFakeArtifactAndParsesItsManifest) {
  Artifact artifact = Artifact::load(fakeArtifactPath("fake_m4"));
  const Manifest &m = artifact.manifest();
  EXPECT_EQ(m.models, 4);
  EXPECT_EQ(m.paramCount, 16 * 4 + 4);
  EXPECT_EQ(m.hyperNames, (std::vector<std::string>{"lr", "momentum"}));
  EXPECT_EQ(m.seeds, (std::vector<uint64_t>{10, 11, 12, 13}));
  EXPECT_NE(artifact.trainStep(), nullptr);
  EXPECT_NE(artifact.evalStep(), nullptr);
  EXPECT_NE(artifact.trainStepWorkspace(), nullptr);
  EXPECT_NE(artifact.evalStepWorkspace(), nullptr);
  EXPECT_NE(artifact.manifestJson().find("\"softmax\""), std::string::npos);
}

TEST(ArtifactTest, MovedArtifactKeepsItsFunctions) {
  Artifact first = Artifact::load(fakeArtifactPath("fake_m1_model1"));
  Artifact second = std::move(first);
  EXPECT_EQ(second.manifest().models, 1);
  EXPECT_NE(second.trainStep(), nullptr);
}

TEST(ArtifactTest, EntryPointsOfAnotherFloatTypeAreRefused) {
  Artifact artifact = Artifact::load(fakeArtifactPath("fake_m4"));
  EXPECT_EQ(artifact.dtype(), DType::F32);
  EXPECT_THAT(errorOf([&] { artifact.trainStep<double>(); }),
              AllOf(HasSubstr("computes in f32"),
                    HasSubstr("mbt_train_step was called with f64 buffers")));
  EXPECT_THAT(errorOf([&] { artifact.evalStep<double>(); }),
              HasSubstr("mbt_eval_step"));
}

TEST(ArtifactTest, MissingFileNamesThePath) {
  TempDir dir;
  std::string path = dir.file("model.so");
  EXPECT_THAT(errorOf([&] { Artifact::load(path); }),
              AllOf(HasSubstr("cannot load artifact '" + path + "'"),
                    HasSubstr("No such file")));
}

TEST(ArtifactTest, FileThatIsNotALibraryReportsDlerror) {
  TempDir dir;
  std::string path = dir.file("model.so");
  std::ofstream(path) << std::string(256, 'x'); // long enough to be parsed
  EXPECT_THAT(errorOf([&] { Artifact::load(path); }),
              AllOf(HasSubstr("cannot load artifact '" + path + "'"),
                    HasSubstr("ELF")));
}

TEST(ArtifactTest, MissingSymbolIsNamed) {
  std::string path = fakeArtifactPath("fake_no_eval");
  EXPECT_THAT(errorOf([&] { Artifact::load(path); }),
              AllOf(HasSubstr(path), HasSubstr("not an mbt artifact"),
                    HasSubstr("'_mlir_ciface_mbt_eval_step'")));
}

TEST(ArtifactTest, MissingWorkspaceFunctionIsNamed) {
  std::string path = fakeArtifactPath("fake_no_workspace");
  EXPECT_THAT(
      errorOf([&] { Artifact::load(path); }),
      AllOf(HasSubstr(path), HasSubstr("not an mbt artifact"),
            HasSubstr("'_mlir_ciface_mbt_train_step_workspace_bytes'")));
}

TEST(ArtifactTest, AnArtifactForAnotherCpuIsRefused) {
  // Its manifest needs a feature this CPU lacks (one no CPU has), and
  // mbtc --mcpu's (a CPU this one may not be): refused before any step
  // runs, naming it. Catches the check skipped (the step would die of
  // SIGILL) or a message without the feature.
  std::string path = fakeArtifactPath("fake_cpu_unknown");
  EXPECT_THAT(errorOf([&] { Artifact::load(path); }),
              AllOf(HasSubstr(path), HasSubstr("the CPU 'imaginary'"),
                    HasSubstr("no-such-feature"), HasSubstr("--mcpu")));
  // The features this CPU has are not named.
  if (mbt::runtime::cpuHasFeature("avx").value_or(false))
    EXPECT_THAT(errorOf([&] { Artifact::load(path); }), Not(HasSubstr("avx")));
}

TEST(ArtifactTest, UnknownAbiVersionIsRefused) {
  std::string path = fakeArtifactPath("fake_abi99");
  EXPECT_THAT(errorOf([&] { Artifact::load(path); }),
              AllOf(HasSubstr(path), HasSubstr("ABI version 99"),
                    HasSubstr("supports " + std::to_string(kAbiVersion))));
}

} // namespace
