//===- MBTDialect.cpp - the mbt dialect -----------------------------------===//
#include "dialects/MBT/IR/MBTDialect.h"
#include "dialects/MBT/IR/LossScaleRules.h"
#include "dialects/MBT/IR/MBTOps.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace mlir::mbt;

#include "dialects/MBT/IR/MBTInterfaces.cpp.inc"
#include "dialects/MBT/IR/MBTOpsDialect.cpp.inc"

void MBTDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/MBT/IR/MBTOps.cpp.inc"
      >();
  registerAttributes();
}

Operation *MBTDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                           Type type, Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return builder.create<ConstantOp>(loc, type, elements);
}

LogicalResult MBTDialect::verifyRegionArgAttribute(Operation *op,
                                                   unsigned regionIndex,
                                                   unsigned argIndex,
                                                   NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == MBTDialect::ParamAttrHelper::getNameStr() ||
      name == MBTDialect::BufferAttrHelper::getNameStr() ||
      name == MBTDialect::InputAttrHelper::getNameStr() ||
      name == MBTDialect::TargetAttrHelper::getNameStr() ||
      name == MBTDialect::StateAttrHelper::getNameStr() ||
      name == MBTDialect::HyperAttrHelper::getNameStr() ||
      name == MBTDialect::StepAttrHelper::getNameStr()) {
    if (!isa<StringAttr>(attr.getValue()))
      return op->emitOpError(name) << " must be a string naming the argument";
    return success();
  }
  if (name == MBTDialect::LossScaleAttrHelper::getNameStr()) {
    // The three buffers of a dynamic loss scale (mbt-autocast, f16).
    auto role = dyn_cast<StringAttr>(attr.getValue());
    if (!role || llvm::none_of(kLossScaleBuffers, [&](const auto &buffer) {
          return buffer.role == role.getValue();
        }))
      return op->emitOpError("mbt.loss_scale must be \"scale\", "
                             "\"good_steps\" or \"skipped_steps\"");
    return success();
  }
  if (name == MBTDialect::InitAttrHelper::getNameStr()) {
    // Its kind and arguments are checked where it is made (InitAttr::verify).
    if (!isa<InitAttr>(attr.getValue()))
      return op->emitOpError("mbt.init must be an #mbt.init attribute");
    return success();
  }
  if (name == MBTDialect::ClassesAttrHelper::getNameStr() ||
      name == MBTDialect::VocabAttrHelper::getNameStr()) {
    auto classes = dyn_cast<IntegerAttr>(attr.getValue());
    if (!classes || classes.getInt() < 1)
      return op->emitOpError(name) << " must be a positive integer";
    return success();
  }
  return op->emitOpError("unknown mbt argument attribute '") << name << "'";
}
