//===- FrontendFuzzer.cpp - libFuzzer target over the whole frontend ------===//
//
// Runs the bytes as a `.mbt` spec through the lexer, the parser, Sema and
// MLIRGen (which verifies the module it builds), then prints the module,
// parses it back and prints it again. Built with ASan and UBSan by tools/dev/fuzz.sh, which also
// runs it. Besides crashes, it aborts when the frontend breaks a contract:
//   - parseAndCheck fails without reporting an error, or reports an error and
//     succeeds;
//   - MLIRGen fails (or reports an error) on a spec that Sema accepted;
//   - the printed module does not parse back, does not verify, or prints
//     differently the second time.
//
//===----------------------------------------------------------------------===//
#include "compiler/Frontend/Frontend.h"
#include "dialects/MBT/IR/MBTDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace {
/// The context every input shares: creating one per input would cost more
/// than the frontend itself. Diagnostic handlers are scoped to one input,
/// and the frontend keeps no other state in it.
mlir::MLIRContext &getContext() {
  static mlir::MLIRContext *ctx = [] {
    mlir::DialectRegistry registry;
    registry.insert<mlir::mbt::MBTDialect, mlir::func::FuncDialect>();
    auto *ctx =
        new mlir::MLIRContext(registry, mlir::MLIRContext::Threading::DISABLED);
    ctx->loadAllAvailableDialects();
    return ctx;
  }();
  return *ctx;
}

[[noreturn]] void fail(const char *what, llvm::StringRef input) {
  std::fprintf(stderr, "mbt-frontend-fuzzer: %s\n--- input ---\n%.*s\n---\n",
               what, static_cast<int>(input.size()), input.data());
  std::abort();
}

/// Sweeps larger than this are checked but not printed and parsed back:
/// printing a million per-model hyperparameters takes seconds, which the
/// fuzzer would report as a hang although nothing is wrong.
constexpr int64_t kMaxRoundTripModels = 4096;
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mlir::MLIRContext &ctx = getContext();
  llvm::StringRef input(reinterpret_cast<const char *>(data), size);

  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(input, "fuzz.mbt"), llvm::SMLoc());
  // Render each diagnostic as mbtc would (caret and all), then throw it away;
  // count the errors.
  mlir::SourceMgrDiagnosticHandler render(sourceMgr, &ctx, llvm::nulls());
  unsigned errors = 0;
  mlir::ScopedDiagnosticHandler count(&ctx, [&](mlir::Diagnostic &diag) {
    if (diag.getSeverity() == mlir::DiagnosticSeverity::Error)
      ++errors;
    return mlir::failure(); // on to `render`
  });

  std::unique_ptr<mbt::ModuleAST> ast = mbt::parseAndCheck(sourceMgr, ctx);
  if (!ast) {
    if (errors == 0)
      fail("parseAndCheck failed without reporting an error", input);
    return 0;
  }
  if (errors != 0)
    fail("parseAndCheck reported an error but succeeded", input);

  mlir::OwningOpRef<mlir::ModuleOp> module = mbt::mlirGen(ctx, *ast);
  if (!module || errors != 0)
    fail("MLIRGen failed on a spec that Sema accepted", input);

  const mbt::SweepAST *sweep = ast->getSweep();
  if (sweep && sweep->config && sweep->config->models > kMaxRoundTripModels)
    return 0;
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os);
  os.flush();
  mlir::ParserConfig config(&ctx); // verifies after parsing
  mlir::OwningOpRef<mlir::ModuleOp> reparsed =
      mlir::parseSourceString<mlir::ModuleOp>(text, config);
  if (!reparsed || errors != 0)
    fail("the generated module does not parse back", input);
  std::string again;
  llvm::raw_string_ostream againOs(again);
  reparsed->print(againOs);
  againOs.flush();
  if (again != text)
    fail("the generated module prints differently after a round trip", input);
  return 0;
}
