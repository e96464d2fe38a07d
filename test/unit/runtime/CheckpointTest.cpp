//===- CheckpointTest.cpp - A run's state: format, restore, resume --------===//
//
// The checkpoint file round-trips; a truncated, corrupt or foreign one is
// refused with the file and the reason; a Trainer restored from a
// checkpoint goes on exactly as the one that wrote it; run() with
// `resume` finishes a run stopped mid-epoch with the uninterrupted run's
// parameters, metrics and leaderboard. (Killing a real process mid-step
// and resuming it is test/unit/resume.)
//
//===----------------------------------------------------------------------===//
#include "mbt/runtime/Checkpoint.h"
#include "mbt/runtime/Error.h"
#include "mbt/runtime/FileUtil.h"
#include "mbt/runtime/Trainer.h"

#include "TestUtil.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

using namespace mbt::runtime;
using namespace mbt::test;
using ::testing::HasSubstr;

namespace {

RunCheckpoint sample() {
  RunCheckpoint c;
  c.manifestDigest = 0x1234567890abcdefull;
  c.models = 2;
  c.paramCount = 3;
  c.trainableCount = 2; // one column frozen: the state covers two
  c.bufferCount = 2;
  c.slots = 1;
  c.outputs = 2;
  c.elementBytes = 4;
  c.step = 17;
  c.epochsStarted = 3;
  c.batchInEpoch = 5;
  c.runningSums = {1.5, 2.5, -3.0, 0.25};
  c.runningWeight = 160;
  c.divergedStep = {0, 9};
  c.stoppedStep = {12, 0};
  c.stopReason = {"early stopping", ""};
  c.bestValidationLoss = {0.5, std::numeric_limits<double>::infinity()};
  c.evaluationsSinceBest = {3, 0};
  c.metricsBytes = 4242;
  c.params.assign(2 * 3 * 4, 0);
  c.state.assign(1 * 2 * 2 * 4, 0);
  for (size_t i = 0; i < c.params.size(); ++i)
    c.params[i] = static_cast<uint8_t>(i * 7);
  for (size_t i = 0; i < c.state.size(); ++i)
    c.state[i] = static_cast<uint8_t>(255 - i);
  c.buffers.assign(2 * 2 * 4, 0);
  for (size_t i = 0; i < c.buffers.size(); ++i)
    c.buffers[i] = static_cast<uint8_t>(100 + i);
  return c;
}

TEST(CheckpointTest, RoundTripsEveryField) {
  RunCheckpoint c = sample();
  RunCheckpoint back = parseCheckpoint(serializeCheckpoint(c), "x");
  EXPECT_EQ(back.manifestDigest, c.manifestDigest);
  EXPECT_EQ(back.models, 2);
  EXPECT_EQ(back.paramCount, 3);
  EXPECT_EQ(back.trainableCount, 2);
  EXPECT_EQ(back.bufferCount, 2);
  EXPECT_EQ(back.slots, 1);
  EXPECT_EQ(back.outputs, 2);
  EXPECT_EQ(back.elementBytes, 4);
  EXPECT_EQ(back.step, 17);
  EXPECT_EQ(back.epochsStarted, 3);
  EXPECT_EQ(back.batchInEpoch, 5);
  EXPECT_EQ(back.runningSums, c.runningSums);
  EXPECT_EQ(back.runningWeight, 160);
  EXPECT_EQ(back.divergedStep, c.divergedStep);
  EXPECT_EQ(back.stoppedStep, c.stoppedStep);
  EXPECT_EQ(back.stopReason, c.stopReason);
  EXPECT_EQ(back.bestValidationLoss, c.bestValidationLoss);
  EXPECT_EQ(back.evaluationsSinceBest, c.evaluationsSinceBest);
  EXPECT_EQ(back.metricsBytes, 4242);
  EXPECT_EQ(back.params, c.params);
  EXPECT_EQ(back.state, c.state);
  EXPECT_EQ(back.buffers, c.buffers);
}

TEST(CheckpointTest, DamagedFilesAreNamedWithTheReason) {
  std::string bytes = serializeCheckpoint(sample());
  EXPECT_THAT(
      errorOf([] { parseCheckpoint("hello", "run/checkpoint.mbtrun"); }),
      HasSubstr("checkpoint 'run/checkpoint.mbtrun': not an mbt run "
                "checkpoint (bad magic)"));
  // Truncated anywhere: the checksum no longer matches.
  for (size_t cut : {size_t(20), bytes.size() / 2, bytes.size() - 1})
    EXPECT_THAT(errorOf([&] { parseCheckpoint(bytes.substr(0, cut), "c"); }),
                HasSubstr("truncated"))
        << "cut at " << cut;
  // One flipped bit in the parameters.
  std::string flipped = bytes;
  flipped[bytes.size() - 10] ^= 0x10;
  EXPECT_THAT(errorOf([&] { parseCheckpoint(flipped, "c"); }),
              HasSubstr("checksum mismatch: the file is truncated or corrupt"));
  // Another version.
  std::string other = bytes;
  other[8] = 9;
  EXPECT_THAT(errorOf([&] { parseCheckpoint(other, "c"); }),
              HasSubstr("version 9, this runtime reads 5"));
  EXPECT_THAT(
      errorOf([] { readCheckpoint("/nonexistent/checkpoint.mbtrun"); }),
      HasSubstr("cannot read checkpoint '/nonexistent/checkpoint.mbtrun'"));
}

class TrainerCheckpointTest : public ::testing::Test {
protected:
  // 200 samples, batch 32: 7 steps per epoch.
  Dataset train = makeSyntheticDataset(200, 16, 4, 1, "synthetic/train");
  Dataset test = makeSyntheticDataset(90, 16, 4, 2, "synthetic/test");

  static TrainOptions silent(const std::string &outDir = "") {
    return silentOptions(outDir);
  }
};

TEST_F(TrainerCheckpointTest, RestoredTrainerGoesOnExactly) {
  Artifact artifact = Artifact::load(fakeArtifactPath("fake_m4"));
  Trainer straight(artifact, train, test, silent());
  straight.runSteps(19);

  Trainer first(artifact, train, test, silent());
  first.runSteps(10); // mid-epoch (7 steps per epoch)
  RunCheckpoint saved =
      parseCheckpoint(serializeCheckpoint(first.checkpoint()), "c");
  Trainer second(artifact, train, test, silent());
  second.restore(saved);
  EXPECT_EQ(second.globalStep(), 10);
  second.runSteps(9);
  for (int64_t model = 0; model < 4; ++model)
    EXPECT_EQ(second.modelParams(model), straight.modelParams(model))
        << "model " << model;
  EXPECT_EQ(second.divergedSteps(), straight.divergedSteps());
  EXPECT_EQ(second.checkpoint().state, straight.checkpoint().state);
}

TEST_F(TrainerCheckpointTest, ForeignCheckpointIsRefused) {
  Artifact m4 = Artifact::load(fakeArtifactPath("fake_m4"));
  Artifact m1 = Artifact::load(fakeArtifactPath("fake_m1_model1"));
  Trainer writer(m4, train, test, silent());
  RunCheckpoint saved = writer.checkpoint();
  Trainer reader(m1, train, test, silent());
  EXPECT_THAT(errorOf([&] { reader.restore(saved); }),
              HasSubstr("the checkpoint does not belong to artifact"));
}

TEST_F(TrainerCheckpointTest, ResumedRunEndsLikeTheUninterruptedOne) {
  Artifact artifact = Artifact::load(fakeArtifactPath("fake_m4"));
  TempDir dir;
  TrainOptions whole = silent(dir.file("whole"));
  whole.epochs = 3;
  whole.logEvery = 0; // the stopped run below logs no curve points
  Trainer reference(artifact, train, test, whole);
  Leaderboard expected = reference.run();

  // The stopped run: its first epoch through run() (metrics and the
  // epoch's checkpoint written), then 3 more steps and a checkpoint of
  // them, then a metrics line appended after that checkpoint, as a run
  // killed just then would leave its directory.
  std::string out = dir.file("stopped");
  TrainOptions part = silent(out);
  part.epochs = 1;
  part.logEvery = 0;
  {
    Trainer firstEpoch(artifact, train, test, part);
    firstEpoch.run();
    Trainer stopped(artifact, train, test, silent());
    stopped.restore(readCheckpoint(out + "/" + kCheckpointFile));
    stopped.runSteps(3);
    int64_t logged =
        static_cast<int64_t>(readWholeFile(out + "/metrics.jsonl").size());
    writeFileAtomically(out + "/" + kCheckpointFile,
                        serializeCheckpoint(stopped.checkpoint(logged)));
    appendToFile(out + "/metrics.jsonl", "{\"junk\": 1}\n");
  }
  part.epochs = 3;
  TrainOptions resume = part;
  resume.resume = true;
  Trainer resumed(artifact, train, test, resume);
  Leaderboard board = resumed.run();
  EXPECT_EQ(resumed.globalStep(), reference.globalStep());
  for (int64_t model = 0; model < 4; ++model)
    EXPECT_EQ(resumed.modelParams(model), reference.modelParams(model))
        << "model " << model;
  EXPECT_EQ(readWholeFile(out + "/metrics.jsonl"),
            readWholeFile(dir.file("whole") + "/metrics.jsonl"));
  EXPECT_EQ(readWholeFile(out + "/leaderboard.json"),
            readWholeFile(dir.file("whole") + "/leaderboard.json"));
  // The final checkpoints match byte for byte (state, cursor, sums).
  EXPECT_TRUE(readWholeFile(out + "/" + kCheckpointFile) ==
              readWholeFile(dir.file("whole") + "/" + kCheckpointFile));
}

TEST_F(TrainerCheckpointTest, ResumeWithoutCheckpointSaysSo) {
  Artifact artifact = Artifact::load(fakeArtifactPath("fake_m4"));
  TempDir dir;
  TrainOptions options = silent(dir.file("empty"));
  options.resume = true;
  Trainer trainer(artifact, train, test, options);
  EXPECT_THAT(errorOf([&] { trainer.run(); }),
              HasSubstr("cannot read checkpoint '" + dir.file("empty") +
                        "/checkpoint.mbtrun'"));
}

TEST(Checkpoint, RankFileNamesTellTheirNumberOfRanks) {
  EXPECT_EQ(rankCheckpointFile(1, 4), "checkpoint.rank1-of-4.mbtrun");
  EXPECT_EQ(ranksOfCheckpointFile(rankCheckpointFile(1, 4)), 4);
  EXPECT_EQ(ranksOfCheckpointFile(rankCheckpointFile(0, 16)), 16);
  // The one before it, the one-process checkpoint, and near misses.
  EXPECT_EQ(ranksOfCheckpointFile("checkpoint.rank1-of-4.mbtrun.previous"), 0);
  EXPECT_EQ(ranksOfCheckpointFile(kCheckpointFile), 0);
  EXPECT_EQ(ranksOfCheckpointFile("checkpoint.rank01-of-4.mbtrun"), 0);
  EXPECT_EQ(ranksOfCheckpointFile("checkpoint.rank1-of-4.mbtru"), 0);
}

} // namespace
