//===- TorchrunLaunch.h - mbtc train --nproc: mbt-run under torchrun -*- C++
//-*-//
#ifndef MBT_TOOLS_MBTC_TORCHRUNLAUNCH_H
#define MBT_TOOLS_MBTC_TORCHRUNLAUNCH_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace mbt {

/// Runs `mbtRun args...` as `nproc` processes of this host through
/// PyTorch's torchrun (its own launcher, torch.distributed.run, with a
/// rendezvous of its own: --standalone), waits for them and returns the
/// launch's exit status; 1 after a message if torchrun is not found.
int runUnderTorchrun(int64_t nproc, llvm::StringRef mbtRun,
                     llvm::ArrayRef<std::string> args);

} // namespace mbt

#endif // MBT_TOOLS_MBTC_TORCHRUNLAUNCH_H
