//===- ArtifactEmitter.cpp - LLVM-dialect module to shared library --------===//
#include "compiler/Driver/ArtifactEmitter.h"

#include "compiler/Pipelines/Pipelines.h"

#include "mbt/common/Abi.h"
#include "mbt/common/CpuFeatures.h"

#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/Threading.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/Transforms/Utils/Cloning.h"

#include <numeric>
#include <thread>

using namespace mlir;

/// A TargetMachine for `cpu` (LLVM's name; empty or "native": this host's
/// CPU and features), position independent (the artifact is a shared
/// library); null with `error` set where LLVM has no target for the host
/// or no CPU of that name. Safe to call from several threads once the
/// native target is initialized (initializeTarget).
static std::unique_ptr<llvm::TargetMachine> targetMachine(StringRef cpu,
                                                          std::string &error) {
  std::string triple = llvm::sys::getDefaultTargetTriple();
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target) {
    error = "no LLVM target for " + triple + ": " + error;
    return nullptr;
  }
  llvm::SubtargetFeatures features;
  std::string name = cpu.str();
  if (cpu.empty() || cpu == "native") {
    name = llvm::sys::getHostCPUName().str();
    for (const auto &[feature, enabled] : llvm::sys::getHostCPUFeatures())
      features.AddFeature(feature, enabled);
  } else {
    // The generic CPU's subtarget answers for the name (one made for an
    // unknown name would warn of it first).
    std::unique_ptr<llvm::MCSubtargetInfo> info(
        target->createMCSubtargetInfo(triple, "", ""));
    if (!info || !info->isCPUStringValid(name)) {
      error = "unknown CPU '" + name + "' for " + triple +
              " (mbtc --mcpu=help lists them)";
      return nullptr;
    }
  }
  // LLVM's tuning for AVX-512 CPUs splits 512-bit vectors into 256-bit
  // halves; the matmul kernels are register-blocked for 512-bit vectors.
  features.AddFeature("prefer-256-bit", false);
  return std::unique_ptr<llvm::TargetMachine>(target->createTargetMachine(
      triple, name, features.getString(), llvm::TargetOptions(),
      llvm::Reloc::PIC_, std::nullopt, llvm::CodeGenOptLevel::Aggressive));
}

/// Whether `tm`'s CPU has the x86 feature `feature` (false on other
/// targets, which would warn of a feature they do not know).
static bool hasFeature(const llvm::TargetMachine &tm, StringRef feature) {
  return tm.getTargetTriple().isX86() &&
         tm.getMCSubtargetInfo()->checkFeatures(("+" + feature).str());
}

/// Registers the host's target with LLVM; before any thread asks for a
/// TargetMachine (registering writes LLVM's global registry).
static void initializeTarget() {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
}

namespace mbt {
std::string checkTargetCpu(StringRef cpu) {
  initializeTarget();
  std::string error;
  return targetMachine(cpu, error) ? "" : error;
}

void printTargetCpus() {
  initializeTarget();
  std::string triple = llvm::sys::getDefaultTargetTriple(), error;
  if (const llvm::Target *target =
          llvm::TargetRegistry::lookupTarget(triple, error))
    // LLVM's subtarget for the CPU "help" lists them, as llc's does.
    std::unique_ptr<llvm::MCSubtargetInfo>(
        target->createMCSubtargetInfo(triple, "help", ""));
  else
    llvm::errs() << "no LLVM target for " << triple << ": " << error << "\n";
}

int64_t vectorBits(StringRef cpu) {
  initializeTarget();
  std::string error;
  std::unique_ptr<llvm::TargetMachine> tm = targetMachine(cpu, error);
  if (tm && hasFeature(*tm, "avx512f"))
    return 512;
  if (tm && hasFeature(*tm, "avx"))
    return 256;
  return 128;
}

bool cpuHasAttentionKernelCode(StringRef cpu) {
  initializeTarget();
  std::string error;
  std::unique_ptr<llvm::TargetMachine> tm = targetMachine(cpu, error);
  return tm && mlir::mbt::attentionKernelsPayOn(tm->getTargetTriple());
}
} // namespace mbt

/// `json` (an object) with "cpu": `tm`'s CPU and those of its features that
/// a runtime checks (kCheckedCpuFeatures), inserted first.
static std::string withTargetCpu(StringRef json,
                                 const llvm::TargetMachine &tm) {
  llvm::json::Array features;
  for (const char *feature : ::mbt::kCheckedCpuFeatures)
    if (hasFeature(tm, feature))
      features.push_back(feature);
  llvm::json::Value cpu = llvm::json::Object{{"name", tm.getTargetCPU().str()},
                                             {"features", std::move(features)}};
  size_t open = json.find('{');
  if (open == StringRef::npos)
    return json.str();
  std::string text;
  llvm::raw_string_ostream os(text);
  os << json.take_front(open + 1) << "\"cpu\": " << cpu << ", "
     << json.drop_front(open + 1);
  return text;
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

/// Below this many instructions per part, splitting a module for parallel
/// code generation costs about what it saves.
constexpr unsigned kInstructionsPerPart = 8000;

/// `module`'s machine code written to the object file `path`; "" or what
/// went wrong.
static std::string emitObject(llvm::Module &module, llvm::TargetMachine &tm,
                              StringRef path) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return "cannot write " + path.str() + ": " + ec.message();
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr,
                             llvm::CodeGenFileType::ObjectFile))
    return "the target cannot emit object files";
  pm.run(module);
  return "";
}

/// One part of a split module, as bitcode, compiled to `path` in an
/// LLVMContext and a TargetMachine of its own (neither may be shared
/// between threads).
static std::string emitPart(StringRef bitcode, StringRef path, StringRef cpu) {
  llvm::LLVMContext ctx;
  llvm::Expected<std::unique_ptr<llvm::Module>> part = llvm::parseBitcodeFile(
      llvm::MemoryBufferRef(bitcode, "mbt-artifact-part"), ctx);
  if (!part)
    return llvm::toString(part.takeError());
  std::string error;
  std::unique_ptr<llvm::TargetMachine> tm = targetMachine(cpu, error);
  if (!tm)
    return error;
  return emitObject(**part, *tm, path);
}

/// `module` split into `parts` modules that hold its functions between
/// them, each function's body in one part, largest first into the part
/// with the fewest instructions so far (llvm::SplitModule partitions by a
/// hash of the names, which left one of two parts with 84% of a 12-block
/// transformer). Internal symbols become hidden ones, so that the parts
/// link; global variables are defined in the first part. With
/// `balancedOnly`, none where one part would hold more than 3/4 of the
/// instructions.
static std::vector<std::unique_ptr<llvm::Module>>
splitByFunction(llvm::Module &module, unsigned parts, bool balancedOnly) {
  for (llvm::GlobalValue &value : module.global_values()) {
    if (value.isDeclaration())
      continue;
    if (!value.hasName())
      value.setName("mbt.unnamed");
    if (value.hasLocalLinkage()) {
      value.setLinkage(llvm::GlobalValue::ExternalLinkage);
      value.setVisibility(llvm::GlobalValue::HiddenVisibility);
    }
  }
  std::vector<llvm::Function *> functions;
  for (llvm::Function &function : module)
    if (!function.isDeclaration())
      functions.push_back(&function);
  std::stable_sort(functions.begin(), functions.end(),
                   [](llvm::Function *a, llvm::Function *b) {
                     return a->getInstructionCount() > b->getInstructionCount();
                   });
  llvm::DenseMap<const llvm::GlobalValue *, unsigned> partOf;
  std::vector<size_t> load(parts, 0);
  for (llvm::Function *function : functions) {
    unsigned lightest =
        unsigned(std::min_element(load.begin(), load.end()) - load.begin());
    partOf[function] = lightest;
    load[lightest] += function->getInstructionCount();
  }
  // Where one function is most of the module, the parts would wait on it.
  size_t total = std::accumulate(load.begin(), load.end(), size_t(0));
  if (balancedOnly &&
      *std::max_element(load.begin(), load.end()) * 4 > total * 3)
    return {};
  std::vector<std::unique_ptr<llvm::Module>> split;
  for (unsigned i = 0; i < parts; ++i) {
    llvm::ValueToValueMapTy map;
    split.push_back(
        llvm::CloneModule(module, map, [&](const llvm::GlobalValue *value) {
          auto it = partOf.find(value);
          return it == partOf.end() ? i == 0 : it->second == i;
        }));
  }
  return split;
}

/// Code generation on every core: the module split by function into parts
/// of about equal size, each compiled to an object file in a thread of its
/// own, through bitcode into an LLVMContext of its own (as LLVM's LTO
/// does). Code generation (instruction selection, register allocation) is
/// most of a deep model's compile time, and each function's is independent
/// of the others': the parts hold the machine code one object would.
/// `threads` parts, or with 0 one per core (at most 8) where the module is
/// large and even enough to gain from it.
static LogicalResult emitObjects(Location loc, llvm::Module &module,
                                 llvm::TargetMachine &tm, StringRef cpu,
                                 unsigned threads, StringRef base,
                                 SmallVectorImpl<std::string> &paths) {
  unsigned parts =
      threads
          ? threads
          : std::min<unsigned>(
                {llvm::heavyweight_hardware_concurrency()
                     .compute_thread_count(),
                 8u,
                 unsigned(module.getInstructionCount() / kInstructionsPerPart +
                          1)});
  std::vector<std::unique_ptr<llvm::Module>> split;
  if (parts > 1)
    split = splitByFunction(module, parts, /*balancedOnly=*/threads == 0);
  if (split.empty()) {
    paths.push_back((base + ".o").str());
    std::string error = emitObject(module, tm, paths.back());
    if (!error.empty())
      return emitError(loc, error);
    return success();
  }
  std::vector<llvm::SmallString<0>> bitcode;
  for (const std::unique_ptr<llvm::Module> &part : split) {
    bitcode.emplace_back();
    llvm::raw_svector_ostream os(bitcode.back());
    llvm::WriteBitcodeToFile(*part, os);
  }
  std::vector<std::string> errors(bitcode.size());
  std::vector<std::thread> workers;
  for (size_t i = 0; i < bitcode.size(); ++i) {
    paths.push_back((base + "." + std::to_string(i) + ".o").str());
    workers.emplace_back(
        [&, i] { errors[i] = emitPart(bitcode[i], paths[i], cpu); });
  }
  for (std::thread &worker : workers)
    worker.join();
  for (const std::string &error : errors)
    if (!error.empty())
      return emitError(loc, error);
  return success();
}

/// Links `objects` into the shared library `library`; with `openmp`,
/// against the libomp found at build time (by its full path, with an
/// rpath, so that the artifact loads without LD_LIBRARY_PATH).
static LogicalResult linkSharedLibrary(Location loc,
                                       ArrayRef<std::string> objects,
                                       StringRef library, bool openmp) {
  auto cc = llvm::sys::findProgramByName("cc");
  if (!cc)
    return emitError(loc, "cannot find the C compiler 'cc' to link the "
                          "artifact (install build-essential)");
  std::string error;
  SmallVector<StringRef> args{*cc, "-shared", "-o", library};
  args.append(objects.begin(), objects.end());
  args.push_back("-lm");
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
                           llvm::raw_ostream *irOut, StringRef libraryPath,
                           unsigned codegenThreads, StringRef cpu) {
  Location loc = llvmModule.getLoc();
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> module =
      translateModuleToLLVMIR(llvmModule, ctx, "mbt-artifact");
  if (!module)
    return emitError(loc, "translation to LLVM IR failed");
  initializeTarget();
  std::string error;
  std::unique_ptr<llvm::TargetMachine> tm = targetMachine(cpu, error);
  if (!tm)
    return emitError(loc, error);
  module->setDataLayout(tm->createDataLayout());
  module->setTargetTriple(tm->getTargetTriple().str());
  addManifestSymbols(*module, withTargetCpu(manifestJson, *tm));
  optimizeModule(*module, tm.get());
  if (irOut) {
    module->print(*irOut, nullptr);
    return success();
  }

  // scf-to-openmp's parallel loops call the OpenMP runtime.
  bool openmp = module->getFunction("__kmpc_fork_call") != nullptr;
  // Object files next to the library, then link.
  SmallVector<std::string> objects;
  LogicalResult linked =
      emitObjects(loc, *module, *tm, cpu, codegenThreads, libraryPath, objects);
  if (succeeded(linked))
    linked = linkSharedLibrary(loc, objects, libraryPath, openmp);
  for (const std::string &object : objects)
    llvm::sys::fs::remove(object);
  return linked;
}
} // namespace mbt
