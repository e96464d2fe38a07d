//===- ArtifactEmitter.cpp - LLVM-dialect module to shared library --------===//
#include "compiler/Driver/ArtifactEmitter.h"

#include "mbt/common/Abi.h"

#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

using namespace mlir;

/// A TargetMachine for this host's CPU and features, position independent
/// (the artifact is a shared library).
static std::unique_ptr<llvm::TargetMachine> hostTargetMachine(Location loc) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  std::string triple = llvm::sys::getDefaultTargetTriple();
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target) {
    emitError(loc, "no LLVM target for ") << triple << ": " << error;
    return nullptr;
  }
  llvm::SubtargetFeatures features;
  llvm::StringMap<bool> host = llvm::sys::getHostCPUFeatures();
  for (const auto &[name, enabled] : host)
    features.AddFeature(name, enabled);
  // LLVM's tuning for AVX-512 CPUs splits 512-bit vectors into 256-bit
  // halves; the matmul kernels are register-blocked for 512-bit vectors.
  if (host.lookup("avx512f"))
    features.AddFeature("prefer-256-bit", false);
  return std::unique_ptr<llvm::TargetMachine>(target->createTargetMachine(
      triple, llvm::sys::getHostCPUName(), features.getString(),
      llvm::TargetOptions(), llvm::Reloc::PIC_, std::nullopt,
      llvm::CodeGenOptLevel::Aggressive));
}

int64_t mbt::hostVectorBits() {
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  if (features.lookup("avx512f"))
    return 512;
  if (features.lookup("avx"))
    return 256;
  return 128;
}

/// `int64_t mbt_abi_version(void)` and `const char *mbt_manifest(void)`.
static void addManifestSymbols(llvm::Module &module, llvm::StringRef json) {
  llvm::LLVMContext &ctx = module.getContext();
  llvm::IRBuilder<> b(ctx);
  auto *version = llvm::Function::Create(
      llvm::FunctionType::get(b.getInt64Ty(), false),
      llvm::GlobalValue::ExternalLinkage, "mbt_abi_version", module);
  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", version));
  b.CreateRet(b.getInt64(::mbt::kAbiVersion));

  auto *text = llvm::ConstantDataArray::getString(ctx, json, true);
  auto *global = new llvm::GlobalVariable(module, text->getType(), true,
                                          llvm::GlobalValue::PrivateLinkage,
                                          text, "mbt.manifest");
  auto *manifest = llvm::Function::Create(
      llvm::FunctionType::get(b.getPtrTy(), false),
      llvm::GlobalValue::ExternalLinkage, "mbt_manifest", module);
  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", manifest));
  b.CreateRet(global);
}

/// LLVM's O3 pipeline on `module`, for `tm`'s CPU, without its loop
/// unrollers. They fully unrolled the loops of constant trip count that
/// hold other loops (attention's heads) and runtime-unrolled the inner
/// ones, which doubled the IR that code generation then works through:
/// without them every example compiles in about half the time (the
/// transformer 3.8 -> 1.8 s, LeNet 1.7 -> 0.9 s), the MLP, LeNet and
/// transformer steps run as fast and the GRU's 8% slower
/// (docs/benchmarks.md). The vectorizers stay, and interleave on their own.
static void optimizeModule(llvm::Module &module, llvm::TargetMachine *tm) {
  llvm::PipelineTuningOptions tuning;
  tuning.LoopUnrolling = false;
  tuning.LoopInterleaving = true;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(tm, tuning);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm =
      pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  mpm.run(module, mam);
}

/// Links `object` into the shared library `library`; with `openmp`, against
/// the libomp found at build time (by its full path, with an rpath, so that
/// the artifact loads without LD_LIBRARY_PATH).
static LogicalResult linkSharedLibrary(Location loc, StringRef object,
                                       StringRef library, bool openmp) {
  auto cc = llvm::sys::findProgramByName("cc");
  if (!cc)
    return emitError(loc, "cannot find the C compiler 'cc' to link the "
                          "artifact (install build-essential)");
  std::string error;
  SmallVector<StringRef> args{*cc, "-shared", "-o", library, object, "-lm"};
  std::string rpath = std::string("-Wl,-rpath,") + ::mbt::kOpenMPLibDir;
  std::string libomp = std::string(::mbt::kOpenMPLibDir) + "/libomp.so";
  if (openmp) {
    if (!::mbt::kHaveOpenMP)
      return emitError(loc, "the module uses OpenMP, but mbtc was built "
                            "without libomp (compile with --parallel=false)");
    args.append({libomp, rpath});
  }
  int status =
      llvm::sys::ExecuteAndWait(*cc, args, std::nullopt, {}, 0, 0, &error);
  if (status != 0)
    return emitError(loc, "linking ")
           << library << " failed (status " << status << ") " << error;
  return success();
}

namespace mbt {
LogicalResult emitArtifact(ModuleOp llvmModule, StringRef manifestJson,
                           llvm::raw_ostream *irOut, StringRef libraryPath) {
  Location loc = llvmModule.getLoc();
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> module =
      translateModuleToLLVMIR(llvmModule, ctx, "mbt-artifact");
  if (!module)
    return emitError(loc, "translation to LLVM IR failed");
  std::unique_ptr<llvm::TargetMachine> tm = hostTargetMachine(loc);
  if (!tm)
    return failure();
  module->setDataLayout(tm->createDataLayout());
  module->setTargetTriple(tm->getTargetTriple().str());
  addManifestSymbols(*module, manifestJson);
  optimizeModule(*module, tm.get());
  if (irOut) {
    module->print(*irOut, nullptr);
    return success();
  }

  // Object file next to the library, then link.
  std::string objectPath = (libraryPath + ".o").str();
  std::error_code ec;
  llvm::raw_fd_ostream os(objectPath, ec, llvm::sys::fs::OF_None);
  if (ec)
    return emitError(loc, "cannot write ")
           << objectPath << ": " << ec.message();
  llvm::legacy::PassManager pm;
  if (tm->addPassesToEmitFile(pm, os, nullptr,
                              llvm::CodeGenFileType::ObjectFile))
    return emitError(loc, "the target cannot emit object files");
  pm.run(*module);
  os.close();
  // scf-to-openmp's parallel loops call the OpenMP runtime.
  bool openmp = module->getFunction("__kmpc_fork_call") != nullptr;
  LogicalResult linked =
      linkSharedLibrary(loc, objectPath, libraryPath, openmp);
  llvm::sys::fs::remove(objectPath);
  return linked;
}
} // namespace mbt
