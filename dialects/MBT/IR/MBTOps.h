//===- MBTOps.h - ops of the mbt dialect ------------------------*- C++ -*-===//
#ifndef MBT_DIALECT_MBT_IR_MBTOPS_H
#define MBT_DIALECT_MBT_IR_MBTOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/MBT/IR/LossScaleRules.h"
#include "dialects/MBT/IR/MBTDialect.h"
#include "dialects/MBT/IR/MBTInterfaces.h"

#define GET_OP_CLASSES
#include "dialects/MBT/IR/MBTOps.h.inc"

#endif
