//===- ExpandShapeBufferization.cpp - tensor.expand_shape as a view -------===//
//
// MLIR 19's bufferization of tensor.expand_shape builds the
// memref.expand_shape from the result type alone, inferring its output
// shape, which it cannot where a group expands into two dynamic sizes (a
// [M, B T, D] product back into [M, B, T, D] sequences): the op it builds
// fails to verify. This model is upstream's but for the output shape,
// which it takes from the tensor op (a TODO in upstream's model).
// Registered before upstream's tensor models, it is the one a
// tensor.expand_shape gets: an op keeps the first model attached for an
// interface (test/Conversion/expand-shape-bufferization.mlir checks it).
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/Bufferization/ExpandShapeBufferization.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace mlir::bufferization;

namespace {

struct ExpandShapeAsView
    : public BufferizableOpInterface::ExternalModel<ExpandShapeAsView,
                                                    tensor::ExpandShapeOp> {
  bool bufferizesToMemoryRead(Operation *, OpOperand &,
                              const AnalysisState &) const {
    return false; // a view: it never copies
  }

  bool bufferizesToMemoryWrite(Operation *, OpOperand &,
                               const AnalysisState &) const {
    return false;
  }

  AliasingValueList getAliasingValues(Operation *op, OpOperand &,
                                      const AnalysisState &) const {
    return {{op->getOpResult(0), BufferRelation::Equivalent}};
  }

  FailureOr<BaseMemRefType>
  getBufferType(Operation *op, Value, const BufferizationOptions &options,
                SmallVector<Value> &invocationStack) const {
    auto expand = cast<tensor::ExpandShapeOp>(op);
    FailureOr<BaseMemRefType> source =
        bufferization::getBufferType(expand.getSrc(), options, invocationStack);
    if (failed(source))
      return failure();
    FailureOr<MemRefType> expanded = memref::ExpandShapeOp::computeExpandedType(
        cast<MemRefType>(*source), expand.getResultType().getShape(),
        expand.getReassociationIndices());
    if (failed(expanded))
      return failure();
    return cast<BaseMemRefType>(*expanded);
  }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options) const {
    auto expand = cast<tensor::ExpandShapeOp>(op);
    FailureOr<Value> buffer = getBuffer(rewriter, expand.getSrc(), options);
    if (failed(buffer))
      return failure();
    FailureOr<BaseMemRefType> type =
        bufferization::getBufferType(expand.getResult(), options);
    if (failed(type))
      return failure();
    replaceOpWithNewBufferizedOp<memref::ExpandShapeOp>(
        rewriter, op, *type, *buffer, expand.getReassociationIndices(),
        getMixedValues(expand.getStaticOutputShape(), expand.getOutputShape(),
                       rewriter));
    return success();
  }
};

} // namespace

void mlir::mbt::registerExpandShapeBufferization(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, tensor::TensorDialect *) {
    tensor::ExpandShapeOp::attachInterface<ExpandShapeAsView>(*context);
  });
}
