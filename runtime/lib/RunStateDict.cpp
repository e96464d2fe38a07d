//===- RunStateDict.cpp - A run checkpoint's models, by name --------------===//
#include "mbt/runtime/RunStateDict.h"

#include "mbt/runtime/Error.h"

#include <fmt/format.h>

namespace mbt {
namespace runtime {

RunStateDicts::RunStateDicts(const std::string &path,
                             const RunWriterManifest &writerOf)
    : path(path) {
  auto read = std::make_shared<RunCheckpoint>(readCheckpoint(path));
  writer = writerOf(path, *read);
  if (read->paramCount != writer.paramCount ||
      read->bufferCount != writer.bufferCount ||
      read->elementBytes != dtypeBytes(writer.dtype))
    throw RuntimeError(fmt::format(
        "'{}': its sizes are not those of the artifact that wrote it", path));
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
    if (!writer.isLossScaleBuffer(k))
      add(writer.buffers[k], c.buffers, c.bufferCount);
  return tensors;
}

} // namespace runtime
} // namespace mbt
