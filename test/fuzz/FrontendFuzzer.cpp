//===- FrontendFuzzer.cpp - libFuzzer target over the whole frontend ------===//
//
// Runs the bytes as a `.mbt` spec through the lexer, the parser (and the
// imports), Sema and MLIRGen (which verifies the module it builds), then
// prints the module, parses it back and prints it again. tools/dev/fuzz.sh
// builds it with ASan and UBSan and runs it. Besides crashes, it aborts when
// the frontend breaks a contract:
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
#include <memory>
#include <string>

namespace {
/// The context inputs share: a context per input would cost about 40% of
/// the executions. Diagnostic handlers are scoped to one input, and the
/// frontend keeps no other state in it than uniqued types and attributes;
/// so that these do not add up over a run, the context is thrown away every
/// kInputsPerContext inputs and after a big sweep (see kMaxSharedModels).
std::unique_ptr<mlir::MLIRContext> sharedContext;
constexpr unsigned kInputsPerContext = 1000;
unsigned inputsInContext = 0;

mlir::MLIRContext &getContext() {
  if (!sharedContext) {
    mlir::DialectRegistry registry;
    registry.insert<mlir::mbt::MBTDialect, mlir::func::FuncDialect>();
    sharedContext = std::make_unique<mlir::MLIRContext>(
        registry, mlir::MLIRContext::Threading::DISABLED);
    sharedContext->loadAllAvailableDialects();
  }
  return *sharedContext;
}

[[noreturn]] void fail(const char *what, llvm::StringRef input) {
  std::fprintf(stderr, "mbt-frontend-fuzzer: %s\n--- input ---\n%.*s\n---\n",
               what, static_cast<int>(input.size()), input.data());
  std::abort();
}

/// Sweeps of more models than this are checked but not printed and parsed
/// back: printing a million per-model hyperparameters takes seconds, which
/// the fuzzer would report as a hang although nothing is wrong. Nor is their
/// context kept: their per-model arrays, uniqued in it, would add up to
/// gigabytes over a run.
constexpr int64_t kMaxSharedModels = 4096;

/// Runs one input through the frontend; returns whether it built a sweep of
/// more than kMaxSharedModels models.
bool runFrontend(mlir::MLIRContext &ctx, llvm::StringRef input) {
  // The input poses as a file of test/Frontend, so that it can import the
  // files there (`import "Inputs/layers.mbt"`) as the lit tests do, and the
  // standard library of the source tree (`import "nn"`).
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(input, MBT_FUZZ_INPUT_PATH),
      llvm::SMLoc());
  mbt::FrontendOptions options;
  options.stdlibDir = MBT_FUZZ_STDLIB_DIR;
  // Render each diagnostic as mbtc would (caret and all), then throw it away
  // (or print it, with MBT_FUZZ_VERBOSE=1 to triage an input); count errors.
  static const bool verbose = std::getenv("MBT_FUZZ_VERBOSE") != nullptr;
  if (verbose)
    std::fprintf(stderr, "mbt-frontend-fuzzer: an input of %zu bytes\n",
                 input.size());
  mlir::SourceMgrDiagnosticHandler render(
      sourceMgr, &ctx, verbose ? llvm::errs() : llvm::nulls());
  unsigned errors = 0;
  mlir::ScopedDiagnosticHandler count(&ctx, [&](mlir::Diagnostic &diag) {
    if (diag.getSeverity() == mlir::DiagnosticSeverity::Error)
      ++errors;
    return mlir::failure(); // on to `render`
  });

  std::unique_ptr<mbt::ModuleAST> ast =
      mbt::parseAndCheck(sourceMgr, ctx, options);
  if (!ast) {
    if (errors == 0)
      fail("parseAndCheck failed without reporting an error", input);
    return false;
  }
  if (errors != 0)
    fail("parseAndCheck reported an error but succeeded", input);

  mlir::OwningOpRef<mlir::ModuleOp> module = mbt::mlirGen(ctx, *ast);
  if (!module || errors != 0)
    fail("MLIRGen failed on a spec that Sema accepted", input);

  const mbt::SweepAST *sweep = ast->getSweep();
  if (sweep && sweep->config && sweep->config->models > kMaxSharedModels)
    return true;
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
  return false;
}
} // namespace

/// The dialect's own attributes (its EnumAttrs) are allocated by code built
/// with ASan, inlined from LLVM's BumpPtrAllocator: it poisons each new slab
/// and unpoisons only what it hands out. The builtin attributes that follow
/// in the same slab are allocated by libMLIR.so, built without ASan, which
/// never unpoisons them: reading one would be reported as use-after-poison
/// although it is live. So ASan ignores manual poisoning; heap overflows and
/// use-after-free are still caught by its own redzones.
extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0";
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef input(reinterpret_cast<const char *>(data), size);
  bool bigSweep = runFrontend(getContext(), input);
  if (bigSweep || ++inputsInContext == kInputsPerContext) {
    sharedContext.reset();
    inputsInContext = 0;
  }
  return 0;
}
