//===- Run.cpp - train a compiled artifact, the whole job -----------------===//
#include "mbt/runtime/Run.h"

#include "mbt/runtime/Artifact.h"
#include "mbt/runtime/FashionMnist.h"
#include "mbt/runtime/Trainer.h"

#include <exception>
#include <iostream>

namespace mbt {
namespace runtime {

int runArtifact(const RunRequest &request, const char *tool) noexcept {
  try {
    Artifact artifact = Artifact::load(request.artifact);
    const Manifest &manifest = artifact.manifest();
    DataSplits data = loadDataSplits(manifest.data.name, request.dataDir);
    TrainOptions options;
    options.outDir = request.outDir;
    options.epochs = request.epochs;
    options.quiet = request.quiet;
    Trainer trainer(artifact, data.train, data.test, options);
    if (!request.quiet)
      std::cerr << tool << ": " << manifest.models << " models of '"
                << manifest.model << "', " << data.train.count
                << " training samples, results in " << options.outDir << "\n";
    trainer.run();
  } catch (const std::exception &error) {
    std::cerr << tool << ": error: " << error.what() << "\n";
    return 1;
  }
  return 0;
}

} // namespace runtime
} // namespace mbt
