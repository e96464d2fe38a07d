//===- Frontend.cpp - parse and check a spec ------------------------------===//
#include "compiler/Frontend/Frontend.h"
#include "compiler/Frontend/Diagnostics.h"
#include "compiler/Frontend/Lexer.h"
#include "compiler/Frontend/Parser.h"
#include "compiler/Frontend/Sema.h"

#include "llvm/Support/MemoryBuffer.h"

using namespace mbt;

std::unique_ptr<ModuleAST> mbt::parseAndCheck(llvm::SourceMgr &sourceMgr,
                                              mlir::MLIRContext &ctx) {
  const llvm::MemoryBuffer *buffer =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  Lexer lexer(buffer->getBuffer(), buffer->getBufferIdentifier().str());
  Parser parser(lexer, ctx);
  std::unique_ptr<ModuleAST> module = parser.parseModule();
  if (!module)
    return nullptr;
  if (module->getModels().empty() && module->getSweeps().empty()) {
    emitError(ctx, Location{lexer.getFile(), 1, 1})
        << "the spec defines no model";
    return nullptr;
  }
  if (mlir::failed(checkModule(ctx, *module)))
    return nullptr;
  return module;
}
