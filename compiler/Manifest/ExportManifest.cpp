//===- ExportManifest.cpp - the manifest of the module, as a pass ---------===//
#include "compiler/Manifest/Manifest.h"

#include "mlir/Support/FileUtilities.h"

#include "llvm/Support/ToolOutputFile.h"

namespace mlir::mbt {
#define GEN_PASS_DEF_MBTEXPORTMANIFEST
#include "compiler/Manifest/Passes.h.inc"
} // namespace mlir::mbt

using namespace mlir;

namespace {
struct ExportManifestPass
    : public mlir::mbt::impl::MBTExportManifestBase<ExportManifestPass> {
  using MBTExportManifestBase::MBTExportManifestBase;
  /// Writes into `out` instead of `path`.
  ExportManifestPass(std::string &out, StringRef deviceName) : out(&out) {
    device = deviceName.str();
  }

  void runOnOperation() override {
    markAllAnalysesPreserved();
    FailureOr<std::string> manifest =
        ::mbt::buildManifest(getOperation(), device);
    if (failed(manifest))
      return signalPassFailure();
    if (out) {
      *out = std::move(*manifest);
      return;
    }
    if (path.empty())
      return;
    std::string error;
    std::unique_ptr<llvm::ToolOutputFile> file = openOutputFile(path, &error);
    if (!file) {
      getOperation().emitError("cannot write the manifest: ") << error;
      return signalPassFailure();
    }
    file->os() << *manifest << "\n";
    file->keep();
  }

  std::string *out = nullptr;
};
} // namespace

std::unique_ptr<Pass> mlir::mbt::createMBTExportManifest(std::string &out,
                                                         StringRef device) {
  return std::make_unique<ExportManifestPass>(out, device);
}
