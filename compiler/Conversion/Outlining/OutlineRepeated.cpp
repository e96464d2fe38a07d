//===- OutlineRepeated.cpp - one function per repeated loop nest ----------===//
//
// A deep model's blocks lower to the same linalg ops and loops, once per
// block and again in the eval step, on other views of the parameters and
// the workspace. Generated inline, each copy went through every later pass
// and through LLVM's optimizer and code generator: a 12-block transformer
// compiled in 24 s, twelve times the work of one block. This pass keys each
// top-level op that has regions by the function it would become, and gives
// every key that occurs twice or more one function that all its
// occurrences call. An op that occurs once stays where it is, so a model
// without repeats compiles to the code it did before.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

#include <unordered_map>

namespace mlir::mbt {
#define GEN_PASS_DEF_MBTOUTLINEREPEATED
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::mbt

using namespace mlir;

namespace {

/// A top-level op that may become a call: the loop nests and linalg ops
/// of a function's body, which write through memrefs and return nothing.
bool isOutlinable(Operation &op) {
  return op.getNumResults() == 0 &&
         isa<linalg::LinalgOp, scf::ParallelOp, scf::ForOp, scf::ForallOp>(op);
}

/// The values `op` uses that are defined outside it: its operands, then
/// what its regions capture, each once, in the order of first use.
SmallVector<Value> capturedValues(Operation *op) {
  llvm::SetVector<Value> values(op->operand_begin(), op->operand_end());
  getUsedValuesDefinedAbove(op->getRegions(), values);
  return values.takeVector();
}

/// Whether every use of `value` inside `op` reads or writes elements
/// without deriving a type from its layout, so that the value may arrive
/// with a dynamic offset. A subview or reshape would infer another result
/// type from it.
bool usesOnlyElements(Value value, Operation *op) {
  return llvm::all_of(value.getUses(), [&](OpOperand &use) {
    Operation *user = use.getOwner();
    if (!op->isAncestor(user))
      return true;
    return isa<linalg::LinalgOp, memref::LoadOp, memref::StoreOp,
               memref::DimOp>(user);
  });
}

/// `type` with a strided layout's static offset made dynamic: the views of
/// two blocks' parameters differ in the offset alone. Other types as they
/// are.
Type withDynamicOffset(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref)
    return type;
  auto layout = dyn_cast<StridedLayoutAttr>(memref.getLayout());
  if (!layout || ShapedType::isDynamic(layout.getOffset()))
    return type;
  auto dynamic = StridedLayoutAttr::get(type.getContext(), ShapedType::kDynamic,
                                        layout.getStrides());
  return MemRefType::get(memref.getShape(), memref.getElementType(), dynamic,
                         memref.getMemorySpace());
}

/// One occurrence of an op: the op, and the values its call passes.
struct Occurrence {
  Operation *op;
  SmallVector<Value> arguments;
};

/// The function an op would become: its captured constants cloned inside,
/// every other captured value an argument.
struct Candidate {
  func::FuncOp function;
  Occurrence occurrence;
};

Candidate buildCandidate(Operation *op) {
  OpBuilder b(op->getContext());
  Location loc = op->getLoc();
  Candidate candidate{nullptr, {op, {}}};
  SmallVector<Value> constants;
  SmallVector<Type> argumentTypes;
  for (Value value : capturedValues(op)) {
    if (matchPattern(value, m_Constant())) {
      constants.push_back(value);
      continue;
    }
    candidate.occurrence.arguments.push_back(value);
    argumentTypes.push_back(usesOnlyElements(value, op)
                                ? withDynamicOffset(value.getType())
                                : value.getType());
  }
  candidate.function = b.create<func::FuncOp>(
      loc, "mbt_repeated", b.getFunctionType(argumentTypes, {}));
  Block *entry = candidate.function.addEntryBlock();
  b.setInsertionPointToStart(entry);
  IRMapping map;
  for (Value constant : constants)
    map.map(constant, b.clone(*constant.getDefiningOp())->getResult(0));
  for (auto [value, argument] :
       llvm::zip(candidate.occurrence.arguments, entry->getArguments()))
    map.map(value, argument);
  b.clone(*op, map);
  b.create<func::ReturnOp>(loc);
  return candidate;
}

/// The text of `function`: equal texts, equal functions.
std::string keyOf(func::FuncOp function) {
  std::string key;
  llvm::raw_string_ostream os(key);
  function->print(os, OpPrintingFlags()
                          .printGenericOpForm()
                          .assumeVerified()
                          .elideLargeElementsAttrs(1 << 30));
  return key;
}

/// Replaces `occurrence` with a call to `function`, casting the arguments
/// whose offset the function takes as dynamic.
void replaceWithCall(const Occurrence &occurrence, func::FuncOp function) {
  OpBuilder b(occurrence.op);
  Location loc = occurrence.op->getLoc();
  SmallVector<Value> operands;
  for (auto [value, type] :
       llvm::zip(occurrence.arguments, function.getArgumentTypes())) {
    operands.push_back(value.getType() == type
                           ? value
                           : b.create<memref::CastOp>(loc, type, value));
  }
  b.create<func::CallOp>(loc, function, operands);
  occurrence.op->erase();
}

/// The candidates of a module grouped by key, in the order of their first
/// occurrence: the function of the first, and every occurrence.
struct Group {
  func::FuncOp function;
  SmallVector<Occurrence> occurrences;
};
using Groups = llvm::MapVector<std::string, Group,
                               std::unordered_map<std::string, unsigned>>;

void addCandidate(Groups &groups, Candidate candidate) {
  auto [it, inserted] =
      groups.insert({keyOf(candidate.function), Group{candidate.function, {}}});
  if (!inserted)
    candidate.function->erase();
  it->second.occurrences.push_back(std::move(candidate.occurrence));
}

struct OutlineRepeatedPass
    : public mlir::mbt::impl::MBTOutlineRepeatedBase<OutlineRepeatedPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    Groups groups;
    for (auto function : module.getOps<func::FuncOp>()) {
      if (function.isDeclaration())
        continue;
      for (Operation &op : function.getBody().getOps())
        if (isOutlinable(op))
          addCandidate(groups, buildCandidate(&op));
    }

    SymbolTable symbols(module);
    MLIRContext *ctx = &getContext();
    for (auto &[key, group] : groups) {
      func::FuncOp function = group.function;
      if (group.occurrences.size() < 2) {
        function->erase();
        continue;
      }
      function.setPrivate();
      function->setAttr("no_inline", UnitAttr::get(ctx));
      function->setAttr("llvm.linkage",
                        LLVM::LinkageAttr::get(ctx, LLVM::Linkage::Internal));
      symbols.insert(function);
      for (const Occurrence &occurrence : group.occurrences)
        replaceWithCall(occurrence, function);
    }
  }
};

} // namespace
