//===- CompileSpec.cpp - A spec's text to an artifact ---------------------===//
#include "compiler/Driver/CompileSpec.h"

#include "compiler/Driver/ArtifactEmitter.h"
#include "compiler/Driver/Stages.h"
#include "compiler/Frontend/Frontend.h"
#include "mbt/InitAllDialects.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

namespace mbt {

SpecCompileResult compileSpec(const SpecCompileRequest &request) {
  SpecCompileResult result;
  mlir::DialectRegistry registry;
  registerAllDialects(registry);
  mlir::MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  // Compiles run one at a time per context; a caller's threads are its own.
  ctx.disableMultithreading();

  llvm::raw_string_ostream diagnostics(result.diagnostics);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(request.source, request.name),
      llvm::SMLoc());
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &ctx, diagnostics);

  FrontendOptions frontend;
  frontend.stdlibDir = findStdlibDir(request.stdlibDir);
  frontend.sweepSettings = request.sweepSettings;
  std::unique_ptr<ModuleAST> ast = parseAndCheck(sourceMgr, ctx, frontend);
  if (!ast)
    return result;
  mlir::OwningOpRef<mlir::ModuleOp> module = mlirGen(ctx, *ast);
  if (!module)
    return result;
  if (std::string why = checkTargetCpu(request.cpu); !why.empty()) {
    diagnostics << "error: mcpu=" << request.cpu << ": " << why << "\n";
    return result;
  }
  mlir::mbt::LoweringOptions codegen;
  codegen.parallel = request.parallel && kHaveOpenMP;
  codegen.attentionKernels = cpuHasAttentionKernelCode(request.cpu);
  if (failed(lowerTo(*module, mlir::mbt::Stage::LLVMDialect, codegen,
                     &result.manifest, /*commandLineOptions=*/false)) ||
      failed(emitArtifact(*module, result.manifest, /*irOut=*/nullptr,
                          request.libraryPath, /*codegenThreads=*/0,
                          request.cpu)))
    return result;
  result.ok = true;
  return result;
}

} // namespace mbt
