//===- TrainerCheckpoint.cpp - Save and restore a Trainer's run -----------===//
//
// The state a run needs to continue bit for bit (Checkpoint.h): the
// buffers the steps update, the data-order cursor and step counter (the
// order itself is recomputed from the shuffle seed and the epoch), the
// epoch's running sums and the diverged models. Everything else (hyper,
// the batch buffers, the workspace) is either constant or rewritten before
// it is read.
//
//===----------------------------------------------------------------------===//

#include "mbt/runtime/Trainer.h"

#include "mbt/runtime/Error.h"
#include "mbt/runtime/FileUtil.h"
#include "mbt/runtime/TorchStateDict.h"
#include "mbt/runtime/data/Safetensors.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include <sys/stat.h>

namespace mbt {
namespace runtime {

namespace {
std::vector<uint8_t> bytesOf(const FloatBuffer &buffer) {
  const auto *data =
      static_cast<const uint8_t *>(const_cast<FloatBuffer &>(buffer).raw());
  return std::vector<uint8_t>(data, data + buffer.bytes());
}

/// The size of `path` in bytes, 0 if it does not exist.
int64_t fileSize(const std::string &path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0 ? static_cast<int64_t>(info.st_size)
                                          : 0;
}
} // namespace

int64_t Trainer::completedEpochs() const {
  if (!epochBatches)
    return 0;
  return batchIndex == epochBatches->numBatches() ? epochIndex + 1 : epochIndex;
}

RunCheckpoint Trainer::checkpoint(int64_t metricsBytes) const {
  RunCheckpoint c;
  c.manifestDigest = manifestDigest(artifact.manifestJson());
  c.models = m;
  c.paramCount = p;
  c.trainableCount = manifest.trainableCount;
  c.slots = s;
  c.outputs = k;
  c.elementBytes = dtypeBytes(dtype());
  c.step = stepCount;
  c.epochsStarted = epochBatches ? epochIndex + 1 : 0;
  c.batchInEpoch = batchIndex;
  c.runningSums = runningSums;
  c.runningWeight = runningWeight;
  status.saveTo(c);
  c.metricsBytes = metricsBytes;
  c.params = bytesOf(steps->params());
  c.state = bytesOf(steps->state());
  c.bufferCount = q;
  c.buffers = bytesOf(steps->buffers());
  return c;
}

void Trainer::restore(const RunCheckpoint &c) {
  auto mismatch = [&](const std::string &what) {
    throw RuntimeError(
        fmt::format("the checkpoint does not belong to artifact '{}': {}",
                    artifact.path(), what));
  };
  if (c.manifestDigest != manifestDigest(artifact.manifestJson()))
    mismatch("it was written by an artifact with another manifest "
             "(recompiled or another spec)");
  if (c.models != m || c.paramCount != p ||
      c.trainableCount != manifest.trainableCount || c.bufferCount != q ||
      c.slots != s || c.outputs != k || c.elementBytes != dtypeBytes(dtype()))
    mismatch("its buffer sizes differ");
  if (static_cast<int64_t>(c.params.size()) !=
          static_cast<int64_t>(steps->paramBytes()) ||
      static_cast<int64_t>(c.state.size()) !=
          static_cast<int64_t>(steps->stateBytes()) ||
      static_cast<int64_t>(c.buffers.size()) !=
          static_cast<int64_t>(steps->bufferBytes()))
    mismatch("its parameter, state or buffer bytes differ in size");
  // The cursor must lie inside the data order.
  if (c.epochsStarted > 0) {
    auto batches = makeEpochBatches(static_cast<uint32_t>(c.epochsStarted - 1));
    if (c.batchInEpoch > batches->numBatches())
      mismatch(fmt::format("batch {} of an epoch of {}", c.batchInEpoch,
                           batches->numBatches()));
    epochBatches = std::move(batches);
    epochIndex = static_cast<uint32_t>(c.epochsStarted - 1);
  } else {
    epochBatches.reset();
    epochIndex = 0;
  }
  batchIndex = c.batchInEpoch;
  stepCount = c.step;
  runningSums = c.runningSums;
  runningWeight = c.runningWeight;
  status.restoreFrom(c);
  steps->setState(c.params, c.state, c.buffers);
}

std::string Trainer::checkpointPath(const std::string &dir) const {
  if (!sweepRanks->distributed())
    return dir + "/" + kCheckpointFile;
  return dir + "/" +
         rankCheckpointFile(sweepRanks->rank(), sweepRanks->ranks());
}

void Trainer::writeCheckpoint(const std::string &metricsPath) const {
  if (options.outDir.empty())
    return;
  std::string path = checkpointPath(options.outDir);
  if (sweepRanks->distributed()) {
    // No rank writes step S before every rank has reached it, and each
    // keeps its checkpoint before this one: a rank killed before it wrote
    // step S leaves the others' step S and its own before, and a resume
    // takes the newest step every rank has (readResumeCheckpoint).
    sweepRanks->allGather(std::string(),
                          fmt::format("the checkpoint of step {}", stepCount));
    if (std::filesystem::exists(path))
      std::filesystem::rename(path, path + ".previous");
  }
  writeFileAtomically(path,
                      serializeCheckpoint(checkpoint(fileSize(metricsPath))));
}

RunCheckpoint Trainer::readResumeCheckpoint() {
  std::string path = checkpointPath(options.outDir);
  if (!sweepRanks->distributed())
    return readCheckpoint(path);
  std::vector<RunCheckpoint> mine;
  std::string steps;
  for (const std::string &candidate : {path, path + ".previous"})
    if (std::filesystem::exists(candidate)) {
      mine.push_back(readCheckpoint(candidate));
      steps += std::to_string(mine.back().step) + " ";
    }
  // The newest step every rank has a checkpoint of.
  std::vector<std::string> all =
      sweepRanks->allGather(steps, "the checkpoints' steps");
  std::vector<int64_t> common;
  for (const RunCheckpoint &c : mine)
    common.push_back(c.step);
  std::string listing;
  for (size_t r = 0; r < all.size(); ++r) {
    std::vector<int64_t> theirs;
    std::istringstream in(all[r]);
    for (int64_t step; in >> step;)
      theirs.push_back(step);
    listing += fmt::format("{}rank {}: {}", r ? "; " : "", r,
                           theirs.empty()
                               ? std::string("none")
                               : fmt::format("{}", fmt::join(theirs, ", ")));
    common.erase(std::remove_if(common.begin(), common.end(),
                                [&](int64_t step) {
                                  return std::find(theirs.begin(), theirs.end(),
                                                   step) == theirs.end();
                                }),
                 common.end());
  }
  if (common.empty())
    throw RuntimeError(fmt::format(
        "the ranks' checkpoints in '{}' share no step ({}): resume with the "
        "number of processes the run had",
        options.outDir, listing));
  int64_t step = *std::max_element(common.begin(), common.end());
  for (RunCheckpoint &c : mine)
    if (c.step == step)
      return std::move(c);
  throw RuntimeError("internal error: no checkpoint of the common step");
}

std::vector<NamedTensor> Trainer::modelStateDict(int64_t model) const {
  const FloatBuffer &params = steps->params();
  const FloatBuffer &buffers = steps->buffers();
  const auto *row =
      static_cast<const uint8_t *>(const_cast<FloatBuffer &>(params).raw()) +
      params.bytes() / m * model;
  size_t element = static_cast<size_t>(dtypeBytes(dtype()));
  std::vector<NamedTensor> tensors;
  for (const ParamSpec &param : manifest.params)
    tensors.push_back({param.name, param.shape, dtype(),
                       row + element * static_cast<size_t>(param.offset)});
  // The buffers too, as PyTorch's state_dict() holds a BatchNorm's running
  // statistics beside its weights; not a loss scale's, which is the
  // GradScaler's state, not the module's (the checkpoint keeps it).
  const auto *bufferRow =
      static_cast<const uint8_t *>(const_cast<FloatBuffer &>(buffers).raw()) +
      buffers.bytes() / m * model;
  for (size_t k = 0; k < manifest.buffers.size(); ++k) {
    if (manifest.isLossScaleBuffer(k))
      continue;
    const ParamSpec &buffer = manifest.buffers[k];
    tensors.push_back(
        {buffer.name, buffer.shape, dtype(),
         bufferRow + element * static_cast<size_t>(buffer.offset)});
  }
  return tensors;
}

void Trainer::writeStateDicts() const {
  if (options.outDir.empty() || !sweepRanks->writesModels())
    return;
  std::string dir = options.outDir + "/models";
  createDirectories(dir);
  // The same tensors twice: PyTorch's pickle for torch.load, and
  // safetensors for the Hugging Face ecosystem and loaders without pickle.
  std::string why;
  bool writePt = canWriteTorchFiles(why);
  if (!writePt)
    fmt::print(stderr,
               "mbt: warning: models/model-<i>.pt not written: this runtime "
               "has no LibTorch ({}); models/model-<i>.safetensors hold the "
               "same tensors\n",
               why);
  // Named by their place in the whole sweep: every rank writes its own.
  for (int64_t model = 0; model < m; ++model) {
    std::vector<NamedTensor> tensors = modelStateDict(model);
    int64_t name = sweepRanks->firstModel() + model;
    if (writePt)
      writeFileAtomically(fmt::format("{}/model-{}.pt", dir, name),
                          torchStateDict(tensors));
    writeFileAtomically(fmt::format("{}/model-{}.safetensors", dir, name),
                        safetensorsFile(tensors));
  }
}

} // namespace runtime
} // namespace mbt
