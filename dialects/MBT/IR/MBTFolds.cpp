//===- MBTFolds.cpp - folders of the mbt ops ------------------------------===//
#include "dialects/MBT/IR/MBTOps.h"

using namespace mlir;
using namespace mlir::mbt;

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

/// reshape to the same type is the identity.
OpFoldResult ReshapeOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

/// unbroadcast that sums over nothing is the identity.
OpFoldResult UnbroadcastOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}
