//===- LayoutOps.cpp - ein-import: layout ops, pads and splats ------------===//
//
// tensor's layout ops as ein's: expand_shape and collapse_shape as
// ein.reshape, static unit-stride extract_slice as ein.slice, insert_slice
// as concatenations of slices around the source, concat as ein.concat, a pad
// as concatenated splats; and the splat itself, a join-agg with no inputs
// yielding a constant.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"

namespace mlir::ein::import_detail {

SmallVector<ReassociationIndices> unitDimensionGroups(RankedTensorType from,
                                                      RankedTensorType to) {
  bool expands = to.getRank() > from.getRank();
  std::optional<SmallVector<ReassociationIndices>> groups =
      getReassociationIndicesForReshape(expands ? to : from,
                                        expands ? from : to);
  assert(groups && "shapes differ by more than unit dimensions");
  return *groups;
}

LogicalResult Importer::importLayoutOps() {
  SmallVector<Operation *> ops;
  func.walk([&](Operation *op) {
    if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp,
            tensor::ExtractSliceOp, tensor::InsertSliceOp, tensor::ConcatOp,
            tensor::PadOp>(op))
      ops.push_back(op);
  });
  for (Operation *op : ops) {
    if (op->use_empty()) {
      op->erase();
      continue;
    }
    auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!type || !type.hasStaticShape())
      return op->emitOpError() << "cannot be imported: ein needs static shapes";
    if (auto slice = dyn_cast<OffsetSizeAndStrideOpInterface>(op);
        slice && (!slice.hasUnitStride() || !slice.getOffsets().empty() ||
                  !slice.getSizes().empty()))
      return op->emitOpError()
             << "cannot be imported: "
             << (isa<tensor::ExtractSliceOp>(op) ? "ein.slice takes"
                                                 : "an inserted slice needs")
             << " static offsets and sizes and unit strides";
    builder.setInsertionPoint(op);
    Value result;
    if (auto pad = dyn_cast<tensor::PadOp>(op)) {
      FailureOr<Value> padded = padOf(pad);
      if (failed(padded))
        return failure();
      result = *padded;
    } else if (auto reshape = dyn_cast<tensor::ExpandShapeOp>(op))
      result = reshapeOf(reshape, reshape.getSrc(),
                         reshape.getReassociationIndices());
    else if (auto reshape = dyn_cast<tensor::CollapseShapeOp>(op))
      result = reshapeOf(reshape, reshape.getSrc(),
                         reshape.getReassociationIndices());
    else if (auto concat = dyn_cast<tensor::ConcatOp>(op))
      result = ConcatOp::create(builder, op->getLoc(), type,
                                builder.getI64IntegerAttr(concat.getDim()),
                                concat.getInputs(), SpecAttr());
    else if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op)) {
      // A rank-reducing slice is a slice and a reshape dropping the unit
      // dimensions.
      auto full =
          RankedTensorType::get(slice.getStaticSizes(), type.getElementType());
      result = SliceOp::create(
          builder, op->getLoc(), full, slice.getSource(),
          builder.getDenseI64ArrayAttr(slice.getStaticOffsets()),
          builder.getDenseI64ArrayAttr(slice.getStaticSizes()), SpecAttr());
      if (full != type)
        result = reshapeBetween(op, result, type);
    } else {
      auto insert = cast<tensor::InsertSliceOp>(op);
      auto full =
          RankedTensorType::get(insert.getStaticSizes(), type.getElementType());
      Value source = insert.getSource();
      if (source.getType() != full)
        source = reshapeBetween(op, source, full);
      result = insertInto(op, insert.getDest(), source,
                          insert.getStaticOffsets(), 0);
    }
    op->getResult(0).replaceAllUsesWith(result);
    op->erase();
  }
  return success();
}

FailureOr<Value> Importer::padOf(tensor::PadOp pad) {
  Value value = pad.getConstantPaddingValue();
  Attribute constant;
  if (!value || !matchPattern(value, m_Constant(&constant)))
    return pad->emitOpError()
           << "cannot be imported: ein takes a pad by a constant value";
  ArrayRef<int64_t> low = pad.getStaticLow(), high = pad.getStaticHigh();
  if (ShapedType::isDynamicShape(low) || ShapedType::isDynamicShape(high) ||
      llvm::any_of(low, [](int64_t v) { return v < 0; }) ||
      llvm::any_of(high, [](int64_t v) { return v < 0; }))
    return pad->emitOpError() << "cannot be imported: ein takes a pad by "
                                 "static, non-negative amounts";
  Value current = pad.getSource();
  for (size_t d = 0; d < low.size(); ++d) {
    if (!low[d] && !high[d])
      continue;
    auto type = cast<RankedTensorType>(current.getType());
    auto fill = [&](int64_t amount) -> Value {
      SmallVector<int64_t> shape(type.getShape());
      shape[d] = amount;
      return splat(pad.getLoc(),
                   RankedTensorType::get(shape, type.getElementType()),
                   constant);
    };
    SmallVector<Value> pieces;
    if (low[d])
      pieces.push_back(fill(low[d]));
    pieces.push_back(current);
    if (high[d])
      pieces.push_back(fill(high[d]));
    if (llvm::is_contained(pieces, Value()))
      return pad->emitOpError() << "cannot be imported: its padding value "
                                   "is not a float or integer";
    SmallVector<int64_t> shape(type.getShape());
    shape[d] += low[d] + high[d];
    current =
        ConcatOp::create(builder, pad.getLoc(),
                         RankedTensorType::get(shape, type.getElementType()),
                         builder.getI64IntegerAttr(d), pieces, SpecAttr());
  }
  return current;
}

Value Importer::reshapeOf(Operation *op, Value source,
                          ArrayRef<ReassociationIndices> groups, Type type) {
  SmallVector<Attribute> lists;
  for (const ReassociationIndices &group : groups)
    lists.push_back(builder.getI64ArrayAttr(group));
  return ReshapeOp::create(builder, op->getLoc(),
                           type ? type : op->getResult(0).getType(), source,
                           builder.getArrayAttr(lists), SpecAttr());
}

Value Importer::splat(Location loc, RankedTensorType type, Attribute value) {
  SmallVector<int64_t> loops;
  for (int64_t i = 0; i < type.getRank(); ++i)
    loops.push_back(i);
  auto join = JoinAggOp::create(builder, loc, type, ValueRange{},
                                builder.getArrayAttr({}), loops, AggKind::None,
                                TypeAttr(), SpecAttr(), IntegerAttr());
  Type acc = join.getAccType();
  TypedAttr scalar;
  if (auto f = dyn_cast<FloatAttr>(value); f && isa<FloatType>(acc))
    scalar = builder.getFloatAttr(acc, f.getValueAsDouble());
  else if (auto i = dyn_cast<IntegerAttr>(value); i && isa<IntegerType>(acc))
    scalar = builder.getIntegerAttr(acc, i.getValue().getSExtValue());
  if (!scalar) {
    join->erase();
    return {};
  }
  Block *block = new Block();
  join.getJoin().push_back(block);
  OpBuilder inner = OpBuilder::atBlockEnd(block);
  YieldOp::create(inner, loc,
                  arith::ConstantOp::create(inner, loc, scalar).getResult());
  return join.getResult();
}

Value Importer::reshapeBetween(Operation *op, Value value,
                               RankedTensorType type) {
  return reshapeOf(
      op, value,
      unitDimensionGroups(cast<RankedTensorType>(value.getType()), type), type);
}

Value Importer::insertInto(Operation *op, Value dest, Value source,
                           ArrayRef<int64_t> offsets, int64_t dim) {
  auto type = cast<RankedTensorType>(dest.getType());
  auto sourceType = cast<RankedTensorType>(source.getType());
  if (dim == type.getRank())
    return source;
  int64_t offset = offsets[dim], size = sourceType.getDimSize(dim),
          extent = type.getDimSize(dim);
  if (size == extent)
    return insertInto(op, dest, source, offsets, dim + 1);
  Location loc = op->getLoc();
  // What an unwritten tensor.empty holds is undefined: zeros will do.
  bool unwritten = dest.getDefiningOp<tensor::EmptyOp>() != nullptr;
  auto piece = [&](int64_t begin, int64_t end) -> Value {
    SmallVector<int64_t> at(type.getRank(), 0);
    SmallVector<int64_t> shape(type.getShape());
    at[dim] = begin;
    shape[dim] = end - begin;
    auto pieceType = RankedTensorType::get(shape, type.getElementType());
    if (unwritten)
      return splat(loc, pieceType, builder.getZeroAttr(type.getElementType()));
    return SliceOp::create(builder, loc, pieceType, dest,
                           builder.getDenseI64ArrayAttr(at),
                           builder.getDenseI64ArrayAttr(shape), SpecAttr());
  };
  SmallVector<Value> parts;
  if (offset > 0)
    parts.push_back(piece(0, offset));
  bool spansRest = sourceType.getShape().drop_front(dim + 1) ==
                   type.getShape().drop_front(dim + 1);
  parts.push_back(spansRest ? source
                            : insertInto(op, piece(offset, offset + size),
                                         source, offsets, dim + 1));
  if (offset + size < extent)
    parts.push_back(piece(offset + size, extent));
  return ConcatOp::create(builder, loc, type, builder.getI64IntegerAttr(dim),
                          parts, SpecAttr());
}

} // namespace mlir::ein::import_detail
