//===- KillAndResumeTest.cpp - SIGKILL a training run, then resume it -----===//
//
// A spec of 4 models (one of which diverges, so the frozen state travels
// through the checkpoint too) trains 2 epochs with mbt-run, checkpointing
// every 100 steps. The same run is killed with SIGKILL twice while it
// trains (once in each epoch, the second time after a first resume) and
// resumed with --resume; its results directory must then hold exactly what
// the uninterrupted run's holds.
//
//===----------------------------------------------------------------------===//
#include "mbt/runtime/Checkpoint.h"
#include "mbt/runtime/Error.h"

#include "CompileWithMbtc.h"

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using namespace mbt::runtime;

namespace {

constexpr int64_t kStepsPerEpoch = 938; // 60000 samples, batch 64

const char *kSpec = R"(model mlp {
  input  x: f32[784]
  target y: class[10]
  param  w1: f32[784, 64] = kaiming_uniform
  param  b1: f32[64] = zeros
  param  w2: f32[64, 10] = kaiming_uniform
  param  b2: f32[10] = zeros
  logits = relu(x @ w1 + b1) @ w2 + b2
  loss   = cross_entropy(logits, y)
  metric acc = accuracy(logits, y)
}
sweep {
  models = 4
  optim  = adam(lr = [0.001, 0.003, 0.01, 1e30])
  data   = fashion_mnist(batch = 64)
  epochs = 2
}
)";

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

/// Starts mbt-run ARGS...; returns its pid.
pid_t spawn(const std::vector<std::string> &args) {
  pid_t pid = fork();
  if (pid == 0) {
    std::vector<char *> argv;
    std::string self = MBT_RUN_PATH;
    argv.push_back(self.data());
    for (const std::string &a : args)
      argv.push_back(const_cast<char *>(a.c_str()));
    argv.push_back(nullptr);
    // Below the test's priority: on a loaded machine (ctest -j, one core)
    // the run must not finish an epoch while the poller waits for a core.
    setpriority(PRIO_PROCESS, 0, 5);
    execv(self.c_str(), argv.data());
    _exit(127);
  }
  return pid;
}

/// The step of DIR's checkpoint, or -1 while there is none.
int64_t checkpointStep(const std::string &dir) {
  try {
    return readCheckpoint(dir + "/" + kCheckpointFile).step;
  } catch (const RuntimeError &) {
    return -1;
  }
}

/// Kills and reaps the child `pid` unless it was reaped already: a failed
/// check must not leave a run writing into the directory the next one uses.
struct ReapOnExit {
  pid_t pid;
  bool reaped = false;
  ~ReapOnExit() {
    if (reaped)
      return;
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
  }
};

/// Runs mbt-run ARGS... until its checkpoint reaches `step`, then kills it
/// with SIGKILL (it is then inside a later step, or between two). Fails if
/// the run ends first.
void killOnceItPasses(const std::vector<std::string> &args,
                      const std::string &dir, int64_t step) {
  pid_t pid = spawn(args);
  ASSERT_GT(pid, 0);
  ReapOnExit child{pid};
  auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(8);
  int status = 0;
  while (checkpointStep(dir) < step) {
    pid_t ended = waitpid(pid, &status, WNOHANG);
    child.reaped = ended == pid;
    ASSERT_EQ(ended, 0) << "the run ended before step " << step << " (status "
                        << status << "): the kill came too late";
    ASSERT_LT(std::chrono::steady_clock::now(), deadline)
        << "no checkpoint of step " << step << " in 8 minutes";
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  child.reaped = true;
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
      << "the run finished before the kill (status " << status << ")";
}

int runToEnd(const std::vector<std::string> &args) {
  pid_t pid = spawn(args);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(KillAndResume, ResumedRunEndsWithTheUninterruptedRunsResults) {
  std::string artifact = mbt::test::compileSpec("kill_resume", kSpec);
  std::string base = mbt::test::testFileStem("kill_resume");
  std::string whole = base + ".whole", killed = base + ".killed";
  ASSERT_EQ(std::system(("rm -rf '" + whole + "' '" + killed + "'").c_str()),
            0);

  ASSERT_EQ(runToEnd({artifact, "--out", whole, "--quiet", "--checkpoint-every",
                      "100"}),
            0);
  EXPECT_EQ(checkpointStep(whole), 2 * kStepsPerEpoch);

  std::vector<std::string> start{
      artifact, "--out", killed, "--quiet", "--checkpoint-every", "100"};
  std::vector<std::string> resume = start;
  resume.push_back("--resume");
  // Killed in the first epoch, then in the second after a resume.
  ASSERT_NO_FATAL_FAILURE(killOnceItPasses(start, killed, 300));
  int64_t firstKill = checkpointStep(killed);
  EXPECT_LT(firstKill, kStepsPerEpoch);
  ASSERT_NO_FATAL_FAILURE(
      killOnceItPasses(resume, killed, kStepsPerEpoch + 200));
  int64_t secondKill = checkpointStep(killed);
  EXPECT_GT(secondKill, kStepsPerEpoch);
  EXPECT_LT(secondKill, 2 * kStepsPerEpoch);
  ASSERT_EQ(runToEnd(resume), 0);

  // Byte for byte: every model's parameters and Adam state (and the cursor,
  // the running sums, the frozen model 3) in the final checkpoint, the
  // metrics of both epochs once each, the leaderboard.
  EXPECT_EQ(checkpointStep(killed), 2 * kStepsPerEpoch);
  EXPECT_TRUE(readFile(killed + "/" + kCheckpointFile) ==
              readFile(whole + "/" + kCheckpointFile))
      << "the final checkpoints differ";
  EXPECT_EQ(readFile(killed + "/metrics.jsonl"),
            readFile(whole + "/metrics.jsonl"));
  EXPECT_EQ(readFile(killed + "/leaderboard.json"),
            readFile(whole + "/leaderboard.json"));
  RunCheckpoint final = readCheckpoint(killed + "/" + kCheckpointFile);
  EXPECT_GT(final.divergedStep[3], 0) << "model 3 (lr 1e30) diverged";
}

} // namespace
