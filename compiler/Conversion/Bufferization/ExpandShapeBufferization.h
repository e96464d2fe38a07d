//===- ExpandShapeBufferization.h - tensor.expand_shape as a view -*- C++
//-*-===//
#ifndef MBT_COMPILER_CONVERSION_BUFFERIZATION_EXPANDSHAPEBUFFERIZATION_H
#define MBT_COMPILER_CONVERSION_BUFFERIZATION_EXPANDSHAPEBUFFERIZATION_H

namespace mlir {
class DialectRegistry;
namespace mbt {

/// Bufferizes tensor.expand_shape to a memref.expand_shape of its output
/// shape, dynamic groups included. Must come before
/// tensor::registerBufferizableOpInterfaceExternalModels, whose model for
/// the op it replaces.
void registerExpandShapeBufferization(DialectRegistry &registry);

} // namespace mbt
} // namespace mlir

#endif
