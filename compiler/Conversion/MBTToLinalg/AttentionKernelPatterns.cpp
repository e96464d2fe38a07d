//===- AttentionKernelPatterns.cpp - attention as the runtime's kernels ---===//
//
// On the CPU an f32 mbt.attention and its adjoint, with f32 or bf16
// products, become calls to the runtime's attention kernels
// (mbt_rt_attention_f32 and _grad_f32, or the `_f32_bf16` ones; docs/abi.md),
// which compute each sequence's attention a query row at a time in vector
// registers. The generics of AttentionPatterns.cpp turn a head of a few
// columns into thousands of tiny batched matmuls a step; the kernels have
// no such product. The operands' leading dims L... are collapsed into one
// dim of sequences, S, so one kernel serves every rank; each result is a new
// [S, T, D] buffer, expanded back to [L..., T, D].
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/MBTToLinalg/PopulatePatterns.h"
#include "compiler/Conversion/Utils/RuntimeKernels.h"
#include "dialects/MBT/IR/MBTOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::mbt;

namespace {

/// Whether the kernels compute `op`: f32 values whose products are f32 or
/// rounded to bf16 (an f64 model, or f16 products, keep the generics).
template <typename Op> bool onAttentionKernel(Op op) {
  auto type = cast<RankedTensorType>(op.getQuery().getType());
  std::optional<Type> format = op.getFormat();
  return type.getElementType().isF32() && (!format || format->isBF16());
}

/// Whether `operand` of `op` is one the bf16 kernel rounds: any but the
/// tokens, where the kernels compute `op` with bf16 products.
template <typename Op> bool kernelRounds(Op op, OpOperand &operand) {
  std::optional<Type> format = op.getFormat();
  return onAttentionKernel(op) && format && format->isBF16() &&
         &operand != &op.getTokensMutable();
}

/// The groups of a rank-`rank` shape whose first `leading` dims are one
/// (the sequences S), the others each their own.
SmallVector<ReassociationIndices> sequenceGroups(int64_t leading,
                                                 int64_t rank) {
  SmallVector<ReassociationIndices> groups{ReassociationIndices{}};
  for (int64_t d = 0; d < leading; ++d)
    groups.front().push_back(d);
  for (int64_t d = leading; d < rank; ++d)
    groups.push_back({d});
  return groups;
}

/// `v` [L..., T, X...] as [S, T, X...]: L collapsed into S, or a unit S
/// added where there is no L.
Value asSequences(OpBuilder &b, Location loc, Value v, int64_t leading) {
  auto type = cast<RankedTensorType>(v.getType());
  if (leading > 0)
    return b.create<tensor::CollapseShapeOp>(
        loc, v, sequenceGroups(leading, type.getRank()));
  SmallVector<int64_t> shape{1};
  llvm::append_range(shape, type.getShape());
  SmallVector<OpFoldResult> sizes{b.getIndexAttr(1)};
  llvm::append_range(sizes, tensor::getMixedSizes(b, loc, v));
  return b.create<tensor::ExpandShapeOp>(
      loc, RankedTensorType::get(shape, type.getElementType()), v,
      sequenceGroups(2, shape.size()), sizes);
}

/// A kernel's result [S, T, D] back in `like`'s shape [L..., T, D].
Value fromSequences(OpBuilder &b, Location loc, Value v, Value like,
                    int64_t leading) {
  auto type = cast<RankedTensorType>(like.getType());
  if (leading == 0)
    return b.create<tensor::CollapseShapeOp>(loc, type, v,
                                             sequenceGroups(2, 3));
  return b.create<tensor::ExpandShapeOp>(
      loc, type, v, sequenceGroups(leading, type.getRank()),
      tensor::getMixedSizes(b, loc, like));
}

/// `v` as a kernel's operand: its buffer, read only, of any strides.
Value kernelOperand(OpBuilder &b, Location loc, Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  Value buffer = b.create<bufferization::ToMemrefOp>(
      loc, anyStridedMemRef(type.getShape(), type.getElementType()), v,
      /*read_only=*/true);
  return b.create<memref::CastOp>(
      loc, anyStridedMemRef(type.getRank(), type.getElementType()), buffer);
}

/// Calls the kernel `name` on `inputs` (f32 [S, T, D] but the i32 tokens
/// [S, T] fourth) and `results` new [S, T, D] buffers of `sequences`' shape,
/// then the heads and the causal flag; returns the results as tensors.
SmallVector<Value> callAttentionKernel(OpBuilder &b, Location loc,
                                       StringRef name, ValueRange inputs,
                                       int64_t results, int64_t heads,
                                       bool causal) {
  Value sequences = inputs[0];
  auto type = cast<RankedTensorType>(sequences.getType());
  SmallVector<Value> args;
  for (Value v : inputs)
    args.push_back(kernelOperand(b, loc, v));
  SmallVector<Value> dynamicSizes;
  for (int64_t d = 0; d < 2; ++d)
    if (type.isDynamicDim(d))
      dynamicSizes.push_back(b.create<tensor::DimOp>(loc, sequences, d));
  auto bufferType = MemRefType::get(type.getShape(), type.getElementType());
  SmallVector<Value> buffers;
  for (int64_t r = 0; r < results; ++r) {
    buffers.push_back(b.create<memref::AllocOp>(loc, bufferType, dynamicSizes));
    args.push_back(b.create<memref::CastOp>(
        loc, anyStridedMemRef(3, type.getElementType()), buffers.back()));
  }
  args.push_back(b.create<arith::ConstantIntOp>(loc, heads, 64));
  args.push_back(b.create<arith::ConstantIntOp>(loc, causal, 64));
  SmallVector<Type> argTypes;
  for (Value arg : args)
    argTypes.push_back(arg.getType());
  auto module =
      b.getInsertionBlock()->getParentOp()->getParentOfType<ModuleOp>();
  func::FuncOp kernel =
      lookupOrDeclareKernel(b, module, name, b.getFunctionType(argTypes, {}));
  b.create<func::CallOp>(loc, kernel, args);
  SmallVector<Value> tensors;
  for (Value buffer : buffers)
    tensors.push_back(b.create<bufferization::ToTensorOp>(
        loc, buffer, /*restrict=*/true, /*writable=*/true));
  return tensors;
}

/// The kernel of `op`: `base` and the format's suffix.
template <typename Op> std::string kernelName(Op op, StringRef base) {
  return (base + (op.getFormat() ? "_f32_bf16" : "_f32")).str();
}

/// mbt.attention (`Adjoint` false) or mbt.attention_grad as a call to the
/// runtime's kernel. Benefit 2: before the generics, for the ops the
/// kernels compute.
template <typename Op>
struct AttentionKernelPattern : public OpConversionPattern<Op> {
  AttentionKernelPattern(MLIRContext *context)
      : OpConversionPattern<Op>(context, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(Op op, typename Op::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!onAttentionKernel(op))
      return failure();
    constexpr bool adjoint = std::is_same_v<Op, AttentionGradOp>;
    Location loc = op.getLoc();
    Value query = adaptor.getQuery();
    int64_t leading = cast<RankedTensorType>(query.getType()).getRank() - 2;
    SmallVector<Value> inputs;
    for (Value v : adaptor.getOperands())
      inputs.push_back(asSequences(rewriter, loc, v, leading));
    SmallVector<Value> results = callAttentionKernel(
        rewriter, loc,
        kernelName(op, adjoint ? "mbt_rt_attention_grad" : "mbt_rt_attention"),
        inputs, op->getNumResults(), op.getHeads(), op.getCausal());
    for (Value &result : results)
      result = fromSequences(rewriter, loc, result, query, leading);
    rewriter.replaceOp(op, results);
    return success();
  }
};

} // namespace

void mlir::mbt::populateAttentionKernelPatterns(RewritePatternSet &patterns) {
  patterns.add<AttentionKernelPattern<AttentionOp>,
               AttentionKernelPattern<AttentionGradOp>>(patterns.getContext());
}

bool mlir::mbt::isRoundedByAttentionKernel(OpOperand &operand) {
  Operation *op = operand.getOwner();
  if (auto attention = dyn_cast<AttentionOp>(op))
    return kernelRounds(attention, operand);
  if (auto grad = dyn_cast<AttentionGradOp>(op))
    return kernelRounds(grad, operand);
  return false;
}
