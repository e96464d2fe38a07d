//===- RunStateDict.cpp - A run checkpoint's models, by name --------------===//
#include "mbt/runtime/RunStateDict.h"

#include "mbt/runtime/Artifact.h"
#include "mbt/runtime/Error.h"

#include <fmt/format.h>

#include <filesystem>

namespace mbt {
namespace runtime {

namespace {

/// The manifest of the artifact beside the checkpoint at `path`, which must
/// be the one that wrote it.
Manifest writerManifest(const std::string &path, const RunCheckpoint &c) {
  std::filesystem::path artifactPath =
      std::filesystem::path(path).parent_path() / "model.so";
  if (!std::filesystem::exists(artifactPath))
    throw RuntimeError(fmt::format(
        "'{}' is a run checkpoint, whose tensors are named by the artifact "
        "that wrote it, and there is no '{}' beside it (mbtc train keeps it "
        "there); start from the run's models/model-<i>.pt or "
        ".safetensors instead",
        path, artifactPath.string()));
  Artifact artifact = Artifact::load(artifactPath.string());
  if (manifestDigest(artifact.manifestJson()) != c.manifestDigest)
    throw RuntimeError(fmt::format(
        "'{}' was not written by '{}' beside it (the artifact was "
        "recompiled since, or the checkpoint copied from another run)",
        path, artifactPath.string()));
  const Manifest &manifest = artifact.manifest();
  if (c.paramCount != manifest.paramCount ||
      c.bufferCount != manifest.bufferCount ||
      c.elementBytes != (manifest.dtype == DType::F64 ? 8 : 4))
    throw RuntimeError(fmt::format(
        "'{}': its sizes are not those of '{}', whose manifest it names", path,
        artifactPath.string()));
  return manifest;
}

} // namespace

RunStateDicts::RunStateDicts(const std::string &path) : path(path) {
  auto read = std::make_shared<RunCheckpoint>(readCheckpoint(path));
  writer = writerManifest(path, *read);
  checkpoint = std::move(read);
}

StateDict RunStateDicts::stateDict(int64_t model) const {
  const RunCheckpoint &c = *checkpoint;
  ElementType type = c.elementBytes == 8 ? ElementType::F64 : ElementType::F32;
  StateDict tensors;
  auto add = [&](const ParamSpec &spec, const std::vector<uint8_t> &rows,
                 int64_t width) {
    ArrayView view;
    view.origin = fmt::format("'{}': model {}'s '{}'", path, model, spec.name);
    view.type = type;
    view.shape = spec.shape;
    view.data = rows.data() + (model * width + spec.offset) * c.elementBytes;
    view.owner = checkpoint;
    tensors.emplace_back(spec.name, std::move(view));
  };
  for (const ParamSpec &param : writer.params)
    add(param, c.params, c.paramCount);
  for (size_t k = 0; k < writer.buffers.size(); ++k)
    if (!writer.lossScale || !writer.lossScale->holds(static_cast<int64_t>(k)))
      add(writer.buffers[k], c.buffers, c.bufferCount);
  return tensors;
}

} // namespace runtime
} // namespace mbt
