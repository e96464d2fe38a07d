//===- RuntimeKernels.cpp - calls to the runtime's kernels ----------------===//
#include "compiler/Conversion/Utils/RuntimeKernels.h"

using namespace mlir;

MemRefType mlir::mbt::anyStridedMemRef(ArrayRef<int64_t> shape, Type element) {
  SmallVector<int64_t> strides(shape.size(), ShapedType::kDynamic);
  auto layout = StridedLayoutAttr::get(element.getContext(),
                                       ShapedType::kDynamic, strides);
  return MemRefType::get(shape, element, layout);
}

MemRefType mlir::mbt::anyStridedMemRef(int64_t rank, Type element) {
  return anyStridedMemRef(SmallVector<int64_t>(rank, ShapedType::kDynamic),
                          element);
}

func::FuncOp mlir::mbt::lookupOrDeclareKernel(OpBuilder &b, ModuleOp module,
                                              StringRef name,
                                              FunctionType type) {
  if (auto kernel = module.lookupSymbol<func::FuncOp>(name))
    return kernel;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  auto kernel = b.create<func::FuncOp>(module.getLoc(), name, type);
  kernel.setPrivate();
  kernel->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  return kernel;
}
