//===- LayerNorm.cpp - LayerNorm from its statistics and one join ---------===//
//
// s = sum_i x; m = s / n; v = sum_i (x - m)^2; y = (x - m) * rsqrt(v / n +
// eps) [* w] [+ b], the mean its own op or in each body, becomes
// ein.layer_norm x [weight w] [bias b] eps (then a transpose, where the
// join writes y's dimensions permuted, the normalized one still last).
//
//===----------------------------------------------------------------------===//

#include "FuseComposites.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

namespace mlir::ein::fuse_composites_detail {

namespace {

/// What a LayerNorm's statistics are made of: the sum of x over its last
/// dimension, and the ops that computed them (erased once unused).
struct LayerNormStats {
  Value x;
  JoinAggOp sum;
  SmallVector<Operation *> ops;
  // x - mean as a tensor, where the program has one.
  JoinAggOp deviation;
};

/// `op` sums its one input `x` (read whole) over the last dimension,
/// yielding the element itself (through casts).
bool isRowSum(JoinAggOp op, int64_t rank) {
  return op && isLogical(op) && op.getAgg() == AggKind::Add &&
         op.getInputs().size() == 1 &&
         isIdentity(op.getIndicesOfInput(0), rank) &&
         isIdentityWithout(op.getOutputIndices(), rank, rank - 1) &&
         yieldedValue(op) == op.getJoin().front().getArgument(0);
}

/// Whether `v`, in the body of `user`, is the row mean of `stats.x`: a
/// block argument read from `sum / n` (an elementwise op of its own) or
/// `s * (1 / n)` on an argument `s` read from the sum. Fills `stats` on the
/// first match and requires the same sum after.
bool isRowMean(Value v, JoinAggOp user, int64_t rank, int64_t width,
               LayerNormStats &stats) {
  auto readFrom = [&](Value arg) -> Value {
    auto blockArg = dyn_cast<BlockArgument>(arg);
    if (!blockArg || blockArg.getOwner() != &user.getJoin().front() ||
        !isIdentityWithout(user.getIndicesOfInput(blockArg.getArgNumber()),
                           rank, rank - 1))
      return Value();
    return user.getInputs()[blockArg.getArgNumber()];
  };
  auto sumOf = [&](Value scaled, JoinAggOp body) -> JoinAggOp {
    Product p = productOf(scaled);
    if (p.factors.size() != 1 || p.factors[0].second != 1 ||
        std::abs(p.coefficient * width - 1) > 1e-6)
      return JoinAggOp();
    Value input;
    if (body == user) {
      input = readFrom(p.factors[0].first);
    } else if (p.factors[0].first == body.getJoin().front().getArgument(0)) {
      input = body.getInputs()[0];
    }
    auto sum = input ? input.getDefiningOp<JoinAggOp>() : JoinAggOp();
    return isRowSum(sum, rank) ? sum : JoinAggOp();
  };
  JoinAggOp sum = sumOf(v, user);
  Operation *meanOp = nullptr;
  if (!sum) {
    Value input = readFrom(stripFloatCasts(v));
    auto mean = input ? input.getDefiningOp<JoinAggOp>() : JoinAggOp();
    if (!mean || !isElementwise(mean) || mean.getInputs().size() != 1 ||
        !isIdentity(mean.getIndicesOfInput(0), rank - 1))
      return false;
    sum = sumOf(yieldedValue(mean), mean);
    meanOp = mean;
  }
  if (!sum || (stats.sum && stats.sum != sum))
    return false;
  if (!stats.sum) {
    stats.sum = sum;
    stats.x = sum.getInputs()[0];
    stats.ops = {meanOp, sum};
  }
  return true;
}

/// Whether `v` in `user`'s body is `x - mean(x)`, x read whole: computed
/// there, or read whole from an elementwise op of its own (torch-mlir's
/// form, which ein-import keeps as a tensor when two ops read it).
bool isDeviation(Value v, JoinAggOp user, int64_t rank, int64_t width,
                 LayerNormStats &stats) {
  auto sub = stripFloatCasts(v).getDefiningOp<arith::SubFOp>();
  if (auto arg = dyn_cast<BlockArgument>(stripFloatCasts(v));
      arg && arg.getOwner() == &user.getJoin().front()) {
    auto dev = user.getInputs()[arg.getArgNumber()].getDefiningOp<JoinAggOp>();
    if (!dev || !isElementwise(dev) ||
        !isIdentity(user.getIndicesOfInput(arg.getArgNumber()), rank) ||
        (stats.deviation && stats.deviation != dev) ||
        (!stats.deviation &&
         !isDeviation(yieldedValue(dev), dev, rank, width, stats)))
      return false;
    stats.deviation = dev;
    return true;
  }
  if (!sub)
    return false;
  auto arg = dyn_cast<BlockArgument>(stripFloatCasts(sub.getLhs()));
  if (!arg || arg.getOwner() != &user.getJoin().front() ||
      !isIdentity(user.getIndicesOfInput(arg.getArgNumber()), rank) ||
      !isRowMean(sub.getRhs(), user, rank, width, stats))
    return false;
  return user.getInputs()[arg.getArgNumber()] == stats.x;
}

/// Renames `op`'s loops, loop l becoming newOf[l]: the same join.
void renameLoops(JoinAggOp op, ArrayRef<int64_t> newOf) {
  Builder b(op.getContext());
  SmallVector<Attribute> lists;
  for (unsigned i = 0; i < op.getInputs().size(); ++i) {
    SmallVector<int64_t> list;
    for (int64_t l : op.getIndicesOfInput(i))
      list.push_back(newOf[l]);
    lists.push_back(b.getDenseI64ArrayAttr(list));
  }
  SmallVector<int64_t> out;
  for (int64_t l : op.getOutputIndices())
    out.push_back(newOf[l]);
  op.setInputIndicesAttr(b.getArrayAttr(lists));
  op.setOutputIndices(out);
}

bool matchLayerNorm(JoinAggOp op);

} // namespace

bool fuseLayerNorm(JoinAggOp op) {
  if (matchLayerNorm(op))
    return true;
  // The join of a LayerNorm whose result is transposed may read x and its
  // statistics permuted and write in its own loops' order (ein-import's
  // form): its loops renamed after x's dimensions, it writes them permuted,
  // which matchLayerNorm takes; renamed back where it still does not match.
  // (Not where the body reads a loop's index: that names the loops.)
  int64_t rank = cast<RankedTensorType>(op.getType()).getRank();
  if (!isLogical(op) || op.getAgg() != AggKind::None ||
      op.getJoin()
          .walk([](IndexOp) { return WalkResult::interrupt(); })
          .wasInterrupted())
    return false;
  for (unsigned i = 0; i < op.getInputs().size(); ++i) {
    ArrayRef<int64_t> read = op.getIndicesOfInput(i);
    SmallVector<int64_t> newOf(rank, -1), oldOf(read);
    for (auto [dim, loop] : llvm::enumerate(read))
      if (loop >= 0 && loop < rank && newOf[loop] < 0)
        newOf[loop] = int64_t(dim);
    if (int64_t(read.size()) != rank || llvm::is_contained(newOf, -1) ||
        isIdentity(read, rank) || read.back() != rank - 1)
      continue;
    renameLoops(op, newOf);
    if (matchLayerNorm(op))
      return true;
    renameLoops(op, oldOf);
    return false;
  }
  return false;
}

namespace {

bool matchLayerNorm(JoinAggOp op) {
  auto written = cast<RankedTensorType>(op.getType());
  int64_t rank = written.getRank();
  if (!isLogical(op) || op.getAgg() != AggKind::None ||
      op.getInputs().size() < 3 || rank < 1)
    return false;
  // The join may write its loops permuted (a LayerNorm whose result is
  // transposed, as PyTorch's batch-first MultiheadAttention reads it), the
  // normalized dimension still last: then the LayerNorm, in its input's
  // order, and a transpose. `type` is the loops' order.
  ArrayRef<int64_t> writtenOrder = op.getOutputIndices();
  SmallVector<int64_t> shape(rank, -1);
  for (auto [i, loop] : llvm::enumerate(writtenOrder))
    if (loop >= 0 && loop < rank && shape[loop] < 0)
      shape[loop] = written.getDimSize(i);
  if (writtenOrder.size() != size_t(rank) || llvm::is_contained(shape, -1) ||
      writtenOrder.back() != rank - 1)
    return false;
  auto type = RankedTensorType::get(shape, written.getElementType());
  int64_t width = type.getShape().back();
  Block &body = op.getJoin().front();
  LayerNormStats stats;
  // The body: [bias +] product of the deviation, the root and [the weight].
  Value top = yieldedValue(op), bias;
  auto parameter = [&](Value leaf) -> Value {
    auto arg = dyn_cast<BlockArgument>(stripFloatCasts(leaf));
    if (!arg || arg.getOwner() != &body ||
        op.getIndicesOfInput(arg.getArgNumber()) != ArrayRef<int64_t>{rank - 1})
      return Value();
    Value input = op.getInputs()[arg.getArgNumber()];
    auto t = cast<RankedTensorType>(input.getType());
    return t.getElementType() == type.getElementType() ? input : Value();
  };
  if (auto add = top.getDefiningOp<arith::AddFOp>()) {
    for (auto [term, other] : {std::pair{add.getLhs(), add.getRhs()},
                               std::pair{add.getRhs(), add.getLhs()}})
      if (Value b = parameter(other)) {
        bias = b;
        top = term;
        break;
      }
    if (!bias)
      return false;
  }
  Product product = productOf(top);
  if (std::abs(product.coefficient - 1) > 1e-12)
    return false;
  Value weight, root, deviation;
  for (auto [leaf, power] : product.factors) {
    if (power == 0)
      continue;
    if (power == 1 && !weight && parameter(leaf)) {
      weight = parameter(leaf);
    } else if (power == 1 && !deviation &&
               isDeviation(leaf, op, rank, width, stats)) {
      deviation = leaf;
    } else if (!root && power == 1 && leaf.getDefiningOp<math::RsqrtOp>()) {
      root = leaf.getDefiningOp()->getOperand(0);
    } else if (!root && power == -1 && leaf.getDefiningOp<math::SqrtOp>()) {
      root = leaf.getDefiningOp()->getOperand(0);
    } else {
      return false;
    }
  }
  if (!deviation || !root || (bias && !weight))
    return false;
  // root = variance + eps; variance = s2 / n (in this body or its own op)
  // with s2 the sum of squared deviations.
  auto add = stripFloatCasts(root).getDefiningOp<arith::AddFOp>();
  if (!add)
    return false;
  std::optional<double> eps = constantOf(add.getRhs());
  Value variance = add.getLhs();
  if (!eps) {
    eps = constantOf(add.getLhs());
    variance = add.getRhs();
  }
  if (!eps || !(*eps > 0) || !std::isfinite(*eps))
    return false;
  Product scaled = productOf(variance);
  if (scaled.factors.size() != 1 || scaled.factors[0].second != 1 ||
      std::abs(scaled.coefficient * width - 1) > 1e-6)
    return false;
  auto ssArg = dyn_cast<BlockArgument>(scaled.factors[0].first);
  if (!ssArg || ssArg.getOwner() != &body ||
      !isIdentityWithout(op.getIndicesOfInput(ssArg.getArgNumber()), rank,
                         rank - 1))
    return false;
  auto squares =
      op.getInputs()[ssArg.getArgNumber()].getDefiningOp<JoinAggOp>();
  if (!squares || !isLogical(squares) || squares.getAgg() != AggKind::Add ||
      !isIdentityWithout(squares.getOutputIndices(), rank, rank - 1))
    return false;
  Product square = productOf(yieldedValue(squares));
  if (square.coefficient != 1 || square.factors.size() != 1 ||
      square.factors[0].second != 2 ||
      !isDeviation(square.factors[0].first, squares, rank, width, stats))
    return false;
  // x is the op's own, and every input is one of the above.
  if (stats.x.getType() != type)
    return false;
  for (Value input : op.getInputs())
    if (input != stats.x && input != weight && input != bias &&
        input != squares.getResult() &&
        (!stats.ops.front() || input != stats.ops.front()->getResult(0)) &&
        input != stats.sum.getResult() &&
        (!stats.deviation || input != stats.deviation.getResult()))
      return false;
  // The statistics serve only this LayerNorm.
  SmallVector<Operation *> ours = {op, squares};
  if (stats.deviation)
    ours.push_back(stats.deviation);
  for (Operation *stat : stats.ops)
    if (stat)
      ours.push_back(stat);
  for (Operation *stat : llvm::drop_begin(ours))
    for (Operation *user : stat->getUsers())
      if (!llvm::is_contained(ours, user))
        return false;
  OpBuilder builder(op);
  Location loc = op.getLoc();
  auto norm = LayerNormOp::create(builder, loc, stats.x, weight, bias, *eps);
  Value result = norm.getResult();
  if (!isIdentity(writtenOrder, rank)) {
    auto identity = llvm::to_vector(llvm::seq<int64_t>(0, rank));
    auto transpose = JoinAggOp::create(
        builder, loc, written, ValueRange{result},
        builder.getArrayAttr({builder.getDenseI64ArrayAttr(identity)}),
        writtenOrder, AggKind::None, TypeAttr(), SpecAttr(), IntegerAttr());
    Block *block = new Block();
    transpose.getJoin().push_back(block);
    OpBuilder inner = OpBuilder::atBlockEnd(block);
    Value v = block->addArgument(written.getElementType(), loc);
    if (v.getType() != transpose.getAccType())
      v = arith::ExtFOp::create(inner, loc, transpose.getAccType(), v);
    YieldOp::create(inner, loc, v);
    result = transpose.getResult();
  }
  op.getResult().replaceAllUsesWith(result);
  eraseIfDead({op, squares, stats.deviation, stats.ops[0], stats.ops[1]});
  return true;
}

} // namespace

} // namespace mlir::ein::fuse_composites_detail
