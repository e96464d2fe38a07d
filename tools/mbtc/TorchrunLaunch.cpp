//===- TorchrunLaunch.cpp - mbtc train --nproc: mbt-run under torchrun ----===//
//
// `mbtc train --nproc K` is `torchrun --standalone --nproc-per-node K
// --no-python mbt-run ...`: the launcher PyTorch users already run, not one
// of mbt's own. It is run as torchrun's own Python entry point
// (torch.distributed.run.main) in the interpreter its script names, after
// one correction: PyTorch before 2.0 parses its redirect flags with an
// iteration over an IntFlag that Python 3.11 no longer makes over the flag
// 0, so its default ("0": no redirect) fails there (Debian 12's torch 1.13
// under its Python 3.11). The correction maps that one case to Std.NONE and
// changes nothing where the parser works.
//
//===----------------------------------------------------------------------===//
#include "TorchrunLaunch.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

namespace {
constexpr const char *kTorchrunMain = R"py(import sys
from torch.distributed.elastic.multiprocessing import api
parse = api.Std.from_str.__func__
def from_str(cls, vm):
    std = parse(cls, vm)
    if isinstance(std, dict):
        return {rank: value or api.Std.NONE for rank, value in std.items()}
    return std or api.Std.NONE
api.Std.from_str = classmethod(from_str)
from torch.distributed.run import main
sys.exit(main())
)py";

/// The interpreter of a script's "#!" line (torchrun is a Python script
/// that PyTorch's installer wrote), or "".
std::string interpreterOf(llvm::StringRef script) {
  auto text = llvm::MemoryBuffer::getFile(script);
  if (!text)
    return "";
  llvm::StringRef first = (*text)->getBuffer().split('\n').first;
  if (!first.consume_front("#!"))
    return "";
  return first.trim().split(' ').first.str();
}
} // namespace

int mbt::runUnderTorchrun(int64_t nproc, llvm::StringRef mbtRun,
                          llvm::ArrayRef<std::string> args) {
  llvm::ErrorOr<std::string> torchrun =
      llvm::sys::findProgramByName("torchrun");
  std::string python = torchrun ? interpreterOf(*torchrun) : "";
  if (python.empty()) {
    llvm::errs() << "mbtc: error: --nproc runs PyTorch's torchrun, which is "
                    "not on PATH (apt-get install python3-torch, or pip "
                    "install torch)\n";
    return 1;
  }
  std::string procs = std::to_string(nproc);
  llvm::SmallVector<llvm::StringRef> argv{
      python, "-c",          kTorchrunMain, "--standalone", "--nproc_per_node",
      procs,  "--no_python", mbtRun};
  for (const std::string &arg : args)
    argv.push_back(arg);
  std::string error;
  int status = llvm::sys::ExecuteAndWait(python, argv, /*Env=*/std::nullopt,
                                         /*Redirects=*/{}, /*SecondsToWait=*/0,
                                         /*MemoryLimit=*/0, &error);
  if (status < 0) {
    llvm::errs() << "mbtc: error: cannot run torchrun: " << error << "\n";
    return 1;
  }
  return status;
}
