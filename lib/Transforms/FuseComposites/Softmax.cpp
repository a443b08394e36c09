//===- Softmax.cpp - softmax from its four join-aggs ----------------------===//
//
// m = max_k x; p = exp(x - m); s = sum_k p; y = p / s becomes ein.softmax x
// dim k; so does PyTorch's safe softmax (aten._safe_softmax, in attention's
// math form), y = (m == -inf ? 0 : p / s), which ein.softmax is (a row with
// nothing unmasked gives 0), m read once more or from a max of its own.
// Attention is found around the softmax, so the pass runs this first.
//
//===----------------------------------------------------------------------===//

#include "FuseComposites.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <limits>

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

/// Whether `div` is the safe softmax's last join: elementwise over `p`
/// (read whole) and, broadcast along `dim`, `sum` and a row maximum of `x`
/// (returned in `rowMax`), yielding `m == -inf ? 0 : p / s`.
bool isSafeDivision(JoinAggOp div, Value x, Value p, Value sum, int64_t dim,
                    JoinAggOp &rowMax) {
  if (!isElementwise(div) || div.getInputs().size() != 3 ||
      div.getInputs()[0] != p || div.getInputs()[1] != sum)
    return false;
  int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
  if (!isIdentity(div.getIndicesOfInput(0), rank) ||
      !isIdentityWithout(div.getIndicesOfInput(1), rank, dim) ||
      !isIdentityWithout(div.getIndicesOfInput(2), rank, dim))
    return false;
  rowMax = div.getInputs()[2].getDefiningOp<JoinAggOp>();
  if (!rowMax || reducedDim(rowMax, AggKind::Max, x) != dim)
    return false;
  Block &body = div.getJoin().front();
  auto select = yieldedValue(div).getDefiningOp<arith::SelectOp>();
  auto empty =
      select ? select.getCondition().getDefiningOp<arith::CmpFOp>() : nullptr;
  auto quotient =
      select ? select.getFalseValue().getDefiningOp<arith::DivFOp>() : nullptr;
  std::optional<double> zero =
      select ? constantOf(select.getTrueValue()) : std::nullopt;
  std::optional<double> bound =
      empty ? constantOf(empty.getRhs()) : std::nullopt;
  return quotient && zero && *zero == 0 && bound &&
         *bound == -std::numeric_limits<double>::infinity() &&
         empty.getPredicate() == arith::CmpFPredicate::OEQ &&
         empty.getLhs() == body.getArgument(2) &&
         quotient.getLhs() == body.getArgument(0) &&
         quotient.getRhs() == body.getArgument(1);
}

} // namespace

bool fuseSoftmax(JoinAggOp max, SmallPtrSetImpl<Operation *> &erased) {
  Value x = max.getInputs()[0];
  int64_t dim = reducedDim(max, AggKind::Max, x);
  if (dim < 0)
    return false;
  // The max feeds exp(x - m) (and, in the safe form, maybe its division).
  JoinAggOp exp;
  for (Operation *user : max->getUsers()) {
    auto join = dyn_cast<JoinAggOp>(user);
    if (!join)
      return false;
    if (join.getInputs().size() == 2 && join.getInputs()[0] == x && !exp)
      exp = join;
  }
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
  JoinAggOp rowMax; // the safe form's second read of the maximum
  bool plain = q && q.getLhs() == divBody.getArgument(0) &&
               q.getRhs() == divBody.getArgument(1);
  if (!plain &&
      !isSafeDivision(div, x, exp.getResult(), sum.getResult(), dim, rowMax))
    return false;
  if (div.getType() != x.getType() || exp.getType() != x.getType())
    return false;
  // The maximum serves the exp and, in the safe form, the division only; a
  // maximum of its own the division alone.
  for (Operation *user : max->getUsers())
    if (user != exp.getOperation() && (plain || user != div.getOperation()))
      return false;
  if (rowMax && rowMax != max &&
      soleUser(rowMax.getResult()) != div.getOperation())
    return false;
  OpBuilder builder(div);
  auto softmax = SoftmaxOp::create(builder, div.getLoc(), x.getType(), x,
                                   builder.getI64IntegerAttr(dim), SpecAttr(),
                                   IntegerAttr());
  div.getResult().replaceAllUsesWith(softmax.getResult());
  eraseIfDead({div, sum, exp, max});
  if (rowMax && rowMax != max) {
    erased.insert(rowMax);
    eraseIfDead({rowMax});
  }
  return true;
}

} // namespace mlir::ein::fuse_composites_detail
