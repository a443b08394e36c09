//===- Softmax.cpp - softmax from its four join-aggs ----------------------===//
//
// m = max_k x; p = exp(x - m); s = sum_k p; y = p / s becomes ein.softmax x
// dim k. Attention is found around the softmax, so the pass runs this first.
//
//===----------------------------------------------------------------------===//

#include "FuseComposites.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

namespace mlir::ein::fuse_composites_detail {

namespace {

/// `op` reduces its single input `x` (read whole) with `kind` over one
/// dimension, yielding the element itself: that dimension, or -1.
int64_t reducedDim(JoinAggOp op, AggKind kind, Value x) {
  if (op.getAgg() != kind || op.getInputs().size() != 1 ||
      op.getInputs()[0] != x || !isLogical(op))
    return -1;
  int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
  if (!isIdentity(op.getIndicesOfInput(0), rank) ||
      yieldedValue(op) != op.getJoin().front().getArgument(0))
    return -1;
  for (int64_t dim = 0; dim < rank; ++dim)
    if (isIdentityWithout(op.getOutputIndices(), rank, dim))
      return dim;
  return -1;
}

/// `op` is elementwise over `full` (read whole) and `part` (broadcast along
/// `dim`), yielding `body(full, part)` as the single op `Body` whose
/// operands are the two block arguments in that order; returns that op.
template <typename Body>
Body elementwise(JoinAggOp op, Value full, Value part, int64_t dim) {
  if (!isElementwise(op) || op.getInputs().size() != 2 ||
      op.getInputs()[0] != full || op.getInputs()[1] != part)
    return Body();
  int64_t rank = cast<RankedTensorType>(full.getType()).getRank();
  if (!isIdentity(op.getIndicesOfInput(0), rank) ||
      !isIdentityWithout(op.getIndicesOfInput(1), rank, dim))
    return Body();
  return yieldedValue(op).getDefiningOp<Body>();
}

} // namespace

bool fuseSoftmax(JoinAggOp max) {
  Value x = max.getInputs()[0];
  int64_t dim = reducedDim(max, AggKind::Max, x);
  if (dim < 0 || !max->hasOneUse())
    return false;
  auto exp = dyn_cast<JoinAggOp>(*max->getUsers().begin());
  if (!exp)
    return false;
  auto e = elementwise<math::ExpOp>(exp, x, max.getResult(), dim);
  Block &expBody = exp.getJoin().front();
  auto sub = e ? e.getOperand().getDefiningOp<arith::SubFOp>() : nullptr;
  if (!sub || sub.getLhs() != expBody.getArgument(0) ||
      sub.getRhs() != expBody.getArgument(1))
    return false;
  // exp(x - m) feeds the sum and the division, nothing else.
  JoinAggOp sum, div;
  for (Operation *user : exp->getUsers()) {
    auto join = dyn_cast<JoinAggOp>(user);
    if (!join)
      return false;
    if (join.getAgg() == AggKind::Add && !sum)
      sum = join;
    else if (join.getAgg() == AggKind::None && !div)
      div = join;
    else
      return false;
  }
  if (!sum || !div || reducedDim(sum, AggKind::Add, exp.getResult()) != dim ||
      soleUser(sum.getResult()) != div.getOperation())
    return false;
  auto q =
      elementwise<arith::DivFOp>(div, exp.getResult(), sum.getResult(), dim);
  Block &divBody = div.getJoin().front();
  if (!q || q.getLhs() != divBody.getArgument(0) ||
      q.getRhs() != divBody.getArgument(1) || div.getType() != x.getType() ||
      exp.getType() != x.getType())
    return false;
  OpBuilder builder(div);
  auto softmax = SoftmaxOp::create(builder, div.getLoc(), x.getType(), x,
                                   builder.getI64IntegerAttr(dim), SpecAttr(),
                                   IntegerAttr());
  div.getResult().replaceAllUsesWith(softmax.getResult());
  eraseIfDead({div, sum, exp, max});
  return true;
}

} // namespace mlir::ein::fuse_composites_detail
