//===- Loops.cpp - ein-import: reads at constants and floordivs -----------===//
//
// Loop rewrites that bring a generic's indexing maps to projected
// permutations before it is imported: a unit dimension read at the constant
// 0 (keepdim) collapsed away, and a loop read as `dK floordiv c` (GQA) split
// in two around reshapes.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::ein::import_detail {

FailureOr<linalg::GenericOp> Importer::dropUnitReads(linalg::GenericOp op) {
  MLIRContext *ctx = op.getContext();
  Location loc = op.getLoc();
  bool any = false;
  SmallVector<AffineMap> maps;
  SmallVector<Value> operands;
  RankedTensorType resultType;
  builder.setInsertionPoint(op);
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    auto type = dyn_cast<RankedTensorType>(operand.get().getType());
    SmallVector<AffineExpr> kept;
    SmallVector<int64_t> shape;
    for (auto [d, e] : llvm::enumerate(map.getResults())) {
      auto c = dyn_cast<AffineConstantExpr>(e);
      if (!c) {
        kept.push_back(e);
        shape.push_back(type ? type.getDimSize(d) : 0);
        continue;
      }
      if (!type || c.getValue() != 0 || type.getDimSize(d) != 1) {
        op->emitOpError()
            << "cannot be imported: operand " << operand.getOperandNumber()
            << " is read at the constant " << c.getValue()
            << " along a dimension that is not a unit dimension read at 0";
        return failure();
      }
    }
    maps.push_back(AffineMap::get(map.getNumDims(), 0, kept, ctx));
    Value value = operand.get();
    if (type && kept.size() != map.getNumResults()) {
      if (kept.empty()) {
        op->emitOpError() << "cannot be imported: operand "
                          << operand.getOperandNumber()
                          << " is a single element read at constant indices";
        return failure();
      }
      any = true;
      value = collapseTo(loc, value,
                         RankedTensorType::get(shape, type.getElementType()));
    }
    operands.push_back(value);
    if (op.isDpsInit(&operand))
      resultType = cast<RankedTensorType>(value.getType());
  }
  if (!any)
    return op;
  unsigned inputs = op.getNumDpsInputs();
  auto reduced =
      linalg::GenericOp::create(builder, loc, TypeRange{resultType},
                                ValueRange(operands).take_front(inputs),
                                ValueRange(operands).drop_front(inputs), maps,
                                op.getIteratorTypesArray());
  IRMapping mapping;
  op.getRegion().cloneInto(&reduced.getRegion(), mapping);
  Value result = reduced.getResult(0);
  auto original = cast<RankedTensorType>(op.getResult(0).getType());
  if (result.getType() != original) {
    std::optional<SmallVector<ReassociationIndices>> groups =
        getReassociationIndicesForReshape(original, resultType);
    result =
        tensor::ExpandShapeOp::create(builder, loc, original, result, *groups);
  }
  op.getResult(0).replaceAllUsesWith(result);
  op->erase();
  return reduced;
}

Value Importer::collapseTo(Location loc, Value value, RankedTensorType type) {
  return tensor::CollapseShapeOp::create(
      builder, loc, type, value,
      unitDimensionGroups(cast<RankedTensorType>(value.getType()), type));
}

FailureOr<linalg::GenericOp> Importer::splitFloorDivLoop(linalg::GenericOp op) {
  std::optional<unsigned> loop;
  int64_t factor = 0;
  for (AffineMap map : op.getIndexingMapsArray())
    for (AffineExpr e : map.getResults()) {
      auto div = dyn_cast<AffineBinaryOpExpr>(e);
      if (!div || div.getKind() != AffineExprKind::FloorDiv)
        continue;
      auto dim = dyn_cast<AffineDimExpr>(div.getLHS());
      auto c = dyn_cast<AffineConstantExpr>(div.getRHS());
      if (!dim || !c || c.getValue() < 1 ||
          (loop && (*loop != dim.getPosition() || factor != c.getValue()))) {
        op->emitOpError() << "cannot be imported: only one loop divided "
                             "by one constant (dK floordiv c) is "
                             "supported, got "
                          << AffineMapAttr::get(map);
        return failure();
      }
      loop = dim.getPosition();
      factor = c.getValue();
    }
  if (!loop)
    return op;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t extent = ranges[*loop];
  if (ShapedType::isDynamic(extent) || extent % factor) {
    op->emitOpError() << "cannot be imported: loop d" << *loop << " (extent "
                      << extent << ") is divided by " << factor
                      << ", which does not divide it";
    return failure();
  }
  MLIRContext *ctx = op.getContext();
  unsigned loops = op.getNumLoops(), inner = loops;
  AffineExpr outerDim = getAffineDimExpr(*loop, ctx),
             innerDim = getAffineDimExpr(inner, ctx);
  Location loc = op.getLoc();
  builder.setInsertionPoint(op);
  // Each operand's new map, and the operand expanded where it is indexed
  // by the split loop itself.
  SmallVector<AffineMap> maps;
  SmallVector<Value> operands;
  std::optional<SmallVector<ReassociationIndices>> resultGroups;
  Type expandedResult;
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    auto type = cast<RankedTensorType>(operand.get().getType());
    SmallVector<AffineExpr> results;
    SmallVector<int64_t> shape;
    SmallVector<ReassociationIndices> groups;
    bool expands = false;
    for (auto [r, e] : llvm::enumerate(map.getResults())) {
      groups.push_back({int64_t(shape.size())});
      if (auto dim = dyn_cast<AffineDimExpr>(e);
          dim && dim.getPosition() == *loop) {
        results.append({outerDim, innerDim});
        shape.append({type.getDimSize(r) / factor, factor});
        groups.back().push_back(int64_t(shape.size()) - 1);
        expands = true;
        continue;
      }
      results.push_back(isa<AffineBinaryOpExpr>(e) ? outerDim : e);
      shape.push_back(type.getDimSize(r));
    }
    maps.push_back(AffineMap::get(loops + 1, 0, results, ctx));
    auto newType = RankedTensorType::get(shape, type.getElementType());
    Value value = operand.get();
    if (expands)
      value =
          tensor::ExpandShapeOp::create(builder, loc, newType, value, groups);
    operands.push_back(value);
    if (op.isDpsInit(&operand)) {
      expandedResult = newType;
      if (expands)
        resultGroups = groups;
    }
  }
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  iterators.push_back(iterators[*loop]);
  unsigned inputs = op.getNumDpsInputs();
  auto split = linalg::GenericOp::create(
      builder, loc, TypeRange{expandedResult},
      ValueRange(operands).take_front(inputs),
      ValueRange(operands).drop_front(inputs), maps, iterators);
  IRMapping mapping;
  op.getRegion().cloneInto(&split.getRegion(), mapping);
  // linalg.index k is the whole index again: k * c + inner.
  Block &body = split.getRegion().front();
  SmallVector<linalg::IndexOp> indices;
  body.walk([&](linalg::IndexOp index) {
    if (index.getDim() == *loop)
      indices.push_back(index);
  });
  for (linalg::IndexOp index : indices) {
    OpBuilder at(index);
    Value outer = linalg::IndexOp::create(at, loc, *loop);
    Value in = linalg::IndexOp::create(at, loc, inner);
    Value c = arith::ConstantIndexOp::create(at, loc, factor);
    Value whole = arith::AddIOp::create(
        at, loc, arith::MulIOp::create(at, loc, outer, c), in);
    index.getResult().replaceAllUsesWith(whole);
    index->erase();
  }
  Value result = split.getResult(0);
  if (resultGroups)
    result = tensor::CollapseShapeOp::create(
        builder, loc, op.getResult(0).getType(), result, *resultGroups);
  op.getResult(0).replaceAllUsesWith(result);
  op->erase();
  return split;
}

} // namespace mlir::ein::import_detail
