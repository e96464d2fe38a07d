//===- DropMetadata.cpp - erase what only the manifest needed -------------===//
#include "compiler/Conversion/Passes.h"
#include "dialects/MBT/IR/MBTOps.h"

namespace mlir::mbt {
#define GEN_PASS_DEF_MBTDROPMETADATA
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::mbt

using namespace mlir;
using namespace mlir::mbt;

namespace {
struct DropMetadataPass
    : public mlir::mbt::impl::MBTDropMetadataBase<DropMetadataPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (SweepOp sweep : llvm::make_early_inc_range(module.getOps<SweepOp>()))
      sweep.erase();
    // Fused updates have been lowered with copies of their rules.
    for (OptimizerOp rule :
         llvm::make_early_inc_range(module.getOps<OptimizerOp>()))
      rule.erase();
    SmallVector<StringAttr> names;
    for (NamedAttribute attr : module->getAttrs())
      if (attr.getName().getValue().starts_with("mbt."))
        names.push_back(attr.getName());
    for (StringAttr name : names)
      module->removeAttr(name);
  }
};
} // namespace
