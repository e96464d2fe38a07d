//===- TrainerTest.cpp - Training a model batch end to end ----------------===//
//
// Uses the fake softmax-regression artifacts on a small synthetic data set:
// fake_m4 holds 4 models (model 3 diverges on purpose), fake_m1_model1 holds
// only model 1 of the same table. Their agreement is the batch-vs-alone
// equivalence the whole project promises, here for the runtime's part (init,
// data order, buffers, kernel).
//
//===----------------------------------------------------------------------===//

#include "mbt/runtime/Trainer.h"
#include "mbt/runtime/Error.h"
#include "mbt/runtime/distributed/DeviceCollectives.h"
#include "mbt/runtime/distributed/SweepRanks.h"

#include "TestUtil.h"

#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <list>
#include <memory>
#include <sstream>
#include <vector>

using namespace mbt::runtime;
using namespace mbt::test;
using ::testing::HasSubstr;

namespace {

class TrainerTest : public ::testing::Test {
protected:
  // 200 samples, batch 32: 7 steps per epoch, the last one of 8 samples.
  Dataset train = makeSyntheticDataset(200, 16, 4, 1, "synthetic/train");
  Dataset test = makeSyntheticDataset(90, 16, 4, 2, "synthetic/test");

  static TrainOptions silent(const std::string &outDir = "") {
    return silentOptions(outDir);
  }
};

/// A test hook exported by the fake artifact (not part of the ABI).
template <typename T>
T fakeHook(const std::string &artifact, const char *name) {
  void *handle = dlopen(artifact.c_str(), RTLD_NOW | RTLD_NOLOAD);
  EXPECT_NE(handle, nullptr);
  auto fn = reinterpret_cast<T (*)()>(dlsym(handle, name));
  EXPECT_NE(fn, nullptr);
  T value = fn();
  dlclose(handle);
  return value;
}

TEST_F(TrainerTest, ModelInBatchEndsWithTheParamsItGetsWhenTrainedAlone) {
  Artifact batch = Artifact::load(fakeArtifactPath("fake_m4"));
  Artifact alone = Artifact::load(fakeArtifactPath("fake_m1_model1"));
  Trainer batchTrainer(batch, train, test, silent());
  Trainer aloneTrainer(alone, train, test, silent());
  // Initial weights already agree (keyed by seed, not position).
  EXPECT_EQ(batchTrainer.modelParams(1), aloneTrainer.modelParams(0));
  // 30 steps cross four epoch boundaries and several short last batches.
  batchTrainer.runSteps(30);
  aloneTrainer.runSteps(30);
  EXPECT_EQ(batchTrainer.globalStep(), 30);
  std::vector<double> inBatch = batchTrainer.modelParams(1);
  std::vector<double> byItself = aloneTrainer.modelParams(0);
  ASSERT_EQ(inBatch.size(), byItself.size());
  for (size_t i = 0; i < inBatch.size(); ++i)
    ASSERT_EQ(inBatch[i], byItself[i]) << "param element " << i;
  EXPECT_NE(inBatch, batchTrainer.modelParams(0)); // models do differ
}

TEST_F(TrainerTest, StepIsOneBasedAndShortLastBatchKeepsItsSize) {
  std::string path = fakeArtifactPath("fake_m4");
  Artifact artifact = Artifact::load(path);
  Trainer trainer(artifact, train, test, silent());
  trainer.runSteps(1);
  EXPECT_EQ(fakeHook<float>(path, "fake_artifact_last_step"), 1.0f);
  EXPECT_EQ(fakeHook<int64_t>(path, "fake_artifact_last_batch"), 32);
  trainer.runSteps(6);
  EXPECT_EQ(fakeHook<float>(path, "fake_artifact_last_step"), 7.0f);
  EXPECT_EQ(fakeHook<int64_t>(path, "fake_artifact_last_batch"), 200 - 6 * 32);
}

TEST_F(TrainerTest, PassesTheWorkspaceTheArtifactAskedFor) {
  // The fake's train step computes its gradients in the workspace and
  // refuses one smaller than its workspace function asked for.
  std::string path = fakeArtifactPath("fake_m4");
  Artifact artifact = Artifact::load(path);
  Trainer trainer(artifact, train, test, silent());
  trainer.runSteps(7); // a full batch, then the short last one
  EXPECT_FALSE(fakeHook<bool>(path, "fake_artifact_workspace_too_small"));
}

/// A device whose memory is separate host memory: an upload or a download
/// the trainer forgets leaves the artifact reading stale data, or the
/// trainer reading stale results.
class HostBackedDevice : public DeviceMemory {
public:
  explicit HostBackedDevice(int *opened) { ++*opened; }
  void *allocate(size_t bytes) override {
    blocks.emplace_back(bytes, 0x7f); // garbage until uploaded
    return blocks.back().data();
  }
  void upload(void *device, const void *host, size_t bytes) override {
    std::memcpy(device, host, bytes);
  }
  void download(void *host, const void *device, size_t bytes) override {
    std::memcpy(host, device, bytes);
  }
  std::string takeError() override { return ""; }
  std::string name() const override { return "host-backed test device"; }

private:
  std::list<std::vector<unsigned char>> blocks;
};

/// The sums on a device of one rank (the host-backed test device's memory
/// is the host's): times the share's fraction; the broadcast is the
/// identity.
class OneRankDeviceSums final : public DeviceCollectives {
public:
  explicit OneRankDeviceSums(int *calls) : calls(calls) {}
  void scaledSum(void *data, size_t count, mbt::DType type, double fraction,
                 const std::string &) override {
    ASSERT_EQ(type, mbt::DType::F32);
    auto *values = static_cast<float *>(data);
    for (size_t i = 0; i < count; ++i)
      values[i] *= static_cast<float>(fraction);
    ++*calls;
  }
  void broadcastFromRank0(void *, size_t, mbt::DType,
                          const std::string &) override {}

private:
  int *calls;
};

// With its data across ranks (here one), a step is the grad step, the
// weighted sum and the optimizer step. On one rank the share is the whole
// step (its weight 1), so the run must be the plain train step's, bit for
// bit, divergence included; on a device too, with the gradients summed
// through the host (no NCCL) or on the device. Catches a device path that
// skips the upload of the summed gradients or the step numbers, one that
// sums on the host what stays on the device, a share's weight that is not
// the step's, and a divergence found a step late.
TEST_F(TrainerTest, DataAcrossRanksOnADeviceMatchesTheHost) {
  Artifact host = Artifact::load(fakeArtifactPath("fake_m4_grad"));
  Artifact onDevice = Artifact::load(fakeArtifactPath("fake_m4_grad_device"));
  ASSERT_TRUE(host.manifest().gradStep);
  auto dataOptions = [&](const Artifact &artifact) {
    TrainOptions options = silent();
    options.ranks = std::make_shared<SweepRanks>(
        std::make_shared<SingleRankGroup>(), artifact.manifest(),
        SweepRanks::DataAcrossRanks{});
    return options;
  };
  int opened = 0, deviceSums = 0;
  auto deviceOptions = [&](bool sumsOnDevice) {
    TrainOptions options = dataOptions(onDevice);
    options.openDevice = [&] {
      return std::unique_ptr<DeviceMemory>(new HostBackedDevice(&opened));
    };
    options.openDeviceSums = [&, sumsOnDevice] {
      return sumsOnDevice ? std::make_unique<OneRankDeviceSums>(&deviceSums)
                          : nullptr;
    };
    return options;
  };
  Trainer hostTrainer(host, train, test, dataOptions(host));
  Trainer throughHost(onDevice, train, test, deviceOptions(false));
  Trainer onTheDevice(onDevice, train, test, deviceOptions(true));
  Trainer plain(host, train, test, silent());
  EXPECT_EQ(opened, 2);
  for (Trainer *trainer : {&hostTrainer, &throughHost, &onTheDevice, &plain})
    trainer->runSteps(7);
  EXPECT_EQ(deviceSums, 7);
  for (int64_t model = 0; model < 4; ++model) {
    std::vector<double> a = plain.modelParams(model);
    for (Trainer *trainer : {&hostTrainer, &throughHost, &onTheDevice}) {
      std::vector<double> b = trainer->modelParams(model);
      EXPECT_EQ(std::memcmp(a.data(), b.data(), sizeof(double) * a.size()), 0)
          << "model " << model;
      EXPECT_EQ(trainer->divergedSteps(), plain.divergedSteps());
    }
  }
  EXPECT_GT(plain.divergedSteps()[3], 0);
}

TEST_F(TrainerTest, DeviceArtifactTrainsExactlyLikeTheHostOne) {
  // The same fake artifact, once with host buffers and once mirrored on a
  // device ("device": "cuda" in its manifest): 7 steps (a short last batch
  // included) and an evaluation must give the same bits.
  Artifact host = Artifact::load(fakeArtifactPath("fake_m4"));
  Artifact onDevice = Artifact::load(fakeArtifactPath("fake_m4_device"));
  ASSERT_EQ(onDevice.manifest().device, Manifest::Device::CUDA);
  int opened = 0;
  TrainOptions options = silent();
  options.openDevice = [&] {
    return std::unique_ptr<DeviceMemory>(new HostBackedDevice(&opened));
  };
  Trainer hostTrainer(host, train, test, silent());
  Trainer deviceTrainer(onDevice, train, test, options);
  EXPECT_EQ(opened, 1);
  EXPECT_EQ(deviceTrainer.deviceName(), "host-backed test device");
  EXPECT_EQ(hostTrainer.deviceName(), "cpu");
  hostTrainer.runSteps(7);
  deviceTrainer.runSteps(7);
  // Same bits, NaN included (model 3 diverges on purpose).
  auto same = [](const std::vector<double> &a, const std::vector<double> &b) {
    return a.size() == b.size() &&
           std::memcmp(a.data(), b.data(), sizeof(double) * a.size()) == 0;
  };
  for (int64_t model = 0; model < 4; ++model)
    EXPECT_TRUE(
        same(deviceTrainer.modelParams(model), hostTrainer.modelParams(model)))
        << "model " << model;
  auto deviceOut = deviceTrainer.lastTrainOutputs(),
       hostOut = hostTrainer.lastTrainOutputs();
  auto deviceEval = deviceTrainer.evaluate(test),
       hostEval = hostTrainer.evaluate(test);
  for (int64_t model = 0; model < 4; ++model) {
    EXPECT_TRUE(same(deviceOut[model], hostOut[model])) << "model " << model;
    EXPECT_TRUE(same(deviceEval[model], hostEval[model])) << "model " << model;
  }
  // Training moved the parameters away from their start.
  Trainer fresh(host, train, test, silent());
  EXPECT_NE(fresh.modelParams(0), hostTrainer.modelParams(0));
}

/// A host-backed device that "captures" graphs: it keeps the work to
/// replay it (the trainer's closure holds no reference into its stack), or
/// refuses to capture, as a device without graph support would.
class GraphDevice : public HostBackedDevice {
public:
  GraphDevice(int *opened, bool capture)
      : HostBackedDevice(opened), capture(capture) {}
  void *captureGraph(const std::function<void()> &issue,
                     std::string &why) override {
    ++attempts;
    if (!capture) {
      why = "no graphs here";
      return nullptr;
    }
    graphs.push_back(issue);
    return reinterpret_cast<void *>(graphs.size());
  }
  void launchGraph(void *graph) override {
    ++launches;
    graphs[reinterpret_cast<size_t>(graph) - 1]();
  }
  void destroyGraph(void *) override { ++destroyed; }

  bool capture;
  std::vector<std::function<void()>> graphs;
  int attempts = 0, launches = 0;
  static inline int destroyed = 0;
};

// Graph capture and replay: 14 steps of 200 samples in batches of 32 are
// two shapes (12 full batches, 2 of 8). Each shape's first step runs
// directly, its second is captured, the later ones replay its graph; the
// parameters are the host run's bits. A device that cannot capture warns
// once and runs every step directly, with the same bits.
TEST_F(TrainerTest, DeviceStepsAreCapturedOncePerShapeAndReplayed) {
  Artifact host = Artifact::load(fakeArtifactPath("fake_m4"));
  Artifact onDevice = Artifact::load(fakeArtifactPath("fake_m4_device"));
  Trainer hostTrainer(host, train, test, silent());
  hostTrainer.runSteps(14);
  for (bool capture : {true, false}) {
    int opened = 0;
    GraphDevice *device = nullptr;
    std::ostringstream notes;
    TrainOptions options = silent();
    options.progress = &notes;
    options.openDevice = [&] {
      device = new GraphDevice(&opened, capture);
      return std::unique_ptr<DeviceMemory>(device);
    };
    GraphDevice::destroyed = 0;
    {
      Trainer trainer(onDevice, train, test, options);
      trainer.runSteps(14);
      for (int64_t model = 0; model < 4; ++model) {
        std::vector<double> a = trainer.modelParams(model),
                            b = hostTrainer.modelParams(model);
        EXPECT_EQ(std::memcmp(a.data(), b.data(), sizeof(double) * a.size()), 0)
            << "model " << model << (capture ? " (graphs)" : " (no graphs)");
      }
      if (capture) {
        EXPECT_EQ(device->attempts, 2);
        EXPECT_EQ(device->graphs.size(), 2u);
        // 12 + 2 steps: 2 direct, 2 captured and launched, 10 replays.
        EXPECT_EQ(device->launches, 12);
        EXPECT_EQ(notes.str(), "");
      } else {
        EXPECT_EQ(device->attempts, 1);
        EXPECT_EQ(device->launches, 0);
        EXPECT_THAT(notes.str(), HasSubstr("could not be captured as a graph "
                                           "(no graphs here)"));
      }
    }
    EXPECT_EQ(GraphDevice::destroyed, capture ? 2 : 0);
  }
}

TEST_F(TrainerTest, TrainingLowersTestLossOfHealthyModels) {
  Artifact artifact = Artifact::load(fakeArtifactPath("fake_m4"));
  Trainer trainer(artifact, train, test, silent());
  std::vector<std::vector<double>> before = trainer.evaluate(test);
  trainer.runSteps(21);
  std::vector<std::vector<double>> after = trainer.evaluate(test);
  for (int model = 0; model < 3; ++model) {
    EXPECT_LT(after[model][0], before[model][0]) << "model " << model;
    EXPECT_GT(after[model][1], 0.5) << "model " << model;
  }
  EXPECT_TRUE(trainer.diverged(3));
  EXPECT_FALSE(trainer.diverged(0));
  // Model 3 is frozen at its last finite parameters (ABI 6), at the step
  // it diverged.
  EXPECT_GT(trainer.divergedSteps()[3], 0);
  EXPECT_EQ(trainer.divergedSteps()[0], 0);
  for (double v : trainer.modelParams(3))
    ASSERT_TRUE(std::isfinite(v));
}

TEST_F(TrainerTest, RunWritesMetricsAndLeaderboardWithDivergedModelLast) {
  TempDir dir;
  std::string out = dir.file("results/run1");
  Artifact artifact = Artifact::load(fakeArtifactPath("fake_m4"));
  std::ostringstream report, progress;
  TrainOptions options = silent(out);
  options.epochs = 2;
  options.logEvery = 0; // epoch lines only
  options.quiet = false;
  options.progress = &progress;
  options.progressTty = 0;
  options.report = &report;
  Trainer trainer(artifact, train, test, options);
  Leaderboard board = trainer.run();
  EXPECT_EQ(trainer.globalStep(), 14);

  ASSERT_EQ(board.rows.size(), 4u);
  EXPECT_EQ(board.rows.back().model, 3);
  EXPECT_TRUE(board.rows.back().diverged);
  for (int i = 0; i < 3; ++i)
    EXPECT_FALSE(board.rows[i].diverged);
  EXPECT_THAT(report.str(), HasSubstr("test_acc"));
  EXPECT_THAT(report.str(), HasSubstr("diverged at step "));
  EXPECT_THAT(progress.str(), HasSubstr("epoch 2/2  step 7/7"));
  // The divergence is reported as it happens, once, with its step.
  int64_t divergedStep = trainer.divergedSteps()[3];
  ASSERT_GT(divergedStep, 0);
  std::string warning = "mbt: warning: model 3 diverged at step " +
                        std::to_string(divergedStep) + " ";
  EXPECT_THAT(progress.str(), HasSubstr(warning));
  EXPECT_EQ(progress.str().find(warning), progress.str().rfind(warning));
  EXPECT_EQ(board.rows.back().divergedStep, divergedStep);

  // metrics.jsonl: per epoch, a train and a test line for each model.
  std::ifstream metrics(out + "/metrics.jsonl");
  std::string line;
  std::vector<nlohmann::json> lines;
  while (std::getline(metrics, line))
    lines.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(lines.size(), 2u * 4u * 2u);
  EXPECT_EQ(lines[0]["epoch"], 1);
  EXPECT_EQ(lines[0]["step"], 7);
  EXPECT_EQ(lines[0]["split"], "train");
  EXPECT_EQ(lines[1]["split"], "test");
  EXPECT_EQ(lines.back()["epoch"], 2);
  EXPECT_EQ(lines.back()["model"], 3);
  EXPECT_TRUE(lines[0]["acc"].is_number());

  nlohmann::json json =
      nlohmann::json::parse(readWholeFile(out + "/leaderboard.json"));
  ASSERT_EQ(json.size(), 4u);
  EXPECT_EQ(json[0]["rank"], 1);
  EXPECT_TRUE(json[0].contains("lr"));
  EXPECT_TRUE(json[0].contains("momentum"));
  EXPECT_TRUE(json[0].contains("test_acc"));
  EXPECT_TRUE(json[0].contains("train_loss"));
  EXPECT_EQ(json[3]["model"], 3);
  EXPECT_EQ(json[3]["diverged"], true);
  EXPECT_EQ(json[3]["diverged_at_step"], divergedStep);
  EXPECT_TRUE(json[0]["diverged_at_step"].is_null());
}

// Curve points every logEvery steps, test evaluations every evalEvery, the
// report and the per-model state dicts.
TEST_F(TrainerTest, RunLogsCurvesEvaluatesEveryKStepsAndWritesItsFiles) {
  TempDir dir;
  std::string out = dir.file("run");
  Artifact artifact = Artifact::load(fakeArtifactPath("fake_m4"));
  TrainOptions options = silent(out);
  options.epochs = 2;
  options.logEvery = 3;  // steps 3 and 6 of each 7-step epoch
  options.evalEvery = 4; // steps 4, 8, 12 (none falls on an epoch end)
  Trainer trainer(artifact, train, test, options);
  trainer.run();
  std::ifstream metrics(out + "/metrics.jsonl");
  std::string line;
  std::vector<std::pair<int64_t, std::string>> seen; // model 0's lines
  while (std::getline(metrics, line)) {
    nlohmann::json j = nlohmann::json::parse(line);
    if (j["model"] == 0)
      seen.push_back({j["step"].get<int64_t>(), j["split"].get<std::string>()});
  }
  std::vector<std::pair<int64_t, std::string>> expected = {
      {3, "train"},  {4, "test"},   {6, "train"},  {7, "train"},
      {7, "test"},   {8, "test"},   {10, "train"}, {12, "test"},
      {13, "train"}, {14, "train"}, {14, "test"}};
  EXPECT_EQ(seen, expected);
  std::string report = readWholeFile(out + "/report.html");
  EXPECT_THAT(report, HasSubstr("<h2>loss</h2>"));
  EXPECT_THAT(report, HasSubstr("<h2>acc</h2>"));
  EXPECT_THAT(report, HasSubstr("<title>model 3 (rank 4): lr 3e+38, momentum "
                                "0.9, seed 13: test</title>"));
  for (int model = 0; model < 4; ++model)
    EXPECT_FALSE(
        readWholeFile(out + "/models/model-" + std::to_string(model) + ".pt")
            .empty());
}

// The leaderboard is live: an --eval-every evaluation republishes
// leaderboard.json (and report.html) while the epoch goes on. A progress
// stream that looks at the directory whenever a line arrives sees it after
// step 4's evaluation, before the first epoch ends.
TEST_F(TrainerTest, EvaluationsPublishALiveLeaderboard) {
  TempDir dir;
  std::string out = dir.file("live");
  struct Watcher : std::stringbuf {
    std::string path;
    std::vector<std::string> seen; // the progress line, and the board then
    int sync() override {
      std::string line = str();
      str("");
      if (line.find("epoch 1/1  step 5/7") != std::string::npos)
        seen.push_back(readWholeFile(path));
      return 0;
    }
  } watcher;
  watcher.path = out + "/leaderboard.json";
  std::ostream progress(&watcher);
  Artifact artifact = Artifact::load(fakeArtifactPath("fake_m4"));
  TrainOptions options = silent(out);
  options.epochs = 1;
  options.evalEvery = 4;
  options.quiet = false;
  options.progress = &progress;
  options.progressTty = 0;
  Trainer trainer(artifact, train, test, options);
  trainer.run();
  ASSERT_EQ(watcher.seen.size(), 1u);
  nlohmann::json board = nlohmann::json::parse(watcher.seen[0]);
  ASSERT_EQ(board.size(), 4u);
  EXPECT_EQ(board[0]["rank"], 1);
  EXPECT_TRUE(board[0]["test_acc"].is_number());
}

// Successive halving every 5 steps (one epoch of the 160 samples a 20%
// validation split leaves). Model 3 diverges at step 2 and is out; of the
// 3 left, 1 stops after epoch 1, and 1 of the 2 left after epoch 2. A
// stopped model keeps the parameters it had then.
TEST_F(TrainerTest, SuccessiveHalvingStopsTheWorseHalfAndFreezesIt) {
  Artifact artifact = Artifact::load(fakeArtifactPath("fake_m4_validation"));
  TrainOptions options = silent();
  options.epochs = 3;
  options.halveEvery = 5;
  std::ostringstream notes;
  options.progress = &notes;
  Trainer trainer(artifact, train, test, options);
  Leaderboard board = trainer.run();
  const std::vector<int64_t> &stopped = trainer.stoppedSteps();
  EXPECT_GT(trainer.divergedSteps()[3], 0);
  EXPECT_EQ(stopped[3], 0);
  EXPECT_EQ(std::count(stopped.begin(), stopped.end(), 5), 1);
  EXPECT_EQ(std::count(stopped.begin(), stopped.end(), 10), 1);
  EXPECT_EQ(std::count(stopped.begin(), stopped.end(), 0), 2);
  EXPECT_THAT(notes.str(),
              HasSubstr("stopped at step 5 (successive halving: "
                        "in the worse half of 3 on validation acc)"));
  EXPECT_THAT(notes.str(),
              HasSubstr("stopped at step 10 (successive halving: "
                        "in the worse half of 2 on validation acc)"));
  for (int64_t model = 0; model < 4; ++model) {
    if (!stopped[model])
      continue;
    Trainer upTo(artifact, train, test, silent());
    upTo.runSteps(stopped[model]);
    EXPECT_EQ(trainer.modelParams(model), upTo.modelParams(model))
        << "model " << model;
  }
  bool reported = false;
  for (const ModelResult &row : board.rows)
    reported |= row.stoppedStep == 10 &&
                row.stopReason.find("halving") != std::string::npos;
  EXPECT_TRUE(reported);
  EXPECT_THAT(formatLeaderboard(board),
              HasSubstr("stopped at step 5 (halving)"));
}

// Early stopping with a patience of 1 evaluation: every step evaluates the
// validation split, so a model stops at the first step whose validation
// loss is no lower than its best (or not finite).
TEST_F(TrainerTest, EarlyStoppingStopsAModelWhoseValidationLossStalls) {
  Artifact artifact = Artifact::load(fakeArtifactPath("fake_m4_validation"));
  TrainOptions options = silent();
  options.epochs = 30;
  options.evalEvery = 1;
  options.earlyStopPatience = 1;
  Trainer trainer(artifact, train, test, options);
  trainer.run();
  // Model 3 (lr far too large) has no finite validation loss after its
  // first step: no improvement, so it stops there, before it would
  // diverge. The others' validation losses fall at every one of the 150
  // steps (separable data): they are never stopped. (A finite stall is
  // test/mbtc/early-stopping.mbt.)
  EXPECT_EQ(trainer.stoppedSteps()[3], 1);
  EXPECT_EQ(trainer.divergedSteps()[3], 0);
  int64_t stoppedCount = 0;
  for (int64_t model = 0; model < 4; ++model)
    if (trainer.stoppedSteps()[model]) {
      ++stoppedCount;
      EXPECT_THAT(trainer.stopReasons()[model],
                  HasSubstr("early stopping: no lower validation loss in 1 "
                            "evaluations"));
    }
  EXPECT_EQ(stoppedCount, 1);
}

// A caller that stops every model at the first evaluation (step 3, inside
// epoch 1 of 3) ends the run there: no more steps, the models keep their
// step-3 parameters, and resuming its checkpoint trains nothing more.
// Catches a run that goes on computing models none of which train.
TEST_F(TrainerTest, ARunEndsWhenNoModelTrains) {
  Artifact artifact = Artifact::load(fakeArtifactPath("fake_m4"));
  TempDir dir;
  TrainOptions options = silent(dir.file("run"));
  options.epochs = 3;
  options.evalEvery = 3;
  options.quiet = false;
  std::ostringstream notes;
  options.progress = &notes;
  options.progressTty = 0;
  int64_t evaluations = 0;
  options.onEvaluation = [&](const Evaluation &) {
    ++evaluations;
    return std::vector<int64_t>{0, 1, 2, 3};
  };
  Trainer trainer(artifact, train, test, options);
  Leaderboard board = trainer.run();
  EXPECT_EQ(trainer.globalStep(), 3);
  // The one at step 3, and the epoch's end that reports the stopped run.
  EXPECT_EQ(evaluations, 2);
  EXPECT_THAT(notes.str(),
              HasSubstr("no model trains after step 3; the run ends"));
  Trainer upTo(artifact, train, test, silent());
  upTo.runSteps(3);
  // Model 3 (lr far too large) diverged before, at step 2.
  EXPECT_GT(trainer.divergedSteps()[3], 0);
  for (int64_t model = 0; model < 4; ++model) {
    EXPECT_EQ(trainer.stoppedSteps()[model], model < 3 ? 3 : 0);
    EXPECT_EQ(trainer.modelParams(model), upTo.modelParams(model))
        << "model " << model;
  }
  TrainOptions again = silent(dir.file("run"));
  again.epochs = 3;
  again.resume = true;
  Trainer resumed(artifact, train, test, again);
  resumed.run();
  EXPECT_EQ(resumed.globalStep(), 3);
}

// --max-steps 4 ends the run after step 4, inside epoch 1 of 3, with an
// epoch end's evaluation and checkpoint; a resume with --max-steps 7 goes
// on from there and ends where a straight run of 7 steps does. Catches a
// limit that is ignored, one step too many or too few, and a checkpoint
// that does not resume inside the epoch.
TEST_F(TrainerTest, MaxStepsEndsTheRunAndAResumeGoesOn) {
  Artifact artifact = Artifact::load(fakeArtifactPath("fake_m4"));
  TempDir dir;
  TrainOptions options = silent(dir.file("run"));
  options.epochs = 3;
  options.maxSteps = 4;
  int64_t evaluations = 0;
  options.onEvaluation = [&](const Evaluation &evaluation) {
    ++evaluations;
    EXPECT_EQ(evaluation.step, 4);
    return std::vector<int64_t>{};
  };
  Trainer trainer(artifact, train, test, options);
  trainer.run();
  EXPECT_EQ(trainer.globalStep(), 4);
  EXPECT_EQ(evaluations, 1);
  Trainer straight(artifact, train, test, silent());
  straight.runSteps(7);
  TrainOptions again = silent(dir.file("run"));
  again.epochs = 3;
  again.maxSteps = 7;
  again.resume = true;
  Trainer resumed(artifact, train, test, again);
  resumed.run();
  EXPECT_EQ(resumed.globalStep(), 7);
  for (int64_t model = 0; model < 4; ++model)
    EXPECT_EQ(resumed.modelParams(model), straight.modelParams(model))
        << "model " << model;
}

TEST_F(TrainerTest, StoppingPoliciesNeedAValidationSplit) {
  Artifact artifact = Artifact::load(fakeArtifactPath("fake_m4"));
  TrainOptions options = silent();
  options.halveEvery = 5;
  Trainer trainer(artifact, train, test, options);
  EXPECT_THAT(errorOf([&] { trainer.run(); }),
              HasSubstr("rank the models on a validation split"));
}

TEST_F(TrainerTest, RunWithTheSameInputsIsReproducible) {
  Artifact artifact = Artifact::load(fakeArtifactPath("fake_m4"));
  TrainOptions options = silent();
  options.epochs = 1;
  Trainer first(artifact, train, test, options);
  Trainer second(artifact, train, test, options);
  first.run();
  second.run();
  EXPECT_EQ(first.modelParams(2), second.modelParams(2));
}

TEST_F(TrainerTest, DataWithWrongFeatureCountIsRejected) {
  Artifact artifact = Artifact::load(fakeArtifactPath("fake_m4"));
  Dataset wide = makeSyntheticDataset(10, 17, 4, 3, "wide");
  EXPECT_THAT(errorOf([&] { Trainer(artifact, wide, test, silent()); }),
              HasSubstr("data set 'wide' has 17 features"));
}

TEST_F(TrainerTest, LabelsOutsideTheTargetClassesAreRejected) {
  Artifact artifact = Artifact::load(fakeArtifactPath("fake_m4"));
  Dataset bad = train;
  bad.y[5] = 4;
  EXPECT_THAT(errorOf([&] { Trainer(artifact, bad, test, silent()); }),
              HasSubstr("label 4 of sample 5"));
}

TEST_F(TrainerTest, EmptyTrainingSetIsRejected) {
  Artifact artifact = Artifact::load(fakeArtifactPath("fake_m4"));
  Dataset empty = makeSyntheticDataset(0, 16, 4, 3, "nothing");
  EXPECT_THAT(errorOf([&] { Trainer(artifact, empty, test, silent()); }),
              HasSubstr("training set 'nothing' is empty"));
}

TEST_F(TrainerTest, UncreatableOutputDirectoryIsReported) {
  TempDir dir;
  std::ofstream(dir.file("file")) << "x";
  Artifact artifact = Artifact::load(fakeArtifactPath("fake_m4"));
  TrainOptions options = silent(dir.file("file/results"));
  options.epochs = 1;
  Trainer trainer(artifact, train, test, options);
  EXPECT_THAT(errorOf([&] { trainer.run(); }),
              HasSubstr("cannot create directory"));
}

TEST_F(TrainerTest, RunRefusesToStartMidEpoch) {
  Artifact artifact = Artifact::load(fakeArtifactPath("fake_m4"));
  Trainer trainer(artifact, train, test, silent());
  trainer.runSteps(3);
  EXPECT_THAT(errorOf([&] { trainer.run(); }), HasSubstr("epoch boundary"));
}

} // namespace
