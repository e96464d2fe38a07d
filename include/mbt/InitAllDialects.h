//===- InitAllDialects.h - the one registration used by every tool -*- C++
//-*-===//
//
// mbtc, mbt-opt and the tests register exactly these dialects and passes,
// so that a pipeline printed by one tool parses in another.
//
//===----------------------------------------------------------------------===//
#ifndef MBT_INITALLDIALECTS_H
#define MBT_INITALLDIALECTS_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mbt {
/// Registers the mbt dialect and every upstream dialect the pipeline uses,
/// with their interface and translation implementations.
void registerAllDialects(mlir::DialectRegistry &registry);
/// Registers the mbt passes, the pipelines and the upstream passes they use.
void registerAllPasses();
} // namespace mbt

#endif
