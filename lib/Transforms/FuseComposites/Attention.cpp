//===- Attention.cpp - attention around a softmax -------------------------===//
//
// scores = sum_d q k (times a scale), then an elementwise scale and causal
// mask (select on t <= s, else -inf), softmax over keys, sum_t p v; GQA
// through the reshapes ein-import puts around a `h floordiv g` map:
// ein.attention q, k, v {causal, group, scale}. Where the scores are a
// product of two tensors but the rest does not match, the pass may remark on
// what stood in the way.
//
//===----------------------------------------------------------------------===//

#include "FuseComposites.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"

namespace mlir::ein::fuse_composites_detail {

namespace {

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
  /// The scores lack the epilogue's leading dimension, of size one (read
  /// at [d1, ...]: GPT-2's scores at batch 1, a batched matmul over heads).
  bool unitLead = false;
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

/// `v` without a mask that hides nothing (PyTorch's attention applies the
/// mask it is given, transformers' mask of an encoder without padding
/// too): `x + 0` is x, and so is a select on a constant condition that
/// picks x (a boolean mask true everywhere).
Value withoutMaskHidingNothing(Value v) {
  Value stripped = stripFloatCasts(v);
  if (auto add = stripped.getDefiningOp<arith::AddFOp>()) {
    for (auto [term, other] : {std::pair{add.getLhs(), add.getRhs()},
                               std::pair{add.getRhs(), add.getLhs()}})
      if (std::optional<double> c = constantOf(other); c && *c == 0)
        return term;
    return v;
  }
  if (auto select = stripped.getDefiningOp<arith::SelectOp>()) {
    if (matchPattern(select.getCondition(), m_One()))
      return select.getTrueValue();
    if (matchPattern(select.getCondition(), m_Zero()))
      return select.getFalseValue();
  }
  return v;
}

std::optional<ScoreEpilogue> scoreEpilogue(JoinAggOp op) {
  auto type = cast<ShapedType>(op.getType());
  int64_t rank = type.getRank();
  if (!isElementwise(op) || op.getInputs().size() != 1)
    return std::nullopt;
  ScoreEpilogue epilogue;
  if (!isIdentity(op.getIndicesOfInput(0), rank)) {
    if (type.getDimSize(0) != 1 ||
        !isIdentityWithout(op.getIndicesOfInput(0), rank, 0))
      return std::nullopt;
    epilogue.unitLead = true;
  }
  Value arg = op.getJoin().front().getArgument(0);
  Product outer = productOf(withoutMaskHidingNothing(yieldedValue(op)));
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

/// Whether `reshape` collapses a leading dimension of size one into the
/// next ([[0, 1], [2], ...]).
bool dropsUnitLead(ReshapeOp reshape) {
  auto source = cast<RankedTensorType>(reshape.getSource().getType());
  auto result = cast<RankedTensorType>(reshape.getType());
  return source.getRank() == result.getRank() + 1 &&
         source.getDimSize(0) == 1 &&
         source.getShape().drop_front() == result.getShape();
}

/// `value`, read at `indices`, seen through an ein.reshape that only drops
/// unit dimensions, where `want` is `indices` with those dimensions' loops
/// back in place and every loop put back is of size one (`isUnitLoop`): the
/// reshape's source, read at `want`. A batch of one reaches attention so,
/// its key and values read with the batch dimension dropped. Returns the
/// reshape, or null (`value` and `indices` unchanged).
ReshapeOp throughUnitCollapse(Value &value, SmallVector<int64_t> &indices,
                              ArrayRef<int64_t> want,
                              llvm::function_ref<bool(int64_t)> isUnitLoop) {
  auto reshape = value.getDefiningOp<ReshapeOp>();
  if (!reshape || want.size() <= indices.size())
    return {};
  ArrayRef<int64_t> source =
      cast<RankedTensorType>(reshape.getSource().getType()).getShape();
  ArrayRef<int64_t> result =
      cast<RankedTensorType>(reshape.getType()).getShape();
  if (source.size() != want.size() || result.size() != indices.size())
    return {};
  size_t next = 0;
  for (auto [p, loop] : llvm::enumerate(want)) {
    if (next < indices.size() && indices[next] == loop &&
        source[p] == result[next]) {
      ++next;
      continue;
    }
    if (source[p] != 1 || !isUnitLoop(loop))
      return {};
  }
  if (next != indices.size())
    return {};
  value = reshape.getSource();
  indices.assign(want.begin(), want.end());
  return reshape;
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

} // namespace

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
  // Scores without the softmax's leading unit dimension: the attention is
  // of the scores' rank, its probabilities read through a reshape that
  // collapses that dimension away again.
  if (epilogue.unitLead) {
    if (rank != 4)
      return false;
    rank = 3;
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
  // A batch of one may reach the key and values with its dimension
  // dropped (transformers' GQA expand, exported at batch 1).
  auto scoreShape = cast<RankedTensorType>(scoreOp.getType()).getShape();
  auto unitIn = [](ArrayRef<int64_t> loops, ArrayRef<int64_t> shape) {
    return [=](int64_t loop) {
      const int64_t *at = llvm::find(loops, loop);
      return at != loops.end() && shape[at - loops.begin()] == 1;
    };
  };
  SmallVector<int64_t> keyWant(kvLead);
  keyWant.append({t, d});
  ReshapeOp keyCollapse;
  if (!isLeadThen(qk->rhsIndices, kvLead, {t, d}))
    keyCollapse = throughUnitCollapse(qk->rhs, qk->rhsIndices, keyWant,
                                      unitIn(out, scoreShape));
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
  ReshapeOp collapseProbs;
  if (epilogue.unitLead) {
    collapseProbs = dyn_cast_or_null<ReshapeOp>(user);
    if (!collapseProbs || !dropsUnitLead(collapseProbs))
      return miss("the probabilities are not read without the leading unit "
                  "dimension the scores lack");
    user = soleUser(collapseProbs.getResult());
  }
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
  Value probs = splitProbs      ? splitProbs.getResult()
                : collapseProbs ? collapseProbs.getResult()
                                : softmax.getResult();
  if (pv->rhs == probs)
    std::swap(pv->lhs, pv->rhs), std::swap(pv->lhsIndices, pv->rhsIndices);
  ArrayRef<int64_t> pvOut = valueOp.getOutputIndices();
  if (pv->lhs != probs || pvOut.size() != out.size())
    return miss("the weighted values do not sum over the keys");
  // Loops of the values op named as in the scores: lead, s, t (summed), e.
  ArrayRef<int64_t> pvLead = pvOut.drop_back(2);
  int64_t ps = pvOut[n - 2], pt = pv->summed, e = pvOut[n - 1];
  ArrayRef<int64_t> pvKvLead = gqa ? pvLead.drop_back() : pvLead;
  SmallVector<int64_t> valueWant(pvKvLead);
  valueWant.append({pt, e});
  ReshapeOp valueCollapse;
  if (!isLeadThen(pv->rhsIndices, pvKvLead, {pt, e}))
    valueCollapse = throughUnitCollapse(
        pv->rhs, pv->rhsIndices, valueWant,
        unitIn(pvOut, cast<RankedTensorType>(valueOp.getType()).getShape()));
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
  eraseIfDead({collapseResult, valueOp, splitProbs, collapseProbs, softmax,
               epilogueOp, collapseScores, scoreOp, splitQuery, keyTranspose,
               keyCollapse, valueCollapse});
  return true;
}

} // namespace mlir::ein::fuse_composites_detail
