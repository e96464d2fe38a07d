//===- mbtc.cpp - the mbt compiler driver ---------------------------------===//
//
//   mbtc [--emit=STAGE] [-o OUT] FILE.mbt|FILE.mlir    compile, or print a
//   stage mbtc train FILE.mbt [--out DIR] [--epochs N] ...   compile and train
//
// Without --emit, mbtc writes the artifact (a shared library, docs/abi.md).
// Errors are MLIR diagnostics: file:line:col, a caret, exit status 1.
//
//===----------------------------------------------------------------------===//
#include "TorchrunLaunch.h"

#include "compiler/Driver/ArtifactEmitter.h"
#include "compiler/Driver/Stages.h"
#include "compiler/Frontend/Frontend.h"
#include "dialects/MBT/IR/MBTOps.h"
#include "mbt/InitAllDialects.h"
#include "mbt/common/ModelSlices.h"
#include "mbt/runtime/BlasKernels.h"
#include "mbt/runtime/Run.h"
#include "mbt/runtime/TrainFlags.h"
#include "mbt/runtime/data/DataSources.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/ToolUtilities.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

#include <chrono>

namespace cl = llvm::cl;
using namespace mlir;

static cl::OptionCategory category("mbtc options");
static cl::opt<std::string> inputFile(cl::Positional,
                                      cl::desc("<spec.mbt|module.mlir>"),
                                      cl::init("-"), cl::cat(category));
static cl::opt<std::string>
    outputFile("o",
               cl::desc("Output file (default: stdout "
                        "for --emit, model.so otherwise)"),
               cl::value_desc("file"), cl::cat(category));
/// What mbtc writes: the artifact, or one stage of the pipeline.
enum class Emit {
  Artifact,
  AST,
  MBT,
  Grad,
  Batched,
  Fused,
  Linalg,
  LLVMDialect,
  LLVMIR,
  PTX
};
static cl::opt<Emit> emit(
    "emit", cl::desc("Print a stage instead of writing the artifact"),
    cl::values(
        clEnumValN(Emit::AST, "ast", "the checked syntax tree"),
        clEnumValN(Emit::MBT, "mbt", "the mbt dialect: one model, forward"),
        clEnumValN(Emit::Grad, "grad", "with the backward pass"),
        clEnumValN(Emit::Batched, "batched", "every model of the sweep"),
        clEnumValN(Emit::Fused, "fused", "the optimizer updates fused"),
        clEnumValN(Emit::Linalg, "linalg", "linalg on tensors"),
        clEnumValN(Emit::LLVMDialect, "llvm-dialect", "the LLVM dialect"),
        clEnumValN(Emit::LLVMIR, "llvm", "LLVM IR, optimized"),
        clEnumValN(Emit::PTX, "ptx", "the kernels of --target=cuda, as PTX")),
    cl::init(Emit::Artifact), cl::cat(category));
static cl::opt<bool> useBlas("blas",
                             cl::desc("Call BLAS for batched matmuls "
                                      "(default on; off: generated loops)"),
                             cl::init(true), cl::cat(category));
static cl::opt<bool> parallelLoops(
    "parallel",
    cl::desc("Run the compiled loops of every model on all cores with OpenMP "
             "(default on where libomp was found at build time; off: one "
             "thread)"),
    cl::init(::mbt::kHaveOpenMP), cl::cat(category));
enum class Target { CPU, CUDA };
static cl::opt<Target> target(
    "target", cl::desc("What the artifact runs on"),
    cl::values(clEnumValN(Target::CPU, "cpu",
                          "this host's CPU (default): LLVM, OpenMP, BLAS"),
               clEnumValN(Target::CUDA, "cuda",
                          "an NVIDIA GPU: NVVM kernels for --cuda-chip in a "
                          "fatbin (cubin and PTX), matmuls through cuBLAS; "
                          "runs where the CUDA runtime (libmbt_runtime_cuda) "
                          "and a GPU are")),
    cl::init(Target::CPU), cl::cat(category));
static cl::opt<std::string>
    cudaChip("cuda-chip",
             cl::desc("NVIDIA architecture of the kernels (default sm_90)"),
             cl::value_desc("sm_XY"), cl::init("sm_90"), cl::cat(category));
static cl::opt<std::string> targetCpu(
    "mcpu",
    cl::desc("The CPU the artifact's code is generated for, by LLVM's name "
             "(--mcpu=help lists them), with that CPU's own features "
             "(default: this host's CPU and features); the runtime refuses "
             "the artifact on a CPU that lacks one of them"),
    cl::value_desc("name"), cl::init(""), cl::cat(category));
static cl::opt<cl::boolOrDefault> attentionKernels(
    "attention-kernels",
    cl::desc("Compute f32 attention and its adjoint with the runtime's "
             "kernels (default on for x86-64 CPUs; "
             "off: compiled generics and a BLAS call per head's product)"),
    cl::cat(category));
static cl::opt<bool> vectorMatmuls(
    "vector-matmul",
    cl::desc("Generate register-blocked vector kernels for the batched "
             "matmuls whose B is not transposed (default off; the others, "
             "and all with it off, follow --blas)"),
    cl::init(false), cl::cat(category));
// Tuning knobs of --vector-matmul (docs/benchmarks.md compares them).
static cl::opt<int64_t>
    vectorMatmulRows("vector-matmul-rows",
                     cl::desc("Rows of C per register panel"), cl::init(6),
                     cl::Hidden, cl::cat(category));
static cl::opt<int64_t> vectorMatmulVectors(
    "vector-matmul-vectors",
    cl::desc("Vectors of C per panel row (0: 4 for 512-bit vectors, else 2)"),
    cl::init(0), cl::Hidden, cl::cat(category));
static cl::opt<int64_t>
    vectorMatmulKBlock("vector-matmul-k-block",
                       cl::desc("Contraction steps per pass over C (0: all)"),
                       cl::init(0), cl::Hidden, cl::cat(category));
static cl::opt<bool> planWorkspace(
    "workspace",
    cl::desc("Keep the steps' temporaries in one buffer the runtime allocates "
             "once (default on; off: the steps malloc them, for comparison)"),
    cl::init(true), cl::Hidden, cl::cat(category));
static cl::opt<bool> outlineRepeated(
    "outline-repeated",
    cl::desc("Compile each loop nest that repeats (a deep model's blocks, "
             "the eval step's forward) once, as a function its copies call "
             "(default on; off: every copy inline, for comparison)"),
    cl::init(true), cl::Hidden, cl::cat(category));
static cl::opt<unsigned> codegenThreads(
    "codegen-threads",
    cl::desc("Threads for LLVM's code generation, the module split by "
             "function between them (default 0: one per core where the "
             "module is large enough to gain; 1: one object, no thread)"),
    cl::init(0), cl::Hidden, cl::cat(category));
static cl::opt<bool> remarks(
    "remarks",
    cl::desc("Report the lowering's decisions as remarks: each matmul's BLAS "
             "call and each step's workspace plan"),
    cl::init(false), cl::cat(category));
static cl::opt<bool> verifyDiagnostics(
    "verify-diagnostics",
    cl::desc("Check expected-* diagnostics written in the input"),
    cl::init(false), cl::cat(category));
static cl::opt<std::string> stdlibDir(
    "stdlib-dir",
    cl::desc("Directory of the standard library that `import \"NAME\"` "
             "loads from (default: $MBT_STDLIB_PATH, the installed "
             "share/mbt/stdlib, or the source tree's)"),
    cl::value_desc("dir"), cl::cat(category));
static cl::list<std::string> sweepSettings(
    "set",
    cl::desc("Replace (or add) a setting of the spec's sweep, as the sweep "
             "would hold it: --set 'models = 16', --set 'model = "
             "mlp(hidden = 64)'; may repeat"),
    cl::value_desc("KEY = VALUE"), cl::cat(category));
static cl::opt<int64_t> ranks(
    "ranks",
    cl::desc("Also write the artifact of each rank of a run whose models are "
             "split over K processes (DIR/model.rank<r>-of-<K>.so beside "
             "DIR/model.so; docs/distributed.md)"),
    cl::value_desc("K"), cl::init(1), cl::cat(category));
using Distribute = ::mbt::runtime::TrainOptions::Distribute;
static cl::opt<Distribute> distribute(
    StringRef(::mbt::runtime::kDistributeFlag),
    cl::desc("What the ranks of a run over several processes split: the "
             "models (with --ranks K or --nproc K) or each step's samples "
             "(the artifact gains mbt_grad_step; docs/distributed.md)"),
    cl::values(clEnumValN(Distribute::Models, "models",
                          "each rank trains a slice of the models (default)"),
               clEnumValN(Distribute::Data, "data",
                          "each rank trains every model on its share of "
                          "each step's samples")),
    cl::init(Distribute::Models), cl::cat(category));
static cl::opt<bool> splitInput(
    "split-input-file",
    cl::desc("Treat each chunk between '# -----' lines as its own input"),
    cl::init(false), cl::cat(category));

static cl::OptionCategory trainCategory("mbtc train options");
static cl::opt<std::string> outDir("out",
                                   cl::desc("Results directory "
                                            "(default: results/<spec name>)"),
                                   cl::value_desc("dir"),
                                   cl::cat(trainCategory));
static cl::opt<std::string> initFile(
    "init",
    cl::desc(
        "Start every model from the tensors of this .safetensors or .pt file "
        "instead of the sweep's initializers or checkpoint "
        "files"),
    cl::value_desc("file"), cl::cat(trainCategory));
static cl::opt<std::string>
    dataDir("data-dir",
            cl::desc("Fashion-MNIST directory (default: "
                     "$MBT_DATA_DIR or Debian's)"),
            cl::value_desc("dir"), cl::cat(trainCategory));
/// The training flags mbt-run takes too (TrainFlags.h), as llvm::cl
/// options; declared in main, before the command line is parsed. A count
/// not given stays at -1 and leaves TrainOptions' default.
static std::vector<std::unique_ptr<cl::opt<int64_t>>> trainCounts;
static std::vector<std::unique_ptr<cl::opt<bool>>> trainSwitches;

static void declareTrainFlags() {
  for (const ::mbt::runtime::TrainCountFlag &flag :
       ::mbt::runtime::kTrainCountFlags)
    trainCounts.push_back(std::make_unique<cl::opt<int64_t>>(
        StringRef(flag.name), cl::desc(flag.help), cl::value_desc("N"),
        cl::init(-1), cl::cat(trainCategory)));
  for (const ::mbt::runtime::TrainSwitchFlag &flag :
       ::mbt::runtime::kTrainSwitchFlags)
    trainSwitches.push_back(std::make_unique<cl::opt<bool>>(
        StringRef(flag.name), cl::desc(flag.help), cl::init(false),
        cl::cat(trainCategory)));
}

/// Sets the fields of `train` whose flags were given; a negative count is
/// an error.
static LogicalResult applyTrainFlags(::mbt::runtime::TrainOptions &train) {
  for (auto [flag, option] :
       llvm::zip(::mbt::runtime::kTrainCountFlags, trainCounts)) {
    if (option->getNumOccurrences() == 0)
      continue;
    if (*option < 0) {
      llvm::errs() << "mbtc: error: --" << flag.name << " takes N >= 0, got "
                   << *option << "\n";
      return failure();
    }
    train.*flag.field = *option;
  }
  for (auto [flag, option] :
       llvm::zip(::mbt::runtime::kTrainSwitchFlags, trainSwitches))
    if (option->getNumOccurrences() > 0)
      train.*flag.field = *option;
  return success();
}
static cl::opt<int64_t>
    nproc("nproc",
          cl::desc("Train on K processes of this host, the models (or with "
                   "--distribute=data each step's samples) split across "
                   "them: runs mbt-run under PyTorch's torchrun "
                   "(docs/distributed.md)"),
          cl::value_desc("K"), cl::init(1), cl::cat(trainCategory));
static cl::opt<std::string> resumeDir(
    "resume",
    cl::desc("Continue the run in DIR from its checkpoint, with the model "
             "it compiled (DIR/model.so); no spec is given"),
    cl::value_desc("DIR"), cl::cat(trainCategory));

/// Where imports look; set in main from --stdlib-dir and the binary's path.
static ::mbt::FrontendOptions frontendOptions;

/// Parses one input into a module at the "mbt" stage (or prints the AST).
static OwningOpRef<ModuleOp> parseInput(llvm::SourceMgr &sourceMgr,
                                        MLIRContext &ctx, bool printAst,
                                        llvm::raw_ostream &os) {
  StringRef name = sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID())
                       ->getBufferIdentifier();
  if (name.ends_with(".mlir"))
    return parseSourceFile<ModuleOp>(sourceMgr, &ctx);
  std::unique_ptr<::mbt::ModuleAST> ast =
      ::mbt::parseAndCheck(sourceMgr, ctx, frontendOptions);
  if (!ast)
    return nullptr;
  if (printAst) {
    ::mbt::dumpAST(*ast, os);
    return nullptr;
  }
  return ::mbt::mlirGen(ctx, *ast);
}

/// Sets the pipeline's options from mbtc's flags.
static void setLoweringOptions(mlir::mbt::LoweringOptions &codegen) {
  codegen.useBlas = useBlas.getValue();
  codegen.parallel = parallelLoops.getValue();
  codegen.planWorkspace = planWorkspace.getValue();
  codegen.outlineRepeated = outlineRepeated.getValue();
  codegen.remarks = remarks.getValue();
  codegen.vectorMatmulBits = vectorMatmuls ? ::mbt::vectorBits(targetCpu) : 0;
  codegen.attentionKernels = attentionKernels == cl::BOU_UNSET
                                 ? ::mbt::cpuHasAttentionKernelCode(targetCpu)
                                 : attentionKernels == cl::BOU_TRUE;
  codegen.vectorMatmulRows = vectorMatmulRows.getValue();
  codegen.vectorMatmulVectors = vectorMatmulVectors.getValue();
  codegen.vectorMatmulKBlock = vectorMatmulKBlock.getValue();
  codegen.target = target == Target::CUDA ? "cuda" : "cpu";
  codegen.cudaChip = cudaChip.getValue();
  codegen.cudaFormat = emit == Emit::PTX ? "isa" : "fatbin";
  codegen.gradStep = distribute == Distribute::Data;
}

/// The pipeline stage that `emit` prints or starts from (the LLVM
/// dialect for LLVM IR, PTX and the artifact).
static mlir::mbt::Stage stageOf(Emit emit) {
  using mlir::mbt::Stage;
  switch (emit) {
  case Emit::AST:
  case Emit::MBT:
    return Stage::MBT;
  case Emit::Grad:
    return Stage::Grad;
  case Emit::Batched:
    return Stage::Batched;
  case Emit::Fused:
    return Stage::Fused;
  case Emit::Linalg:
    return Stage::Linalg;
  case Emit::LLVMDialect:
  case Emit::LLVMIR:
  case Emit::PTX:
  case Emit::Artifact:
    return Stage::LLVMDialect;
  }
  llvm_unreachable("unknown --emit");
}

/// Compiles one buffer to what `emit` asks for: printed on `os`, or the
/// artifact at `libraryPath`. Errors go through the context's diagnostic
/// handler.
/// --ranks K: the artifact of each rank's slice of the models (`whole` at
/// the mbt stage), beside `libraryPath`.
static LogicalResult
emitRankArtifacts(ModuleOp whole, const mlir::mbt::LoweringOptions &codegen,
                  StringRef libraryPath) {
  auto sweeps = whole.getOps<mlir::mbt::SweepOp>();
  if (sweeps.empty())
    return whole.emitError("--ranks needs a sweep");
  mlir::mbt::SweepOp sweep = *sweeps.begin();
  auto models = static_cast<int64_t>(sweep.getModels());
  if (ranks > models)
    return emitError(sweep.getLoc())
           << "--ranks " << ranks.getValue()
           << " splits the models over more processes than the " << models
           << " models of the sweep";
  for (int64_t rank = 0; rank < ranks; ++rank) {
    OwningOpRef<ModuleOp> module = whole.clone();
    ::mbt::ModelSlice slice = ::mbt::modelSliceOf(models, ranks, rank);
    std::string manifest;
    if (failed(::mbt::selectModels(*module, slice)) ||
        failed(::mbt::lowerTo(*module, mlir::mbt::Stage::LLVMDialect, codegen,
                              &manifest)) ||
        failed(::mbt::emitArtifact(
            *module, manifest, nullptr,
            ::mbt::rankArtifactPath(libraryPath.str(), rank, ranks),
            codegenThreads, targetCpu)))
      return failure();
  }
  return success();
}

static LogicalResult compileBuffer(std::unique_ptr<llvm::MemoryBuffer> buffer,
                                   MLIRContext &ctx, StringRef libraryPath,
                                   llvm::raw_ostream &os) {
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  std::optional<SourceMgrDiagnosticVerifierHandler> verifier;
  std::optional<SourceMgrDiagnosticHandler> handler;
  if (verifyDiagnostics)
    verifier.emplace(sourceMgr, &ctx);
  else
    handler.emplace(sourceMgr, &ctx);

  LogicalResult result = [&]() -> LogicalResult {
    bool printAst = emit == Emit::AST;
    OwningOpRef<ModuleOp> module = parseInput(sourceMgr, ctx, printAst, os);
    if (printAst)
      return success();
    if (!module)
      return failure();
    bool artifact = emit == Emit::Artifact || emit == Emit::LLVMIR;
    // The ranks' slices start from the whole sweep at the mbt stage.
    OwningOpRef<ModuleOp> slices;
    if (emit == Emit::Artifact && ranks > 1)
      slices = module->clone();
    Location sweepLoc = module->getLoc();
    for (auto sweep : module->getOps<mlir::mbt::SweepOp>())
      sweepLoc = sweep.getLoc();
    std::string manifest;
    mlir::mbt::LoweringOptions codegen;
    setLoweringOptions(codegen);
    if (failed(::mbt::lowerTo(*module, stageOf(emit), codegen,
                              artifact ? &manifest : nullptr)))
      return failure();
    if (emit == Emit::PTX)
      return ::mbt::printKernelPTX(*module, os);
    if (!artifact) {
      module->print(os);
      os << "\n";
      return success();
    }
    // The user's arrays, checked from their headers before the artifact
    // is built on them.
    std::string dataProblem = ::mbt::runtime::checkArrayHeaders(manifest);
    if (!dataProblem.empty())
      return emitError(sweepLoc) << dataProblem;
    if (slices && failed(emitRankArtifacts(*slices, codegen, libraryPath)))
      return failure();
    return ::mbt::emitArtifact(*module, manifest,
                               emit == Emit::LLVMIR ? &os : nullptr,
                               libraryPath, codegenThreads, targetCpu);
  }();
  if (verifyDiagnostics)
    return verifier->verify();
  return result;
}

static int compileMain(StringRef libraryPath, MLIRContext &ctx) {
  if (std::string why = ::mbt::checkTargetCpu(targetCpu); !why.empty()) {
    llvm::errs() << "mbtc: error: --mcpu=" << targetCpu << ": " << why << "\n";
    return 1;
  }
  if (ranks > 1 && distribute == Distribute::Data) {
    llvm::errs() << "mbtc: error: --ranks splits the models over the ranks, "
                    "--distribute=data gives every rank every model: give "
                    "one of them\n";
    return 1;
  }
  bool printStage = emit != Emit::Artifact;
  std::string error;
  auto input = openInputFile(inputFile, &error);
  if (!input) {
    llvm::errs() << "mbtc: error: " << error << "\n";
    return 1;
  }
  std::string outPath =
      printStage && outputFile.empty() ? "-" : outputFile.getValue();
  std::unique_ptr<llvm::ToolOutputFile> output;
  if (printStage) {
    output = openOutputFile(outPath, &error);
    if (!output) {
      llvm::errs() << "mbtc: error: " << error << "\n";
      return 1;
    }
  } else {
    // As clang does for -o: said before the compilation, not after it.
    StringRef dir = llvm::sys::path::parent_path(libraryPath);
    if (!dir.empty() && !llvm::sys::fs::is_directory(dir)) {
      llvm::errs() << "mbtc: error: cannot write '" << libraryPath
                   << "': the directory '" << dir << "' does not exist\n";
      return 1;
    }
  }
  llvm::raw_ostream &os = output ? output->os() : llvm::outs();
  auto process = [&](std::unique_ptr<llvm::MemoryBuffer> chunk,
                     llvm::raw_ostream &) {
    return compileBuffer(std::move(chunk), ctx, libraryPath, os);
  };
  LogicalResult result = splitInput
                             ? splitAndProcessBuffer(std::move(input), process,
                                                     os, "# -----", "// -----")
                             : process(std::move(input), os);
  if (failed(result))
    return 1;
  if (output)
    output->keep();
  return 0;
}

/// The run the train options ask for (its artifact and directory still to
/// be set), or failure after reporting a bad flag.
static FailureOr<::mbt::runtime::RunRequest> trainRequest() {
  ::mbt::runtime::RunRequest request;
  request.dataDir = dataDir;
  request.train.initFile = initFile;
  if (failed(applyTrainFlags(request.train)))
    return failure();
  return request;
}

/// --nproc K: mbt-run (beside mbtc) on K processes through torchrun, with
/// the training flags given here.
static int trainOnRanks(StringRef library, StringRef dir, bool resume) {
  std::vector<std::string> args{library.str(), "--out", dir.str()};
  if (resume)
    args.push_back("--resume");
  args.insert(args.end(), {std::string("--") + ::mbt::runtime::kDistributeFlag,
                           ::mbt::runtime::distributeName(distribute)});
  if (!dataDir.empty())
    args.insert(args.end(), {"--data-dir", dataDir});
  if (!initFile.empty())
    args.insert(args.end(), {"--init", initFile});
  for (auto [flag, option] :
       llvm::zip(::mbt::runtime::kTrainCountFlags, trainCounts))
    if (option->getNumOccurrences() > 0)
      args.insert(args.end(), {std::string("--") + flag.name,
                               std::to_string(option->getValue())});
  for (auto [flag, option] :
       llvm::zip(::mbt::runtime::kTrainSwitchFlags, trainSwitches))
    if (option->getNumOccurrences() > 0 && *option)
      args.push_back(std::string("--") + flag.name);
  std::string self =
      llvm::sys::fs::getMainExecutable(nullptr, (void *)&trainOnRanks);
  SmallString<256> mbtRun(llvm::sys::path::parent_path(self));
  llvm::sys::path::append(mbtRun, "mbt-run");
  return ::mbt::runUnderTorchrun(nproc, mbtRun, args);
}

/// `mbtc train --resume DIR`: the run goes on with DIR's artifact.
static int resumeMain(::mbt::runtime::RunRequest request) {
  if (inputFile.getNumOccurrences() > 0) {
    llvm::errs() << "mbtc: error: --resume continues the model compiled in "
                 << resumeDir << "; give no spec (got '" << inputFile << "')\n";
    return 1;
  }
  if (!outDir.empty() && outDir != resumeDir) {
    llvm::errs() << "mbtc: error: --resume writes to the run's own directory '"
                 << resumeDir << "', not --out '" << outDir << "'\n";
    return 1;
  }
  SmallString<256> library(resumeDir.getValue());
  llvm::sys::path::append(library, "model.so");
  if (nproc > 1)
    return trainOnRanks(library, resumeDir, /*resume=*/true);
  request.artifact = library.str().str();
  request.train.outDir = resumeDir;
  request.train.resume = true;
  return ::mbt::runtime::runArtifact(request, "mbtc");
}

static int trainMain(MLIRContext &ctx) {
  // The flags are checked before anything is compiled.
  FailureOr<::mbt::runtime::RunRequest> request = trainRequest();
  if (failed(request))
    return 1;
  if (!resumeDir.empty())
    return resumeMain(*request);
  std::string dir = outDir;
  if (dir.empty())
    dir = ("results/" + llvm::sys::path::stem(inputFile)).str();
  if (std::error_code ec = llvm::sys::fs::create_directories(dir)) {
    llvm::errs() << "mbtc: error: cannot create '" << dir
                 << "': " << ec.message() << "\n";
    return 1;
  }
  SmallString<256> library(dir);
  llvm::sys::path::append(library, "model.so");
  auto start = std::chrono::steady_clock::now();
  if (nproc < 1) {
    llvm::errs() << "mbtc: error: --nproc takes K >= 1, got " << nproc << "\n";
    return 1;
  }
  // Across ranks, the models are split by the compile (a slice each);
  // the data, by the run (every rank has every model).
  if (nproc > 1 && distribute == Distribute::Models)
    ranks.setValue(nproc);
  if (int status = compileMain(library, ctx))
    return status;
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  request->artifact = library.str().str();
  request->train.outDir = dir;
  if (!request->train.quiet && !request->train.reportJson)
    llvm::errs() << "mbtc: compiled " << inputFile << " to " << library
                 << (ranks > 1 ? " and its " + std::to_string(nproc) +
                                     " ranks' slices"
                               : std::string())
                 << " in " << llvm::format("%.2f", seconds) << " s\n";
  if (nproc > 1)
    return trainOnRanks(library, dir, /*resume=*/false);
  return ::mbt::runtime::runArtifact(*request, "mbtc");
}

int main(int argc, char **argv) {
  // Training calls OpenBLAS: make it use the CPU's vector kernels.
  if (argc > 1 && StringRef(argv[1]) == "train")
    ::mbt::runtime::useVectorBlasKernels(argv);
  llvm::InitLLVM init(argc, argv);
  // `mbtc train ...`: a subcommand in the style of git/cargo.
  bool train = argc > 1 && StringRef(argv[1]) == "train";
  SmallVector<char *> args(argv, argv + argc);
  if (train)
    args.erase(args.begin() + 1);
  // MLIR's own options: --mlir-print-ir-after-all, --mlir-timing,
  // --mlir-pass-pipeline-crash-reproducer, --mlir-print-debuginfo, ...
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  declareTrainFlags();
  cl::HideUnrelatedOptions({&category, &trainCategory});
  cl::ParseCommandLineOptions(
      static_cast<int>(args.size()), args.data(),
      "mbt compiler: trains many models at once\n\n"
      "  mbtc [options] spec.mbt            write the artifact (model.so)\n"
      "  mbtc --emit=STAGE spec.mbt         print a stage of the pipeline\n"
      "  mbtc train spec.mbt [--out DIR]    compile, then train every model\n"
      "  mbtc train spec.mbt --nproc K      the same on K processes "
      "(torchrun)\n"
      "  mbtc train --resume DIR            continue a run from its "
      "checkpoint\n");

  // An installed mbtc finds the standard library next to it.
  std::string self =
      llvm::sys::fs::getMainExecutable(argv[0], (void *)&frontendOptions);
  SmallString<256> installed(
      llvm::sys::path::parent_path(llvm::sys::path::parent_path(self)));
  llvm::sys::path::append(installed, "share", "mbt", "stdlib");
  frontendOptions.stdlibDir = ::mbt::findStdlibDir(stdlibDir, installed);
  frontendOptions.sweepSettings.assign(sweepSettings.begin(),
                                       sweepSettings.end());

  // CUDA 13's ptxas takes sm_75 and newer.
  {
    StringRef chip = cudaChip.getValue();
    bool wellFormed = chip.consume_front("sm_");
    chip.consume_back("a"); // sm_90a: the architecture-specific features
    unsigned arch = 0;
    if (!wellFormed || chip.getAsInteger(10, arch) || arch < 75) {
      llvm::errs() << "mbtc: error: --cuda-chip takes sm_XY with XY >= 75 "
                      "(sm_90 for H100/H200), got '"
                   << cudaChip << "'\n";
      return 1;
    }
  }

  if (targetCpu == "help") {
    ::mbt::printTargetCpus();
    return 0;
  }

  DialectRegistry registry;
  ::mbt::registerAllDialects(registry);
  MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();

  if (train) {
    if (emit.getNumOccurrences() > 0) {
      llvm::errs() << "mbtc: error: --emit cannot be used with 'train'\n";
      return 1;
    }
    return trainMain(ctx);
  }
  if (emit == Emit::PTX && target != Target::CUDA) {
    llvm::errs() << "mbtc: error: --emit=ptx needs --target=cuda\n";
    return 1;
  }
  std::string library = outputFile.empty() ? "model.so" : outputFile.getValue();
  return compileMain(library, ctx);
}
