//===- Stages.cpp - mbtc's way through the pipeline ----------------------===//
#include "compiler/Driver/Stages.h"

#include "dialects/MBT/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <cstdlib>

using namespace mlir;

/// The entry points must have the C signatures of docs/abi.md: every
/// output written into the caller's buffers, nothing returned, the
/// workspace last; beside each, its workspace function returning i64. A
/// result left over means bufferization could not update a buffer in place,
/// and the runtime would call the function with the wrong signature.
static LogicalResult checkEntryPoints(ModuleOp module) {
  struct Entry {
    StringRef name;
    unsigned numArgs; // with the workspace
    bool required;
  };
  const Entry entries[] = {{"_mlir_ciface_mbt_train_step", 9, true},
                           {"_mlir_ciface_mbt_eval_step", 6, true},
                           {"_mlir_ciface_mbt_grad_step", 8, false}};
  for (const Entry &entry : entries) {
    auto fn = module.lookupSymbol<LLVM::LLVMFuncOp>(entry.name);
    if (!fn && !entry.required)
      continue;
    if (!fn)
      return module.emitError("internal error: no entry point ") << entry.name;
    auto type = fn.getFunctionType();
    if (!isa<LLVM::LLVMVoidType>(type.getReturnType()) ||
        type.getNumParams() != entry.numArgs)
      return fn.emitError("internal error: entry point ")
             << entry.name << " has type " << type << ", not the ABI's";
    std::string sizeName = (entry.name + "_workspace_bytes").str();
    auto sizeFn = module.lookupSymbol<LLVM::LLVMFuncOp>(sizeName);
    if (!sizeFn)
      return module.emitError("internal error: no workspace function ")
             << sizeName;
    auto sizeType = sizeFn.getFunctionType();
    if (!sizeType.getReturnType().isInteger(64) ||
        sizeType.getNumParams() != entry.numArgs - 1)
      return sizeFn.emitError("internal error: workspace function ")
             << sizeName << " has type " << sizeType << ", not the ABI's";
  }
  return success();
}

/// MLIR's NVVM target finds ptxas and libdevice (the math functions of the
/// kernels) through CUDA_ROOT, CUDA_HOME or CUDA_PATH. When none is set,
/// this points CUDA_HOME at the toolkit that holds the ptxas in PATH, or at
/// /usr/local/cuda; without a toolkit the CUDA target cannot compile.
static LogicalResult locateCudaToolkit(ModuleOp module) {
  for (const char *var : {"CUDA_ROOT", "CUDA_HOME", "CUDA_PATH"})
    if (const char *value = std::getenv(var); value && *value)
      return success();
  std::string toolkit;
  if (llvm::ErrorOr<std::string> ptxas = llvm::sys::findProgramByName("ptxas"))
    toolkit = llvm::sys::path::parent_path(llvm::sys::path::parent_path(*ptxas))
                  .str();
  else if (llvm::sys::fs::exists("/usr/local/cuda/bin/ptxas"))
    toolkit = "/usr/local/cuda";
  SmallString<256> libdevice(toolkit);
  llvm::sys::path::append(libdevice, "nvvm", "libdevice", "libdevice.10.bc");
  if (toolkit.empty() || !llvm::sys::fs::exists(libdevice))
    return module.emitError(
        "--target=cuda needs the CUDA toolkit (ptxas and "
        "nvvm/libdevice/libdevice.10.bc): set CUDA_HOME to its directory");
  setenv("CUDA_HOME", toolkit.c_str(), /*overwrite=*/0);
  return success();
}

namespace mbt {
LogicalResult lowerTo(ModuleOp module, mlir::mbt::Stage to,
                      const mlir::mbt::LoweringOptions &codegen,
                      std::string *manifest, bool commandLineOptions) {
  using mlir::mbt::Stage;
  bool toLLVM = to == Stage::LLVMDialect;
  if (toLLVM && codegen.target == "cuda" && failed(locateCudaToolkit(module)))
    return failure();
  PassManager pm(module.getContext());
  // (Fails where the tool did not register them: a library caller.)
  if (commandLineOptions && failed(applyPassManagerCLOptions(pm)))
    return failure();
  // --mlir-timing: the report prints when the manager goes out of scope.
  DefaultTimingManager timing;
  applyDefaultTimingManagerCLOptions(timing);
  TimingScope timingScope = timing.getRootScope();
  pm.enableTiming(timingScope);
  mlir::mbt::buildPipeline(pm, Stage::MBT, to, codegen, manifest);
  if (failed(pm.run(module)))
    return failure();
  return toLLVM ? checkEntryPoints(module) : success();
}

LogicalResult selectModels(ModuleOp module, ModelSlice slice) {
  PassManager pm(module.getContext());
  mlir::mbt::MBTSelectModelsOptions options;
  options.first = slice.first;
  options.count = slice.count;
  pm.addPass(mlir::mbt::createMBTSelectModels(options));
  return pm.run(module);
}
} // namespace mbt

LogicalResult(::mbt::printKernelPTX)(ModuleOp module, llvm::raw_ostream &os) {
  bool any = false;
  for (auto binary : module.getOps<gpu::BinaryOp>())
    for (Attribute attr : binary.getObjects()) {
      auto object = cast<gpu::ObjectAttr>(attr);
      if (object.getFormat() != gpu::CompilationTarget::Assembly)
        return binary.emitError("internal error: kernel ")
               << binary.getName() << " was not compiled to PTX";
      // The serialized PTX ends in a NUL for the driver's JIT.
      os << "// kernel " << binary.getName() << "\n"
         << object.getObject().getValue().rtrim('\0') << "\n";
      any = true;
    }
  if (!any)
    return module.emitError("no kernels: --emit=ptx needs --target=cuda");
  return success();
}
