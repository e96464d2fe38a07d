//===- LinalgToBlas.cpp - batched matmuls on memrefs to the runtime BLAS --===//
//
// After bufferization the batched matmuls of the train step read strided
// views of the flat parameter buffer. This pass replaces each with a call
// to `mbt_rt_batch_matmul_f32` (or `_f64` in an f64 model; docs/abi.md),
// passing fully dynamic strided memrefs, so the runtime can hand every
// model's product to sgemm (dgemm). linalg
// accumulates into C; the kernel does too when asked, and when the op just
// before zero-filled C (a fill, or a copy of a zero-filled buffer), that op
// is dropped and the kernel overwrites C (sgemm with beta = 0), which saves
// a pass over C.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/Passes.h"
#include "compiler/Conversion/Utils/BatchMatmul.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir::mbt {
#define GEN_PASS_DEF_MBTLINALGTOBLAS
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::mbt

using namespace mlir;
using namespace mlir::mbt;

/// The runtime kernel for matmuls of `element` (f32 or f64) on `device`'s
/// buffers (cpu or cuda). On a GPU, f32 operands that hold bf16 or f16
/// values (`format`, from kOperandsFormatAttr) go to a kernel that
/// multiplies them in that format on the tensor cores, accumulating in f32:
/// the same exact products, several times the f32 throughput. The CPU's
/// BLAS has no such products: its f32 kernel computes the same values.
static std::string kernelName(Type element, StringRef device,
                              std::optional<Type> format) {
  std::string name =
      device == "cuda" ? "mbt_rt_cuda_batch_matmul_" : "mbt_rt_batch_matmul_";
  name += element.isF64() ? "f64" : "f32";
  if (device == "cuda" && element.isF32() && format)
    name += format->isBF16() ? "_bf16" : "_f16";
  return name;
}

static MemRefType dynamicStrided3D(Type element) {
  int64_t dyn = ShapedType::kDynamic;
  auto layout =
      StridedLayoutAttr::get(element.getContext(), dyn, {dyn, dyn, dyn});
  return MemRefType::get({dyn, dyn, dyn}, element, layout);
}

static func::FuncOp getOrDeclareKernel(ModuleOp module, Type element,
                                       StringRef device,
                                       std::optional<Type> format) {
  std::string name = kernelName(element, device, format);
  if (auto f = module.lookupSymbol<func::FuncOp>(name))
    return f;
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  MemRefType m = dynamicStrided3D(element);
  auto type = b.getFunctionType(
      {m, m, m, b.getI64Type(), b.getI64Type(), b.getI64Type()}, {});
  auto f = b.create<func::FuncOp>(module.getLoc(), name, type);
  f.setPrivate();
  f->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  return f;
}

namespace {
struct LinalgToBlasPass
    : public mlir::mbt::impl::MBTLinalgToBlasBase<LinalgToBlasPass> {
  using MBTLinalgToBlasBase::MBTLinalgToBlasBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (device != "cpu" && device != "cuda") {
      module.emitError("mbt-linalg-to-blas: device must be cpu or cuda, got '")
          << device << "'";
      return signalPassFailure();
    }
    SmallVector<linalg::LinalgOp> matmuls;
    module.walk([&](linalg::LinalgOp op) {
      if (matchBatchMatmul(op))
        matmuls.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : matmuls) {
      BatchMatmulKind kind = *matchBatchMatmul(op);
      Type element = getElementTypeOrSelf(op->getOperand(0).getType());
      std::optional<Type> format;
      if (auto attr = op->getAttrOfType<TypeAttr>(kOperandsFormatAttr);
          attr && (attr.getValue().isBF16() || attr.getValue().isF16()))
        format = attr.getValue();
      func::FuncOp kernel = getOrDeclareKernel(module, element, device, format);
      MemRefType dyn = dynamicStrided3D(element);
      Operation *zeroing = zeroingBefore(op);
      rewriter.setInsertionPoint(op);
      Location loc = op.getLoc();
      SmallVector<Value> args;
      for (Value v : op->getOperands())
        args.push_back(rewriter.create<memref::CastOp>(loc, dyn, v));
      args.push_back(
          rewriter.create<arith::ConstantIntOp>(loc, kind.transposeA, 64));
      args.push_back(
          rewriter.create<arith::ConstantIntOp>(loc, kind.transposeB, 64));
      args.push_back(rewriter.create<arith::ConstantIntOp>(loc, !zeroing, 64));
      rewriter.create<func::CallOp>(loc, kernel, args);
      if (remarks)
        reportCall(op, kernel, kind, zeroing);
      if (zeroing)
        rewriter.eraseOp(zeroing);
      rewriter.eraseOp(op);
    }
  }

  /// The decision for `op`, as a remark the user asks for with `remarks`.
  static void reportCall(linalg::LinalgOp op, func::FuncOp kernel,
                         BatchMatmulKind kind, Operation *zeroing) {
    auto remark = op.emitRemark() << "batched matmul: " << kernel.getName();
    if (kind.transposeA)
      remark << ", A transposed";
    if (kind.transposeB)
      remark << ", B transposed";
    remark << (zeroing ? ", overwrites C (its zero fill is dropped)"
                       : ", accumulates into C");
  }
};
} // namespace
