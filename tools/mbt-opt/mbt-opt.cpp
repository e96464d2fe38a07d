//===- mbt-opt.cpp - mlir-opt with the mbt dialect and passes -------------===//
#include "mbt/InitAllDialects.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mbt::registerAllDialects(registry);
  mbt::registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "mbt optimizer driver\n", registry));
}
