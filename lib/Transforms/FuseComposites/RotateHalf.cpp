//===- RotateHalf.cpp - RoPE's rotate-half as a rotation ------------------===//
//
// concat(-x[.., h:], x[.., :h]) along a dimension becomes a 2 x 2 rotation
// over that dimension split as (2, h): a join the spec algebra can cut,
// where slices and a concat of halves are not.
//
//===----------------------------------------------------------------------===//

#include "FuseComposites.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace mlir::ein::fuse_composites_detail {

bool rewriteRotateHalf(ConcatOp cat) {
  if (cat.getSpec() || cat.getInputs().size() != 2)
    return false;
  int64_t dim = cat.getDim();
  auto negate = cat.getInputs()[0].getDefiningOp<JoinAggOp>();
  auto low = cat.getInputs()[1].getDefiningOp<SliceOp>();
  if (!negate || !low || !negate->hasOneUse() || !isElementwise(negate) ||
      negate.getInputs().size() != 1)
    return false;
  auto high = negate.getInputs()[0].getDefiningOp<SliceOp>();
  auto type = cast<RankedTensorType>(cat.getType());
  int64_t rank = type.getRank();
  if (!high || high.getSource() != low.getSource() ||
      high.getSource().getType() != type || low.getSpec() || high.getSpec() ||
      !isIdentity(negate.getIndicesOfInput(0), rank) ||
      type.getDimSize(dim) % 2)
    return false;
  Product product = productOf(yieldedValue(negate));
  if (product.coefficient != -1 ||
      !product.hasFactors({{negate.getJoin().front().getArgument(0), 1}}))
    return false;
  int64_t half = type.getDimSize(dim) / 2;
  SmallVector<int64_t> sizes(type.getShape());
  sizes[dim] = half;
  SmallVector<int64_t> lowAt(rank, 0), highAt(rank, 0);
  highAt[dim] = half;
  if (low.getOffsets() != ArrayRef<int64_t>(lowAt) ||
      high.getOffsets() != ArrayRef<int64_t>(highAt) ||
      low.getSizes() != ArrayRef<int64_t>(sizes) ||
      high.getSizes() != ArrayRef<int64_t>(sizes))
    return false;

  OpBuilder builder(cat);
  Location loc = cat.getLoc();
  SmallVector<Attribute> groups;
  SmallVector<int64_t> pairs;
  for (int64_t i = 0; i < rank; ++i) {
    int64_t at = i + (i > dim);
    groups.push_back(i == dim ? builder.getI64ArrayAttr({at, at + 1})
                              : builder.getI64ArrayAttr({at}));
    if (i == dim)
      pairs.append({2, half});
    else
      pairs.push_back(type.getDimSize(i));
  }
  auto pairType = RankedTensorType::get(pairs, type.getElementType());
  Value x = high.getSource();
  auto split = ReshapeOp::create(builder, loc, pairType, x,
                                 builder.getArrayAttr(groups), SpecAttr());
  // Loops: the pair type's dimensions, then c' (reads xr at D).
  SmallVector<int64_t> outIndices, inIndices;
  for (int64_t i = 0; i <= rank; ++i) {
    outIndices.push_back(i);
    inIndices.push_back(i == dim ? rank + 1 : i);
  }
  auto rotate = JoinAggOp::create(
      builder, loc, pairType, ValueRange{split.getResult()},
      builder.getArrayAttr({builder.getDenseI64ArrayAttr(inIndices)}),
      outIndices, AggKind::Add, TypeAttr(), SpecAttr(), IntegerAttr());
  Block *block = new Block();
  rotate.getJoin().push_back(block);
  OpBuilder inner = OpBuilder::atBlockEnd(block);
  Type acc = rotate.getAccType();
  Value v = block->addArgument(type.getElementType(), loc);
  if (v.getType() != acc)
    v = arith::ExtFOp::create(inner, loc, acc, v);
  Value c = IndexOp::create(inner, loc, inner.getIndexType(),
                            inner.getI64IntegerAttr(dim));
  Value cPrime = IndexOp::create(inner, loc, inner.getIndexType(),
                                 inner.getI64IntegerAttr(rank + 1));
  Value zeroIndex = arith::ConstantIndexOp::create(inner, loc, 0);
  Value oneIndex = arith::ConstantIndexOp::create(inner, loc, 1);
  Value paired = arith::CmpIOp::create(
      inner, loc, arith::CmpIPredicate::eq,
      arith::AddIOp::create(inner, loc, c, cPrime), oneIndex);
  Value first =
      arith::CmpIOp::create(inner, loc, arith::CmpIPredicate::eq, c, zeroIndex);
  Value signedV = arith::SelectOp::create(
      inner, loc, first, arith::NegFOp::create(inner, loc, v), v);
  Value zero = arith::ConstantOp::create(inner, loc, inner.getZeroAttr(acc));
  YieldOp::create(
      inner, loc,
      arith::SelectOp::create(inner, loc, paired, signedV, zero).getResult());
  auto back = ReshapeOp::create(builder, loc, type, rotate.getResult(),
                                builder.getArrayAttr(groups), SpecAttr());
  cat.getResult().replaceAllUsesWith(back.getResult());
  eraseIfDead({cat, negate, high, low});
  return true;
}

} // namespace mlir::ein::fuse_composites_detail
