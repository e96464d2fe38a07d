//===- RuntimeKernels.h - calls to the runtime's kernels --------*- C++ -*-===//
//
// The CPU's matmuls (mbt-linalg-to-blas) and convolutions
// (mbt-lower-to-linalg) become calls to kernels the runtime defines
// (docs/abi.md, "Symbols the artifact imports"). Each is declared once per
// module, private, with the C interface that passes memrefs by pointer
// (`_mlir_ciface_`), and takes its operands as memrefs of fully dynamic
// strides, so any view of a buffer goes in as it is.
//
//===----------------------------------------------------------------------===//
#ifndef MBT_COMPILER_CONVERSION_UTILS_RUNTIMEKERNELS_H
#define MBT_COMPILER_CONVERSION_UTILS_RUNTIMEKERNELS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::mbt {

/// A memref of `shape` with a dynamic offset and dynamic strides.
MemRefType anyStridedMemRef(ArrayRef<int64_t> shape, Type element);

/// The same with `rank` dynamic sizes: a kernel's operand type.
MemRefType anyStridedMemRef(int64_t rank, Type element);

/// The kernel `name` of `module`, declared at its start with `type` by `b`
/// (a pattern's rewriter, which then knows of it) on first use.
func::FuncOp lookupOrDeclareKernel(OpBuilder &b, ModuleOp module,
                                   StringRef name, FunctionType type);

} // namespace mlir::mbt

#endif // MBT_COMPILER_CONVERSION_UTILS_RUNTIMEKERNELS_H
