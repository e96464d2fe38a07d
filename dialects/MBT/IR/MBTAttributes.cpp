//===- MBTAttributes.cpp - the mbt dialect's attributes -------------------===//
#include "dialects/MBT/IR/MBTDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::mbt;

#include "dialects/MBT/IR/MBTEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/MBT/IR/MBTAttributes.cpp.inc"

void MBTDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/MBT/IR/MBTAttributes.cpp.inc"
      >();
}
