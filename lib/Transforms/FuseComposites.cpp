//===- FuseComposites.cpp - Join-agg patterns to composites ---------------===//
//
// What ein-import makes of the usual linalg programs, recognised and
// replaced by the composites whose fused kernels and stage specs the
// planner and the code generators know. Each pattern must match exactly,
// with intermediate values used nowhere else; anything else is left as it
// is (it still compiles, as plain join-aggs).
//
// softmax:  m = max_k x; p = exp(x - m); s = sum_k p; y = p / s
//           -> ein.softmax x dim k
// attention (after softmax): scores = sum_d q k (times a scale), then an
//           elementwise scale and causal mask (select on t <= s, else
//           -inf), softmax over keys, sum_t p v; GQA through the reshapes
//           ein-import puts around a `h floordiv g` map
//           -> ein.attention q, k, v {causal, group, scale}
// rms_norm: ss = sum_i x * x; y = x * rsqrt(ss / n + eps) * w (one join,
//           as ein-import's elementwise fusion leaves it)
//           -> ein.rms_norm x, w eps
// layer_norm: s = sum_i x; m = s / n; v = sum_i (x - m)^2;
//           y = (x - m) * rsqrt(v / n + eps) [* w] [+ b] (the mean its own
//           op or in each body)
//           -> ein.layer_norm x [weight w] [bias b] eps
// rotate-half (RoPE): concat(-x[.., h:], x[.., :h]) along a dimension
//           -> a 2 x 2 rotation over that dimension split as (2, h): a
//           join the spec algebra can cut, where slices and a concat of
//           halves are not
//
//===----------------------------------------------------------------------===//

#include "Einsummable/Dialect/Ein/IR/EinOps.h"
#include "Einsummable/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

namespace mlir::ein {
#define GEN_PASS_DEF_EINFUSECOMPOSITES
#include "Einsummable/Transforms/Passes.h.inc"
} // namespace mlir::ein

using namespace mlir;
using namespace mlir::ein;

namespace {

//===----------------------------------------------------------------------===//
// Reading join regions
//===----------------------------------------------------------------------===//

/// The float constant `v` holds, seen through casts (a narrowing rounds
/// it as the program does).
std::optional<double> constantOf(Value v) {
  SmallVector<FloatType> narrowings;
  while (Operation *def = v.getDefiningOp()) {
    if (auto trunc = dyn_cast<arith::TruncFOp>(def))
      narrowings.push_back(cast<FloatType>(trunc.getType()));
    else if (!isa<arith::ExtFOp>(def))
      break;
    v = def->getOperand(0);
  }
  auto constant = v.getDefiningOp<arith::ConstantOp>();
  auto f = constant ? dyn_cast<FloatAttr>(constant.getValue()) : FloatAttr();
  if (!f)
    return std::nullopt;
  APFloat value = f.getValue();
  for (FloatType type : llvm::reverse(narrowings)) {
    bool lost;
    value.convert(type.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                  &lost);
  }
  return value.convertToDouble();
}

/// A scalar as a product: a constant coefficient times leaves raised to
/// integer powers (mulf, divf, negf and powf by an integer constant are
/// looked through; casts too).
struct Product {
  double coefficient = 1;
  SmallVector<std::pair<Value, int>> factors;

  void multiply(Value leaf, int power) {
    for (auto &[v, p] : factors)
      if (v == leaf) {
        p += power;
        return;
      }
    factors.push_back({leaf, power});
  }
  void multiply(const Product &other, int power) {
    coefficient *= power > 0 ? other.coefficient : 1 / other.coefficient;
    for (auto [v, p] : other.factors)
      multiply(v, p * power);
  }
  /// The power of `leaf` (0 when absent).
  int powerOf(Value leaf) const {
    for (auto [v, p] : factors)
      if (v == leaf)
        return p;
    return 0;
  }
  /// Whether the leaves are exactly `want` (each with its power).
  bool hasFactors(ArrayRef<std::pair<Value, int>> want) const {
    unsigned nonzero = 0;
    for (auto [v, p] : factors)
      nonzero += p != 0;
    return nonzero == want.size() &&
           llvm::all_of(want, [&](std::pair<Value, int> w) {
             return powerOf(w.first) == w.second;
           });
  }
};

Product productOf(Value v) {
  v = stripFloatCasts(v);
  Product product;
  if (std::optional<double> c = constantOf(v)) {
    product.coefficient = *c;
    return product;
  }
  Operation *def = v.getDefiningOp();
  if (auto mul = dyn_cast_or_null<arith::MulFOp>(def)) {
    product.multiply(productOf(mul.getLhs()), 1);
    product.multiply(productOf(mul.getRhs()), 1);
  } else if (auto div = dyn_cast_or_null<arith::DivFOp>(def)) {
    product.multiply(productOf(div.getLhs()), 1);
    product.multiply(productOf(div.getRhs()), -1);
  } else if (auto neg = dyn_cast_or_null<arith::NegFOp>(def)) {
    product.multiply(productOf(neg.getOperand()), 1);
    product.coefficient = -product.coefficient;
  } else if (auto pow = dyn_cast_or_null<math::PowFOp>(def);
             pow && constantOf(pow.getRhs()) &&
             *constantOf(pow.getRhs()) ==
                 std::round(*constantOf(pow.getRhs())) &&
             std::abs(*constantOf(pow.getRhs())) <= 4) {
    int power = int(*constantOf(pow.getRhs()));
    Product base = productOf(pow.getLhs());
    product.coefficient = std::pow(base.coefficient, power);
    for (auto [leaf, p] : base.factors)
      product.multiply(leaf, p * power);
  } else {
    product.multiply(v, 1);
  }
  return product;
}

/// The identity index list of a rank-r value: d0, ..., d(r-1).
bool isIdentity(ArrayRef<int64_t> indices, int64_t rank) {
  if (int64_t(indices.size()) != rank)
    return false;
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

/// A join-agg not yet planned (no spec, no device).
bool isLogical(JoinAggOp op) { return !op.getSpec() && !op.getDevice(); }

/// `op` is elementwise over its output: no aggregation, the identity
/// output list.
bool isElementwise(JoinAggOp op) {
  return isLogical(op) && op.getAgg() == AggKind::None &&
         isIdentity(op.getOutputIndices(),
                    cast<ShapedType>(op.getType()).getRank());
}

/// The only user of `v`, or null.
Operation *soleUser(Value v) {
  return v.hasOneUse() ? *v.getUsers().begin() : nullptr;
}

/// Whether `reshape` expands dimension `dim` of its source into two (and
/// keeps every other dimension), or collapses them back when `collapse`.
bool splitsDim(ReshapeOp reshape, int64_t dim, bool collapse) {
  auto source = cast<ShapedType>(reshape.getSource().getType());
  auto result = cast<ShapedType>(reshape.getType());
  auto low = collapse ? result : source;
  auto high = collapse ? source : result;
  if (high.getRank() != low.getRank() + 1)
    return false;
  for (auto [i, group] : llvm::enumerate(reshape.getReassociation())) {
    SmallVector<int64_t> want = {int64_t(i) + (int64_t(i) > dim)};
    if (int64_t(i) == dim)
      want.push_back(dim + 1);
    auto list = cast<ArrayAttr>(group);
    if (list.size() != want.size() ||
        llvm::any_of(llvm::enumerate(list), [&](auto entry) {
          return cast<IntegerAttr>(entry.value()).getInt() !=
                 want[entry.index()];
        }))
      return false;
  }
  return true;
}

/// Erases `ops` in order, each only once nothing uses it any more.
void eraseIfDead(ArrayRef<Operation *> ops) {
  for (Operation *op : ops)
    if (op && op->use_empty())
      op->erase();
}

//===----------------------------------------------------------------------===//
// Softmax
//===----------------------------------------------------------------------===//

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

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

/// The index an ein.index in a join region reads (through index casts).
std::optional<int64_t> indexDim(Value v) {
  while (auto cast = v.getDefiningOp<arith::IndexCastOp>())
    v = cast.getIn();
  if (auto index = v.getDefiningOp<IndexOp>())
    return index.getDim();
  return std::nullopt;
}

/// `pred` with its operands swapped (a < b is b > a).
arith::CmpIPredicate swapped(arith::CmpIPredicate pred) {
  using P = arith::CmpIPredicate;
  switch (pred) {
  case P::slt:
    return P::sgt;
  case P::sgt:
    return P::slt;
  case P::sle:
    return P::sge;
  case P::sge:
    return P::sle;
  case P::ult:
    return P::ugt;
  case P::ugt:
    return P::ult;
  case P::ule:
    return P::uge;
  case P::uge:
    return P::ule;
  default:
    return pred;
  }
}

/// Whether `cond` holds exactly when key `t` is visible from query `s`
/// (t <= s), or exactly when it is not (`masked`).
bool isCausalCondition(Value cond, int64_t s, int64_t t, bool masked) {
  auto cmp = cond.getDefiningOp<arith::CmpIOp>();
  if (!cmp)
    return false;
  std::optional<int64_t> lhs = indexDim(cmp.getLhs());
  std::optional<int64_t> rhs = indexDim(cmp.getRhs());
  if (!lhs || !rhs)
    return false;
  using P = arith::CmpIPredicate;
  P pred = cmp.getPredicate();
  // Put t on the left: t <= s, or t > s when masked.
  if (*lhs == s && *rhs == t)
    pred = swapped(pred);
  else if (!(*lhs == t && *rhs == s))
    return false;
  return masked ? (pred == P::sgt || pred == P::ugt)
                : (pred == P::sle || pred == P::ule);
}

/// What an elementwise op between the scores and the softmax does: scale
/// and, optionally, a causal mask. Fails on anything else.
struct ScoreEpilogue {
  double scale = 1;
  bool causal = false;
};

/// The most a masked score may be, after the epilogue's scale, for the
/// fused kernel (which gives masked keys exactly 0) to compute what the
/// program computes: exp(mask - max) is exactly 0 in f32 once the
/// difference is below -104, so with a mask at or below -1000 the result
/// is the same unless a row's visible scores are all below -896. This
/// takes -inf, -1e9, every dtype's finfo.min (f16's -65504 included, also
/// after a 1/sqrt(d) scale) and keeps a mild penalty such as -100 unfused.
constexpr double kMaskBound = -1000;

/// A mask value: -inf, or a finite value whose scaled value is at or below
/// kMaskBound.
bool isMaskValue(Value v, double scale) {
  std::optional<double> c = constantOf(v);
  return c && scale > 0 && *c * scale <= kMaskBound;
}

std::optional<ScoreEpilogue> scoreEpilogue(JoinAggOp op) {
  int64_t rank = cast<ShapedType>(op.getType()).getRank();
  if (!isElementwise(op) || op.getInputs().size() != 1 ||
      !isIdentity(op.getIndicesOfInput(0), rank))
    return std::nullopt;
  Value arg = op.getJoin().front().getArgument(0);
  Product outer = productOf(yieldedValue(op));
  ScoreEpilogue epilogue;
  if (outer.hasFactors({{arg, 1}})) {
    epilogue.scale = outer.coefficient;
    return epilogue;
  }
  if (outer.factors.size() != 1 || outer.factors[0].second != 1)
    return std::nullopt;
  auto select =
      stripFloatCasts(outer.factors[0].first).getDefiningOp<arith::SelectOp>();
  if (!select)
    return std::nullopt;
  bool maskedWhenTrue = isMaskValue(select.getTrueValue(), outer.coefficient);
  Value kept = maskedWhenTrue ? select.getTrueValue() : select.getFalseValue();
  if (!maskedWhenTrue &&
      !isMaskValue(select.getFalseValue(), outer.coefficient))
    return std::nullopt;
  kept = maskedWhenTrue ? select.getFalseValue() : select.getTrueValue();
  Product inner = productOf(kept);
  // The outer coefficient also scales the mask value (isMaskValue took
  // it into account).
  if (!inner.hasFactors({{arg, 1}}) || !(outer.coefficient > 0) ||
      !isCausalCondition(select.getCondition(), rank - 2, rank - 1,
                         maskedWhenTrue))
    return std::nullopt;
  epilogue.scale = outer.coefficient * inner.coefficient;
  epilogue.causal = true;
  return epilogue;
}

/// A contraction `sum over one loop of a * b` (times a constant): its two
/// inputs, the constant, and the summed loop.
struct Contraction {
  Value lhs, rhs;
  SmallVector<int64_t> lhsIndices, rhsIndices;
  int64_t summed;
  double coefficient;
};

/// `value`, read at `indices`, seen through a transpose only that reader
/// reads (an elementwise join-agg yielding its one input, permuted): the
/// transposed value and the indices that read it the same way (a key
/// transposed for linalg.batch_matmul). Returns the transpose, or null.
JoinAggOp throughTranspose(Value &value, SmallVector<int64_t> &indices) {
  auto t = value.getDefiningOp<JoinAggOp>();
  if (!t || !value.hasOneUse() || !isElementwise(t) ||
      t.getInputs().size() != 1 ||
      yieldedValue(t) != t.getJoin().front().getArgument(0))
    return {};
  ArrayRef<int64_t> permutation = t.getIndicesOfInput(0);
  if (permutation.size() != indices.size())
    return {};
  SmallVector<int64_t> composed;
  for (int64_t loop : permutation)
    composed.push_back(indices[loop]);
  value = t.getInputs()[0];
  indices = composed;
  return t;
}

std::optional<Contraction> contractionOf(JoinAggOp op) {
  if (!isLogical(op) || op.getAgg() != AggKind::Add ||
      op.getInputs().size() != 2)
    return std::nullopt;
  Block &body = op.getJoin().front();
  Product product = productOf(yieldedValue(op));
  if (!product.hasFactors({{body.getArgument(0), 1}, {body.getArgument(1), 1}}))
    return std::nullopt;
  Contraction c{op.getInputs()[0],
                op.getInputs()[1],
                llvm::to_vector(op.getIndicesOfInput(0)),
                llvm::to_vector(op.getIndicesOfInput(1)),
                -1,
                product.coefficient};
  for (int64_t loop : c.lhsIndices)
    if (!llvm::is_contained(op.getOutputIndices(), loop)) {
      if (c.summed >= 0)
        return std::nullopt;
      c.summed = loop;
    }
  if (c.summed < 0)
    return std::nullopt;
  return c;
}

/// Whether `indices` is `lead` followed by `tail`.
bool isLeadThen(ArrayRef<int64_t> indices, ArrayRef<int64_t> lead,
                ArrayRef<int64_t> tail) {
  return indices.size() == lead.size() + tail.size() &&
         indices.take_front(lead.size()) == lead &&
         indices.drop_front(lead.size()) == tail;
}

/// Rewrites the attention whose softmax is `softmax`, if it is one. Where
/// the softmax reads a product of two tensors (the scores of an attention)
/// but the rest does not match, `missed` says what stood in the way.
bool fuseAttention(SoftmaxOp softmax, std::string &missed) {
  auto miss = [&](const char *why) {
    missed = why;
    return false;
  };
  auto type = cast<RankedTensorType>(softmax.getType());
  int64_t rank = type.getRank();
  if (softmax.getSpec() || softmax.getDevice() || (rank != 3 && rank != 4) ||
      int64_t(softmax.getDim()) != rank - 1)
    return false;
  // Scores: [lead..., s, t], through an optional scale-and-mask op, and
  // collapsed from [lead..., kv_head, group, s, t] under GQA.
  Value scores = softmax.getInput();
  ScoreEpilogue epilogue;
  auto epilogueOp = scores.getDefiningOp<JoinAggOp>();
  if (epilogueOp && epilogueOp.getAgg() == AggKind::None) {
    std::optional<ScoreEpilogue> e = scoreEpilogue(epilogueOp);
    if (!e || soleUser(scores) != softmax.getOperation()) {
      if (llvm::any_of(epilogueOp.getInputs(), [](Value v) {
            auto producer = v.getDefiningOp<JoinAggOp>();
            return producer && contractionOf(producer);
          }))
        return miss("the op between the scores and the softmax is not a "
                    "scale and causal mask ein fuses (a mask must hide "
                    "exactly the keys after the query, with -inf or a "
                    "value at or below -1000 after the scale, which exp "
                    "sends to 0; the scores may have no other user)");
      return false;
    }
    epilogue = *e;
    scores = epilogueOp.getInputs()[0];
  } else {
    epilogueOp = nullptr;
  }
  int64_t heads = rank - 3; // the head dimension of scores, q and the output
  auto collapseScores = scores.getDefiningOp<ReshapeOp>();
  if (collapseScores && !splitsDim(collapseScores, heads, /*collapse=*/true))
    return false;
  Value raw = collapseScores ? collapseScores.getSource() : scores;
  auto scoreOp = raw.getDefiningOp<JoinAggOp>();
  if (!scoreOp || !raw.hasOneUse() ||
      (collapseScores && !collapseScores->hasOneUse()))
    return false;
  std::optional<Contraction> qk = contractionOf(scoreOp);
  if (!qk)
    return false;
  bool gqa = collapseScores != nullptr;
  ArrayRef<int64_t> out = scoreOp.getOutputIndices();
  int64_t n = out.size();
  if (n != rank + gqa)
    return miss("the scores are not [batch, heads, queries, keys]");
  // out = [lead..., s, t]; under GQA lead ends with kv_head, group.
  int64_t s = out[n - 2], t = out[n - 1], d = qk->summed;
  ArrayRef<int64_t> lead = out.drop_back(2);
  ArrayRef<int64_t> kvLead = gqa ? lead.drop_back() : lead;
  if (!isLeadThen(qk->lhsIndices, lead, {s, d}))
    std::swap(qk->lhs, qk->rhs), std::swap(qk->lhsIndices, qk->rhsIndices);
  // The key may come transposed ([.., d, t], as linalg.batch_matmul reads
  // it): look through the transpose.
  JoinAggOp keyTranspose;
  if (!isLeadThen(qk->rhsIndices, kvLead, {t, d}))
    keyTranspose = throughTranspose(qk->rhs, qk->rhsIndices);
  if (!isLeadThen(qk->lhsIndices, lead, {s, d}) ||
      !isLeadThen(qk->rhsIndices, kvLead, {t, d}))
    return miss("the query or key is not read heads-major ([.., heads, "
                "tokens, dim]); copy it so before the product");
  Value query = qk->lhs, key = qk->rhs;
  ReshapeOp splitQuery;
  if (gqa) {
    splitQuery = query.getDefiningOp<ReshapeOp>();
    if (!splitQuery || !splitsDim(splitQuery, heads, /*collapse=*/false))
      return miss("grouped key heads without the query's heads split by "
                  "them");
    query = splitQuery.getSource();
  }
  double scale = qk->coefficient * epilogue.scale;
  if (!(scale > 0))
    return miss("the scale is not positive");

  // Weighted values: sum over t of p * v, [lead..., s, e], the
  // probabilities split like the query under GQA and the result collapsed.
  Operation *user = soleUser(softmax.getResult());
  ReshapeOp splitProbs = dyn_cast_or_null<ReshapeOp>(user);
  if (gqa != bool(splitProbs) ||
      (splitProbs && !splitsDim(splitProbs, heads, /*collapse=*/false)))
    return miss("the probabilities are not split like the query's heads");
  if (splitProbs)
    user = soleUser(splitProbs.getResult());
  auto valueOp = dyn_cast_or_null<JoinAggOp>(user);
  std::optional<Contraction> pv =
      valueOp ? contractionOf(valueOp) : std::nullopt;
  if (!pv || pv->coefficient != 1)
    return miss("the probabilities are not multiplied by the values alone "
                "(p . v with no other user)");
  Value probs = splitProbs ? splitProbs.getResult() : softmax.getResult();
  if (pv->rhs == probs)
    std::swap(pv->lhs, pv->rhs), std::swap(pv->lhsIndices, pv->rhsIndices);
  ArrayRef<int64_t> pvOut = valueOp.getOutputIndices();
  if (pv->lhs != probs || pvOut.size() != out.size())
    return miss("the weighted values do not sum over the keys");
  // Loops of the values op named as in the scores: lead, s, t (summed), e.
  ArrayRef<int64_t> pvLead = pvOut.drop_back(2);
  int64_t ps = pvOut[n - 2], pt = pv->summed, e = pvOut[n - 1];
  ArrayRef<int64_t> pvKvLead = gqa ? pvLead.drop_back() : pvLead;
  if (!isLeadThen(pv->lhsIndices, pvLead, {ps, pt}) ||
      !isLeadThen(pv->rhsIndices, pvKvLead, {pt, e}))
    return miss("the values are not read heads-major ([.., heads, tokens, "
                "dim])");
  Value value = pv->rhs;
  Value result = valueOp.getResult();
  ReshapeOp collapseResult;
  if (gqa) {
    collapseResult = dyn_cast_or_null<ReshapeOp>(soleUser(result));
    if (!collapseResult || !splitsDim(collapseResult, heads, /*collapse=*/true))
      return miss("the grouped result is not collapsed back to the query's "
                  "heads");
    result = collapseResult.getResult();
  }
  auto qType = cast<RankedTensorType>(query.getType());
  auto kType = cast<RankedTensorType>(key.getType());
  auto vType = cast<RankedTensorType>(value.getType());
  auto resultType = cast<RankedTensorType>(result.getType());
  Type element = qType.getElementType();
  if (kType.getElementType() != element || vType.getElementType() != element ||
      resultType.getElementType() != element || kType.getDimSize(heads) == 0 ||
      qType.getDimSize(heads) % kType.getDimSize(heads))
    return miss("query, key, value and result differ in element type, or "
                "the query's heads are not a multiple of the key's");
  int64_t group = qType.getDimSize(heads) / kType.getDimSize(heads);
  if (group > 1 && !gqa)
    return miss("more query heads than key heads without a grouping");

  // ein.attention is [batch, heads, tokens, dim]: a rank-3 program gets a
  // batch of one around it.
  OpBuilder builder(result.getContext());
  builder.setInsertionPointAfter(result.getDefiningOp());
  Location loc = valueOp.getLoc();
  auto batched = [&](Value v, RankedTensorType to) -> Value {
    SmallVector<Attribute> groups = {builder.getI64ArrayAttr({0, 1}),
                                     builder.getI64ArrayAttr({2}),
                                     builder.getI64ArrayAttr({3})};
    return ReshapeOp::create(builder, loc, to, v, builder.getArrayAttr(groups),
                             SpecAttr());
  };
  auto withBatch = [](RankedTensorType t) {
    SmallVector<int64_t> shape = {1};
    llvm::append_range(shape, t.getShape());
    return RankedTensorType::get(shape, t.getElementType());
  };
  Value q = query, k = key, v = value;
  RankedTensorType attentionType = resultType;
  if (rank == 3) {
    q = batched(query, withBatch(qType));
    k = batched(key, withBatch(kType));
    v = batched(value, withBatch(vType));
    attentionType = withBatch(resultType);
  }
  auto attention = AttentionOp::create(
      builder, loc, attentionType, q, k, v,
      epilogue.causal ? builder.getUnitAttr() : UnitAttr(),
      builder.getI64IntegerAttr(group), builder.getF64FloatAttr(scale),
      builder.getI64IntegerAttr(0), builder.getI64IntegerAttr(0), SpecAttr(),
      IntegerAttr());
  Value fused = attention.getResult();
  if (rank == 3)
    fused = batched(fused, resultType);
  result.replaceAllUsesWith(fused);
  eraseIfDead({collapseResult, valueOp, splitProbs, softmax, epilogueOp,
               collapseScores, scoreOp, splitQuery, keyTranspose});
  return true;
}

//===----------------------------------------------------------------------===//
// RMSNorm
//===----------------------------------------------------------------------===//

/// Rewrites `op` if it is `x * rsqrt(sum(x * x) / n + eps) * w`.
bool fuseRmsNorm(JoinAggOp op) {
  auto type = cast<RankedTensorType>(op.getType());
  int64_t rank = type.getRank();
  if (!isElementwise(op) || op.getInputs().size() != 3)
    return false;
  int64_t width = type.getShape().back();
  // Inputs by their indices: x whole, the sum of squares without the last
  // dimension, the weight along it alone.
  Value x, sumOfSquares, weight, xArg, ssArg, wArg;
  Block &body = op.getJoin().front();
  for (auto [i, input] : llvm::enumerate(op.getInputs())) {
    ArrayRef<int64_t> indices = op.getIndicesOfInput(i);
    Value arg = body.getArgument(i);
    if (isIdentity(indices, rank) && !x)
      x = input, xArg = arg;
    else if (isIdentityWithout(indices, rank, rank - 1) && !sumOfSquares)
      sumOfSquares = input, ssArg = arg;
    else if (indices == ArrayRef<int64_t>{rank - 1} && !weight)
      weight = input, wArg = arg;
    else
      return false;
  }
  // Its body: x * w * rsqrt(m), or x * w / sqrt(m), m = ss * (1 / n) + eps.
  Product product = productOf(yieldedValue(op));
  if (product.coefficient != 1 || product.factors.size() != 3 ||
      product.powerOf(xArg) != 1 || product.powerOf(wArg) != 1)
    return false;
  Value root;
  for (auto [leaf, power] : product.factors)
    if (leaf != xArg && leaf != wArg) {
      if (power == 1)
        if (auto rsqrt = leaf.getDefiningOp<math::RsqrtOp>())
          root = rsqrt.getOperand();
      if (power == -1)
        if (auto sqrt = leaf.getDefiningOp<math::SqrtOp>())
          root = sqrt.getOperand();
    }
  auto add = root ? stripFloatCasts(root).getDefiningOp<arith::AddFOp>()
                  : arith::AddFOp();
  if (!add)
    return false;
  std::optional<double> eps = constantOf(add.getRhs());
  Value mean = add.getLhs();
  if (!eps) {
    eps = constantOf(add.getLhs());
    mean = add.getRhs();
  }
  Product meanProduct = productOf(mean);
  if (!eps || !(*eps > 0) || !meanProduct.hasFactors({{ssArg, 1}}) ||
      std::abs(meanProduct.coefficient * width - 1) > 1e-6)
    return false;
  // The sum of squares of the same x, used only here.
  auto ss = sumOfSquares.getDefiningOp<JoinAggOp>();
  if (!ss || !sumOfSquares.hasOneUse() || !isLogical(ss) ||
      ss.getAgg() != AggKind::Add || ss.getInputs().size() != 1 ||
      ss.getInputs()[0] != x || !isIdentity(ss.getIndicesOfInput(0), rank) ||
      !isIdentityWithout(ss.getOutputIndices(), rank, rank - 1))
    return false;
  Product square = productOf(yieldedValue(ss));
  if (square.coefficient != 1 ||
      !square.hasFactors({{ss.getJoin().front().getArgument(0), 2}}))
    return false;
  auto wType = cast<RankedTensorType>(weight.getType());
  if (x.getType() != type || wType.getElementType() != type.getElementType())
    return false;
  OpBuilder builder(op);
  auto norm = RmsNormOp::create(builder, op.getLoc(), x, weight, *eps);
  op.getResult().replaceAllUsesWith(norm.getResult());
  eraseIfDead({op, ss});
  return true;
}

//===----------------------------------------------------------------------===//
// LayerNorm
//===----------------------------------------------------------------------===//

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

/// Rewrites `op` if it is `(x - m) * rsqrt(v + eps) [* w] [+ b]` with
/// `m = sum(x) / n` and `v = sum((x - m)^2) / n` over the last dimension,
/// as ein-import leaves PyTorch's `native_layer_norm` (and the torch-mlir
/// decomposition): the sum, the mean (its own op or in each body), the sum
/// of squared deviations and one elementwise join.
bool fuseLayerNorm(JoinAggOp op) {
  auto type = cast<RankedTensorType>(op.getType());
  int64_t rank = type.getRank();
  if (!isElementwise(op) || op.getInputs().size() < 3 || rank < 1)
    return false;
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
  auto norm =
      LayerNormOp::create(builder, op.getLoc(), stats.x, weight, bias, *eps);
  op.getResult().replaceAllUsesWith(norm.getResult());
  eraseIfDead({op, squares, stats.deviation, stats.ops[0], stats.ops[1]});
  return true;
}

//===----------------------------------------------------------------------===//
// RoPE's rotate-half
//===----------------------------------------------------------------------===//

/// Rewrites `concat(-x[.., h:], x[.., :h])` along dimension D (x's D-th
/// extent 2h) as a rotation over D split into (2, h):
///   xr = reshape x to [.., 2, h, ..]
///   r[.., c, j, ..] = sum over c' of (c + c' == 1 ? (c == 0 ? -1 : 1) : 0)
///                                    * xr[.., c', j, ..]
///   reshape r back to x's shape
/// a join whose every loop a spec may cut, where a concat of slices would
/// fix D's cut to its halves.
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

struct EinFuseComposites
    : mlir::ein::impl::EinFuseCompositesBase<EinFuseComposites> {
  using Base::Base;

  void runOnOperation() override {
    Operation *root = getOperation();
    // Softmax first: attention is found around it.
    SmallVector<JoinAggOp> maxes;
    root->walk([&](JoinAggOp op) {
      if (op.getAgg() == AggKind::Max)
        maxes.push_back(op);
    });
    for (JoinAggOp max : maxes)
      fuseSoftmax(max);
    SmallVector<SoftmaxOp> softmaxes;
    root->walk([&](SoftmaxOp op) { softmaxes.push_back(op); });
    if (remarks != "missed" && remarks != "none") {
      root->emitError() << "remarks must be missed or none, got '" << remarks
                        << "'";
      return signalPassFailure();
    }
    for (SoftmaxOp softmax : softmaxes) {
      std::string missed;
      if (!fuseAttention(softmax, missed) && !missed.empty() &&
          remarks == "missed")
        softmax.emitRemark()
            << "attention not fused (it runs as separate kernels, with its "
               "scores in memory): "
            << missed;
    }
    SmallVector<JoinAggOp> elementwiseOps;
    root->walk([&](JoinAggOp op) {
      if (op.getAgg() == AggKind::None)
        elementwiseOps.push_back(op);
    });
    for (JoinAggOp op : elementwiseOps)
      if (!fuseRmsNorm(op))
        fuseLayerNorm(op);
    SmallVector<ConcatOp> concats;
    root->walk([&](ConcatOp op) { concats.push_back(op); });
    for (ConcatOp cat : concats)
      rewriteRotateHalf(cat);
  }
};

} // namespace
