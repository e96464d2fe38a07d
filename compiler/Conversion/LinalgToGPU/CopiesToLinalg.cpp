//===- CopiesToLinalg.cpp - memref.copy as a linalg.copy ------------------===//
//
// On the CPU a memref.copy becomes a call to the memref runtime's copy
// function. For the CUDA target every buffer lives in device memory, which
// host code must not touch, so each copy becomes a linalg.copy: an
// elementwise loop nest that the GPU mapping turns into a kernel like any
// other.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/Passes.h"

namespace mlir::mbt {
#define GEN_PASS_DEF_MBTCOPIESTOLINALG
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::mbt

using namespace mlir;

namespace {
struct CopiesToLinalgPass
    : public mlir::mbt::impl::MBTCopiesToLinalgBase<CopiesToLinalgPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp copy) { copies.push_back(copy); });
    for (memref::CopyOp copy : copies) {
      OpBuilder b(copy);
      b.create<linalg::CopyOp>(copy.getLoc(), copy.getSource(),
                               copy.getTarget());
      copy.erase();
    }
  }
};
} // namespace
