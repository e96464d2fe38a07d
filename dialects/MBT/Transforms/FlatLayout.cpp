//===- FlatLayout.cpp - entry points over the flat [M, P] layout ---------===//
#include "dialects/MBT/Transforms/FlatLayout.h"
#include "dialects/MBT/IR/MBTOps.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"

#include <cmath>

using namespace mlir;
using namespace mlir::mbt;

DictionaryAttr mlir::mbt::writableArgAttrs(OpBuilder &b, bool writable) {
  return b.getDictionaryAttr(
      b.getNamedAttr("bufferization.writable", b.getBoolAttr(writable)));
}

func::FuncOp mlir::mbt::buildEntryPoint(
    OpBuilder &b, ModuleOp module, StringRef name, func::FuncOp source,
    ArrayRef<ParamSlot> slots, int64_t numModels, Type element,
    bool paramsWritable, ArrayRef<std::pair<Type, bool>> extraArgs,
    function_ref<void(IRMapping &, Block *)> mapExtra,
    function_ref<SmallVector<ResultInto>(IRMapping &, Block *, func::ReturnOp)>
        finish) {
  Location loc = source.getLoc();
  int64_t numParams = static_cast<int64_t>(slots.size());
  // (Frozen parameters come last in a row, whatever their argument order.)
  int64_t paramCount = 0;
  for (const ParamSlot &slot : slots)
    paramCount = std::max(paramCount, slot.offset + slot.size);
  unsigned numSourceArgs = source.getNumArguments();
  // The ABI passes x as [M, B, F] (docs/abi.md); a model whose input has
  // a per-sample shape of higher rank reshapes it to [M, B, d0, d1, ...].
  auto modelXType =
      cast<RankedTensorType>(source.getArgumentTypes()[numSourceArgs - 2]);
  RankedTensorType xType = modelXType;
  if (modelXType.getRank() > 3) {
    int64_t features = 1;
    for (int64_t d : modelXType.getShape().drop_front(2))
      features *= d;
    xType = RankedTensorType::get(
        {modelXType.getDimSize(0), modelXType.getDimSize(1), features},
        modelXType.getElementType());
  }
  Type yType = source.getArgumentTypes()[numSourceArgs - 1];
  auto ret = cast<func::ReturnOp>(source.getBody().front().getTerminator());
  unsigned numOutputs = ret.getNumOperands();
  unsigned firstOutput = numOutputs;
  if (auto outputs = source->getAttrOfType<ArrayAttr>(
          MBTDialect::OutputsAttrHelper::getNameStr()))
    firstOutput = numOutputs - outputs.size();
  int64_t k = numOutputs - firstOutput;
  auto outType = RankedTensorType::get({numModels, k}, element);
  auto flatType = RankedTensorType::get({numModels, paramCount}, element);

  SmallVector<Type> argTypes{flatType};
  SmallVector<DictionaryAttr> argAttrs{writableArgAttrs(b, paramsWritable)};
  for (auto [type, writable] : extraArgs) {
    argTypes.push_back(type);
    // Bufferization's writability applies to tensor arguments only.
    argAttrs.push_back(isa<MemRefType>(type) ? b.getDictionaryAttr({})
                                             : writableArgAttrs(b, writable));
  }
  // x is a strided memref: every model may read one shared batch, which the
  // runtime passes with stride 0 along the model dimension (docs/abi.md).
  // The features stay contiguous (stride 1), so that the matmuls on x
  // still go to BLAS.
  int64_t dyn = ShapedType::kDynamic;
  auto xMemRefType = MemRefType::get(
      xType.getShape(), xType.getElementType(),
      StridedLayoutAttr::get(b.getContext(), dyn, {dyn, dyn, 1}));
  argTypes.append({xMemRefType, yType, outType});
  argAttrs.append({b.getDictionaryAttr({}), writableArgAttrs(b, false),
                   writableArgAttrs(b, true)});

  b.setInsertionPointToEnd(module.getBody());
  auto func =
      b.create<func::FuncOp>(loc, name, b.getFunctionType(argTypes, {}));
  func.setAllArgAttrs(argAttrs);
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToEnd(entry);

  FlatLayout layout(b, numModels, element);
  IRMapping mapping;
  for (int64_t p = 0; p < numParams; ++p)
    mapping.map(source.getArgument(p),
                layout.extract(loc, entry->getArgument(0), slots[p]));
  mapExtra(mapping, entry);
  unsigned nargs = entry->getNumArguments();
  Value x = b.create<bufferization::ToTensorOp>(
      loc, xType, entry->getArgument(nargs - 3), /*restrict=*/true,
      /*writable=*/false);
  if (xType != modelXType)
    x = b.create<ReshapeOp>(loc, modelXType, x);
  mapping.map(source.getArgument(numSourceArgs - 2), x);
  mapping.map(source.getArgument(numSourceArgs - 1),
              entry->getArgument(nargs - 2));
  for (Operation &op : source.getBody().front().without_terminator())
    b.clone(op, mapping);

  SmallVector<ResultInto> written = finish(mapping, entry, ret);
  Value out = entry->getArgument(nargs - 1);
  for (unsigned j = firstOutput; j < numOutputs; ++j) {
    Value metric = mapping.lookup(ret.getOperand(j)); // [M]
    Value column = layout.flatten(loc, metric, 1);
    out = layout.insertColumns(loc, column, out, j - firstOutput, 1);
  }
  written.push_back({out, nargs - 1});
  // Each result is written into the argument the ABI says holds it. Going
  // through materialize_in_destination makes every result equivalent to its
  // argument, so bufferization drops the results and the entry point
  // updates the caller's buffers in place, copying only where it must.
  SmallVector<Value> results;
  for (const ResultInto &result : written)
    results.push_back(
        b.create<bufferization::MaterializeInDestinationOp>(
             loc, result.value, entry->getArgument(result.argument))
            .getResult());
  b.create<func::ReturnOp>(loc, results);
  func.setFunctionType(
      b.getFunctionType(argTypes, ValueRange(results).getTypes()));
  func->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  return func;
}

/// Above this many tensors, insertAllColumns inserts them in groups.
constexpr size_t kColumnsInOneChain = 32;

/// Each tensor is an insert_slice into the tensor the previous one made.
/// One-shot bufferization's analysis walks such a chain back for every
/// write it checks against every read of the chain, which grew as the cube
/// of its length: a 12-block transformer's 152 gradients took 8.8 s of its
/// compile time. Past kColumnsInOneChain they are inserted in groups of
/// about sqrt(n) contiguous column ranges, each group into its own tensor,
/// then the groups into `dest` (0.6 s; one more copy of the columns).
Value FlatLayout::insertAllColumns(Location loc, ArrayRef<Columns> columns,
                                   Value dest) {
  size_t count = columns.size();
  size_t groupSize =
      count > kColumnsInOneChain
          ? static_cast<size_t>(std::ceil(std::sqrt(double(count))))
          : count;
  for (size_t start = 0; start < count; start += groupSize) {
    ArrayRef<Columns> group =
        columns.slice(start, std::min(groupSize, count - start));
    int64_t begin = group.front().offset,
            end = group.back().offset + group.back().size;
    bool contiguous = true;
    for (auto [prev, next] : llvm::zip(group.drop_back(), group.drop_front()))
      contiguous &= next.offset == prev.offset + prev.size;
    bool grouped = groupSize < count && contiguous;
    Value target =
        grouped ? b.create<tensor::EmptyOp>(
                      loc, ArrayRef<int64_t>{numModels, end - begin}, element)
                : dest;
    int64_t base = grouped ? begin : 0;
    for (const Columns &c : group)
      target = insertColumns(loc, c.value, target, c.offset - base, c.size);
    dest =
        grouped ? insertColumns(loc, target, dest, begin, end - begin) : target;
  }
  return dest;
}
