//===- FuseComposites.cpp - Join-agg patterns to composites ---------------===//
//
// A softmax written as join-aggs (what ein-import makes of linalg's):
//
//   m = max over k of x              (join: x)
//   p = exp(x - m)                   (elementwise, m broadcast along k)
//   s = sum over k of p              (join: p)
//   y = p / s                        (elementwise, s broadcast along k)
//
// becomes `ein.softmax x dim k`, the composite whose fused kernel and
// reduce-then-broadcast spec the planner knows. The intermediate values
// must have no other users; anything else is left as it is.
//
//===----------------------------------------------------------------------===//

#include "Einsummable/Dialect/Ein/IR/EinOps.h"
#include "Einsummable/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"

namespace mlir::ein {
#define GEN_PASS_DEF_EINFUSECOMPOSITES
#include "Einsummable/Transforms/Passes.h.inc"
} // namespace mlir::ein

using namespace mlir;
using namespace mlir::ein;

namespace {

/// The value a join region yields, seen through a widening to the
/// accumulator type.
Value yieldedValue(JoinAggOp op) {
  Value v = op.getJoin().front().getTerminator()->getOperand(0);
  if (auto ext = v.getDefiningOp<arith::ExtFOp>())
    return ext.getIn();
  return v;
}

/// The identity index list of a rank-r value: d0, ..., d(r-1).
bool isIdentity(ArrayRef<int64_t> indices) {
  for (auto [i, loop] : llvm::enumerate(indices))
    if (loop != int64_t(i))
      return false;
  return true;
}

/// The identity list without `dim`.
bool isIdentityWithout(ArrayRef<int64_t> indices, int64_t rank, int64_t dim) {
  SmallVector<int64_t> want;
  for (int64_t i = 0; i < rank; ++i)
    if (i != dim)
      want.push_back(i);
  return indices == ArrayRef<int64_t>(want);
}

/// `op` reduces its single input `x` (read whole) with `kind` over one
/// dimension, yielding the element itself: that dimension, or -1.
int64_t reducedDim(JoinAggOp op, AggKind kind, Value x) {
  if (op.getAgg() != kind || op.getInputs().size() != 1 ||
      op.getInputs()[0] != x || op.getSpec() || op.getDevice())
    return -1;
  auto type = cast<RankedTensorType>(x.getType());
  int64_t rank = type.getRank();
  if (!isIdentity(op.getIndicesOfInput(0)) ||
      int64_t(op.getIndicesOfInput(0).size()) != rank ||
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
  if (op.getAgg() != AggKind::None || op.getInputs().size() != 2 ||
      op.getInputs()[0] != full || op.getInputs()[1] != part || op.getSpec() ||
      op.getDevice())
    return Body();
  int64_t rank = cast<RankedTensorType>(full.getType()).getRank();
  if (!isIdentity(op.getIndicesOfInput(0)) ||
      int64_t(op.getIndicesOfInput(0).size()) != rank ||
      !isIdentityWithout(op.getIndicesOfInput(1), rank, dim) ||
      !isIdentity(op.getOutputIndices()) ||
      int64_t(op.getOutputIndices().size()) != rank)
    return Body();
  return yieldedValue(op).getDefiningOp<Body>();
}

/// Rewrites the softmax rooted at the max reduction `max`, if it is one.
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
      !sum->hasOneUse() || *sum->getUsers().begin() != div.getOperation())
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
  div->erase();
  sum->erase();
  exp->erase();
  max->erase();
  return true;
}

struct EinFuseComposites
    : mlir::ein::impl::EinFuseCompositesBase<EinFuseComposites> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<JoinAggOp> roots;
    getOperation().walk([&](JoinAggOp op) {
      if (op.getAgg() == AggKind::Max)
        roots.push_back(op);
    });
    for (JoinAggOp max : roots)
      fuseSoftmax(max);
  }
};

} // namespace
