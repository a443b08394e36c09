//===- Adjoints.cpp - The adjoint of each op and the reverse sweep --------===//
//
// Reverse mode over a function of logical ein: each op's result adjoint is
// turned into a contribution to each of its operands that depends on a
// marked argument, and contributions to one value are added. Every
// contribution is a join-agg (or a reshape, slice or concat), so the
// gradient program is plannable as the forward one is.
//
//===----------------------------------------------------------------------===//

#include "Autodiff.h"

#include "Einsummable/Dialect/Ein/IR/EinDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using namespace mlir::ein;
using namespace mlir::ein::autodiff_detail;

namespace {

/// `x + y`, element by element.
Value add(OpBuilder &b, Location loc, Value x, Value y) {
  int64_t rank = tensorType(x).getRank();
  return createJoin(b, loc, tensorType(x), {x, y},
                    {identity(rank), identity(rank)}, identity(rank),
                    AggKind::None,
                    [&](OpBuilder &inner, ValueRange args, Type acc) -> Value {
                      return arith::AddFOp::create(
                          inner, loc, castFloat(inner, loc, args[0], acc),
                          castFloat(inner, loc, args[1], acc));
                    });
}

class Sweep {
public:
  Sweep(OpBuilder &builder, ArrayRef<BlockArgument> marked)
      : b(builder), marked(marked.begin(), marked.end()) {}

  /// The type `value`'s adjoint has: its own, but f32 for a marked
  /// argument of bf16 or f16 (its gradient sums in f32, as mixed-precision
  /// training keeps gradients).
  RankedTensorType adjointType(Value value) const {
    RankedTensorType type = tensorType(value);
    Type element = type.getElementType();
    if (marked.contains(value) && (element.isBF16() || element.isF16()))
      return type.clone(Float32Type::get(value.getContext()));
    return type;
  }

  /// Adds `contribution` to the adjoint of `value`.
  void accumulate(Value value, Value contribution) {
    RankedTensorType type = adjointType(value);
    if (tensorType(contribution).getElementType() != type.getElementType()) {
      int64_t rank = type.getRank();
      contribution = createJoin(
          b, value.getLoc(), type, {contribution}, {identity(rank)},
          identity(rank), AggKind::None,
          [](OpBuilder &, ValueRange args, Type) { return args[0]; });
    }
    Value &adjoint = adjoints[value];
    adjoint =
        adjoint ? add(b, value.getLoc(), adjoint, contribution) : contribution;
  }

  Value adjointOf(Value value) const { return adjoints.lookup(value); }

  /// The contributions of `op`, whose result's adjoint is `adjoint`, to
  /// its operands in `active`.
  LogicalResult propagate(Operation *op, Value adjoint,
                          const DenseSet<Value> &active) {
    if (auto join = dyn_cast<JoinAggOp>(op))
      return joinAgg(join, adjoint, active);
    Location loc = op->getLoc();
    if (auto reshape = dyn_cast<ReshapeOp>(op)) {
      accumulate(reshape.getSource(),
                 ReshapeOp::create(b, loc, reshape.getSource().getType(),
                                   adjoint, reshape.getReassociation(),
                                   SpecAttr()));
      return success();
    }
    if (auto slice = dyn_cast<SliceOp>(op)) {
      accumulate(slice.getSource(), padded(slice, adjoint));
      return success();
    }
    if (auto conv = dyn_cast<ConvOp>(op)) {
      ConvAdjoints adjoints =
          convAdjoints(b, conv, adjoint, active.contains(conv.getInput()),
                       active.contains(conv.getFilter()));
      if (adjoints.input)
        accumulate(conv.getInput(), adjoints.input);
      if (adjoints.filter)
        accumulate(conv.getFilter(), adjoints.filter);
      return success();
    }
    if (auto gather = dyn_cast<GatherOp>(op)) {
      accumulate(gather.getTable(), scatterAdd(gather, adjoint));
      return success();
    }
    if (auto concat = dyn_cast<ConcatOp>(op)) {
      int64_t dim = concat.getDim(), offset = 0;
      for (Value input : concat.getInputs()) {
        RankedTensorType type = tensorType(input);
        if (active.contains(input)) {
          SmallVector<int64_t> offsets(type.getRank(), 0);
          offsets[dim] = offset;
          accumulate(input, SliceOp::create(b, loc, type, adjoint, offsets,
                                            type.getShape(), SpecAttr()));
        }
        offset += type.getDimSize(dim);
      }
      return success();
    }
    return op->emitError() << "ein-autodiff has no adjoint rule for '"
                           << op->getName()
                           << "' (its operands depend on a marked argument)";
  }

private:
  OpBuilder &b;
  DenseSet<Value> marked;
  DenseMap<Value, Value> adjoints;

  /// The slice's adjoint placed where the slice was read, zeros around it:
  /// one concat per cut dimension.
  Value padded(SliceOp slice, Value adjoint) {
    RankedTensorType source = tensorType(slice.getSource());
    Value result = adjoint;
    for (int64_t dim = 0; dim < source.getRank(); ++dim) {
      int64_t before = slice.getOffsets()[dim];
      int64_t after = source.getDimSize(dim) - before - slice.getSizes()[dim];
      result = padDim(b, slice.getLoc(), result, dim, before, after, 0);
    }
    return result;
  }

  /// The gather's adjoint: each table row receives the sum of the
  /// adjoint's rows whose index picked it,
  ///   d table[v, t...] = sum over i... of (idx[i...] - row_offset == v)
  ///                      ? adjoint[i..., t...] : 0,
  /// a join-agg over the gather's own loops (i..., v, t...), which the
  /// planner may cut by rows as it cuts the forward lookup.
  Value scatterAdd(GatherOp gather, Value adjoint) {
    Location loc = gather.getLoc();
    RankedTensorType table = adjointType(gather.getTable());
    int64_t p = tensorType(gather.getIndices()).getRank();
    int64_t q = table.getRank() - 1;
    SmallVector<int64_t> rows = identity(p), read = identity(p), out{p};
    for (int64_t t = 0; t < q; ++t) {
      read.push_back(p + 1 + t);
      out.push_back(p + 1 + t);
    }
    int64_t offset = gather.getRowOffset();
    return createJoin(
        b, loc, table, {adjoint, gather.getIndices()}, {read, rows}, out,
        AggKind::Add, [&](OpBuilder &inner, ValueRange args, Type acc) {
          Value row = IndexOp::create(inner, loc, inner.getIndexType(),
                                      inner.getI64IntegerAttr(p));
          Value picked = arith::IndexCastOp::create(
              inner, loc, inner.getIndexType(), args[1]);
          if (offset)
            picked = arith::SubIOp::create(
                inner, loc, picked,
                arith::ConstantIndexOp::create(inner, loc, offset));
          Value hit = arith::CmpIOp::create(
              inner, loc, arith::CmpIPredicate::eq, picked, row);
          return arith::SelectOp::create(inner, loc, hit,
                                         castFloat(inner, loc, args[0], acc),
                                         floatConstant(inner, loc, acc, 0));
        });
  }

  /// The index lists of `op`'s inputs, in order.
  static SmallVector<SmallVector<int64_t>> inputIndices(JoinAggOp op) {
    SmallVector<SmallVector<int64_t>> lists;
    for (unsigned i = 0; i < op.getInputs().size(); ++i)
      lists.push_back(llvm::to_vector(op.getIndicesOfInput(i)));
    return lists;
  }

  /// For a max or min aggregation: how many of each output's terms equal
  /// it (the adjoint is shared among ties), in f32.
  Value tieCount(JoinAggOp op) {
    Location loc = op.getLoc();
    RankedTensorType resultType = tensorType(op.getResult());
    SmallVector<Value> inputs(op.getInputs());
    inputs.push_back(op.getResult());
    SmallVector<SmallVector<int64_t>> indices = inputIndices(op);
    indices.push_back(llvm::to_vector(op.getOutputIndices()));
    auto f32 = Float32Type::get(op.getContext());
    return createJoin(
        b, loc, resultType.clone(f32), inputs, indices, op.getOutputIndices(),
        AggKind::Add, [&](OpBuilder &inner, ValueRange args, Type acc) {
          IRMapping map;
          Value term = cloneRegion(inner, op, args.drop_back(), map);
          Value tie = isExtremum(inner, loc, term, args.back(),
                                 resultType.getElementType());
          return arith::SelectOp::create(inner, loc, tie,
                                         floatConstant(inner, loc, acc, 1),
                                         floatConstant(inner, loc, acc, 0));
        });
  }

  /// Whether `term` is the output `out`, compared as the result rounds it.
  static Value isExtremum(OpBuilder &inner, Location loc, Value term, Value out,
                          Type resultElement) {
    auto f32 = Float32Type::get(inner.getContext());
    Value rounded =
        castFloat(inner, loc, castFloat(inner, loc, term, resultElement), f32);
    return arith::CmpFOp::create(inner, loc, arith::CmpFPredicate::OEQ, rounded,
                                 castFloat(inner, loc, out, f32));
  }

  /// Clones `op`'s region ops into `inner`'s block with its arguments
  /// mapped to `args`; returns the yielded value's clone.
  static Value cloneRegion(OpBuilder &inner, JoinAggOp op, ValueRange args,
                           IRMapping &map) {
    Block &body = op.getJoin().front();
    for (auto [from, to] : llvm::zip(body.getArguments(), args))
      map.map(from, to);
    for (Operation &inside : body.without_terminator())
      inner.clone(inside, map);
    return map.lookup(body.getTerminator()->getOperand(0));
  }

  LogicalResult joinAgg(JoinAggOp op, Value adjoint,
                        const DenseSet<Value> &active) {
    AggKind agg = op.getAgg();
    if (agg != AggKind::Add && agg != AggKind::None && agg != AggKind::Max &&
        agg != AggKind::Min)
      return op.emitError() << "ein-autodiff has no adjoint rule for a '"
                            << stringifyAggKind(agg) << "' aggregation";
    bool extremum = agg == AggKind::Max || agg == AggKind::Min;
    Value count = extremum ? tieCount(op) : Value();
    for (auto [i, input] : llvm::enumerate(op.getInputs())) {
      if (!active.contains(input))
        continue;
      FailureOr<Value> contribution = inputAdjoint(op, i, adjoint, count);
      if (failed(contribution))
        return failure();
      accumulate(input, *contribution);
    }
    return success();
  }

  /// d input_i [I_i] = sum over the loops I_i lacks of
  ///   adjoint[O] * d body / d x_i  (* [term is the extremum] / ties).
  /// The join-agg reads only the inputs the derivative needs, and those
  /// whose loops nothing else carries (a loop's extent still counts).
  FailureOr<Value> inputAdjoint(JoinAggOp op, unsigned i, Value adjoint,
                                Value count) {
    Location loc = op.getLoc();
    unsigned n = op.getInputs().size();
    RankedTensorType resultType = tensorType(op.getResult());
    RankedTensorType type = adjointType(op.getInputs()[i]);
    SmallVector<Value> inputs{adjoint};
    llvm::append_range(inputs, op.getInputs());
    SmallVector<SmallVector<int64_t>> indices{
        llvm::to_vector(op.getOutputIndices())};
    llvm::append_range(indices, inputIndices(op));
    if (count) {
      for (Value extra : {op.getResult(), count}) {
        inputs.push_back(extra);
        indices.push_back(llvm::to_vector(op.getOutputIndices()));
      }
    }
    // The region, built in a block of its own before the op exists.
    auto block = std::make_unique<Block>();
    for (Value input : inputs)
      block->addArgument(tensorType(input).getElementType(), loc);
    OpBuilder inner(op.getContext());
    inner.setInsertionPointToEnd(block.get());
    Type acc = defaultAcc(type.getElementType());
    IRMapping map;
    Value term = cloneRegion(inner, op, block->getArguments().slice(1, n), map);
    FailureOr<Value> derivative =
        differentiate(inner, term, block->getArgument(1 + i));
    if (failed(derivative))
      return failure();
    Value yielded;
    if (*derivative) {
      yielded = castFloat(inner, loc, block->getArgument(0), acc);
      if (!matchPattern(*derivative, m_OneFloat()))
        yielded = arith::MulFOp::create(
            inner, loc, yielded, castFloat(inner, loc, *derivative, acc));
      if (count) {
        Value tie = isExtremum(inner, loc, term, block->getArgument(n + 1),
                               resultType.getElementType());
        Value share = arith::DivFOp::create(
            inner, loc, yielded,
            castFloat(inner, loc, block->getArgument(n + 2), acc));
        yielded = arith::SelectOp::create(inner, loc, tie, share,
                                          floatConstant(inner, loc, acc, 0));
      }
    } else {
      yielded = floatConstant(inner, loc, acc, 0);
    }
    YieldOp::create(inner, loc, yielded);
    // The forward region's ops the derivative does not read.
    SmallVector<Operation *> ops;
    for (Operation &inside : block->without_terminator())
      ops.push_back(&inside);
    for (Operation *inside : llvm::reverse(ops))
      if (inside->use_empty() && isPure(inside))
        inside->erase();

    // Keep the adjoint, every input the region reads, and an unread input
    // only where it carries a loop nothing kept carries.
    int64_t loops = op.getNumLoops();
    llvm::SmallBitVector covered(loops);
    auto cover = [&](ArrayRef<int64_t> list) {
      for (int64_t loop : list)
        covered.set(loop);
    };
    cover(op.getIndicesOfInput(i));
    SmallVector<bool> keep(inputs.size(), false);
    for (unsigned k = 0; k < inputs.size(); ++k)
      if (k == 0 || !block->getArgument(k).use_empty()) {
        keep[k] = true;
        cover(indices[k]);
      }
    for (unsigned k = 1; k < inputs.size(); ++k)
      if (!keep[k] && llvm::any_of(indices[k], [&](int64_t loop) {
            return !covered.test(loop);
          })) {
        keep[k] = true;
        cover(indices[k]);
      }
    SmallVector<Value> keptInputs;
    SmallVector<Attribute> keptIndices;
    for (int k = inputs.size() - 1; k >= 0; --k)
      if (!keep[k])
        block->eraseArgument(k);
    for (unsigned k = 0; k < inputs.size(); ++k)
      if (keep[k]) {
        keptInputs.push_back(inputs[k]);
        keptIndices.push_back(b.getDenseI64ArrayAttr(indices[k]));
      }
    ArrayRef<int64_t> out = op.getIndicesOfInput(i);
    AggKind agg = static_cast<int64_t>(out.size()) == loops ? AggKind::None
                                                            : AggKind::Add;
    auto join =
        JoinAggOp::create(b, loc, type, keptInputs, b.getArrayAttr(keptIndices),
                          out, agg, TypeAttr(), SpecAttr(), IntegerAttr());
    join.getJoin().push_back(block.release());
    return collapseSummedRun(join);
  }

  /// `join` (a sum of a product of two inputs) with the loops it sums
  /// collapsed into one where each input reads them as one run of
  /// dimensions in the same order: a weight's gradient summed over batch
  /// and tokens, dW[o, i] = sum_{b,s} dy[b,s,o] x[b,s,i], becomes a sum over
  /// b*s of reshaped operands, the one-loop product a library gemm takes.
  /// Returns the result, `join`'s own where nothing collapses.
  Value collapseSummedRun(JoinAggOp join) {
    SmallVector<int64_t> summed = join.getAggregatedLoops();
    if (join.getAgg() != AggKind::Add || join.getInputs().size() != 2 ||
        summed.size() < 2 || !join.getJoin().front().getOps<IndexOp>().empty())
      return join.getResult();
    // Where each input reads the summed loops: one run, in one order.
    SmallVector<int64_t> starts;
    SmallVector<int64_t> order;
    for (unsigned k = 0; k < 2; ++k) {
      ArrayRef<int64_t> list = join.getIndicesOfInput(k);
      auto first = llvm::find(list, summed.front());
      if (first == list.end())
        return join.getResult();
      int64_t start = first - list.begin();
      if (start + static_cast<int64_t>(summed.size()) >
          static_cast<int64_t>(list.size()))
        return join.getResult();
      SmallVector<int64_t> run(list.begin() + start,
                               list.begin() + start + summed.size());
      if (order.empty())
        order = run;
      SmallVector<int64_t> sorted = run;
      llvm::sort(sorted);
      if (run != order || sorted != summed ||
          llvm::count_if(list, [&](int64_t l) {
            return llvm::is_contained(summed, l);
          }) != static_cast<int64_t>(summed.size()))
        return join.getResult();
      starts.push_back(start);
    }
    // The loops renumbered: the run's first loop stands for all of it.
    SmallVector<int64_t> sizes = join.getLoopSizes();
    int64_t merged = 1;
    for (int64_t l : summed)
      merged *= sizes[l];
    SmallVector<int64_t> renumber(sizes.size(), -1);
    int64_t next = 0;
    for (int64_t l = 0; l < static_cast<int64_t>(sizes.size()); ++l)
      if (l == order.front() || !llvm::is_contained(summed, l))
        renumber[l] = next++;
    Location loc = join.getLoc();
    OpBuilder here(join);
    SmallVector<Value> inputs;
    SmallVector<Attribute> lists;
    for (unsigned k = 0; k < 2; ++k) {
      Value input = join.getInputs()[k];
      RankedTensorType type = tensorType(input);
      ArrayRef<int64_t> list = join.getIndicesOfInput(k);
      SmallVector<int64_t> shape, indices;
      SmallVector<Attribute> groups;
      for (int64_t d = 0; d < type.getRank(); ++d) {
        if (d > starts[k] && d < starts[k] + int64_t(summed.size()))
          continue;
        if (d == starts[k]) {
          SmallVector<int64_t> group;
          for (size_t j = 0; j < summed.size(); ++j)
            group.push_back(d + j);
          groups.push_back(here.getI64ArrayAttr(group));
          shape.push_back(merged);
        } else {
          groups.push_back(here.getI64ArrayAttr({d}));
          shape.push_back(type.getDimSize(d));
        }
        indices.push_back(renumber[list[d]]);
      }
      inputs.push_back(ReshapeOp::create(here, loc, type.clone(shape), input,
                                         here.getArrayAttr(groups),
                                         SpecAttr()));
      lists.push_back(here.getDenseI64ArrayAttr(indices));
    }
    SmallVector<int64_t> out;
    for (int64_t l : join.getOutputIndices())
      out.push_back(renumber[l]);
    auto collapsed = JoinAggOp::create(
        here, loc, join.getResult().getType(), inputs, here.getArrayAttr(lists),
        out, AggKind::Add, TypeAttr(), SpecAttr(), IntegerAttr());
    collapsed.getJoin().takeBody(join.getJoin());
    join.erase();
    return collapsed.getResult();
  }
};

/// Whether `type` holds one float: the scalar loss.
bool isScalarFloat(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.hasStaticShape() && tensor.getNumElements() == 1 &&
         isa<FloatType>(tensor.getElementType());
}

} // namespace

LogicalResult
autodiff_detail::appendGradients(func::FuncOp func,
                                 const OptimizerConfig &optimizer) {
  Block &body = func.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  if (ret.getNumOperands() == 0 || !isScalarFloat(ret.getOperand(0).getType()))
    return func.emitError()
           << "ein-autodiff needs the first result to be the loss, one float "
              "(a tensor of one element); got "
           << (ret.getNumOperands() ? ret.getOperand(0).getType()
                                    : Type(NoneType::get(func.getContext())));
  SmallVector<BlockArgument> marked;
  for (BlockArgument arg : func.getArguments())
    if (func.getArgAttr(arg.getArgNumber(), EinDialect::getWeightAttrName()) ||
        func.getArgAttr(arg.getArgNumber(), EinDialect::getGradAttrName()))
      marked.push_back(arg);
  if (marked.empty())
    return func.emitError() << "ein-autodiff: no argument is marked {"
                            << EinDialect::getWeightAttrName() << "} or {"
                            << EinDialect::getGradAttrName()
                            << "}, so there is no gradient to compute";
  for (BlockArgument arg : marked)
    if (!isa<FloatType>(tensorType(arg).getElementType()))
      return func.emitError()
             << "ein-autodiff: argument " << arg.getArgNumber()
             << " is marked for a gradient but holds "
             << tensorType(arg).getElementType() << ", not floats";

  // What depends on a marked argument, in program order.
  DenseSet<Value> active;
  SmallVector<Operation *> forward;
  auto findActive = [&] {
    active = DenseSet<Value>(marked.begin(), marked.end());
    forward.clear();
    for (Operation &op : body.without_terminator()) {
      forward.push_back(&op);
      if (llvm::any_of(op.getOperands(),
                       [&](Value v) { return active.contains(v); }))
        for (Value result : op.getResults())
          if (auto type = dyn_cast<RankedTensorType>(result.getType());
              type && isa<FloatType>(type.getElementType()))
            active.insert(result);
    }
  };
  findActive();
  // A pool a gradient flows through is differentiated as the windows it
  // reads and a join-agg over them (Windows.cpp).
  bool expanded = false;
  for (Operation *op : forward)
    if (auto pool = dyn_cast<PoolOp>(op);
        pool && active.contains(pool.getResult())) {
      OpBuilder before(pool);
      pool.getResult().replaceAllUsesWith(expandPool(before, pool));
      pool.erase();
      expanded = true;
    }
  if (expanded)
    findActive();

  OpBuilder b(ret);
  Sweep sweep(b, marked);
  Value loss = ret.getOperand(0);
  sweep.accumulate(loss, fill(b, loss.getLoc(), tensorType(loss), 1));
  for (Operation *op : llvm::reverse(forward)) {
    if (llvm::none_of(op->getResults(), [&](Value result) {
          return active.contains(result) && sweep.adjointOf(result);
        }))
      continue;
    if (op->getNumResults() != 1)
      return op->emitError() << "ein-autodiff has no adjoint rule for '"
                             << op->getName() << "' (several results)";
    if (failed(sweep.propagate(op, sweep.adjointOf(op->getResult(0)), active)))
      return failure();
  }

  // With an optimizer, the weights' gradients feed its step and the
  // results are what the step updates; {ein.grad} arguments' gradients
  // are results either way.
  bool stepping = optimizer.kind != OptimizerConfig::Kind::None;
  SmallVector<BlockArgument> weights;
  SmallVector<Value> weightGradients;
  SmallVector<std::pair<Value, unsigned>> results;
  for (BlockArgument arg : marked) {
    Value gradient = sweep.adjointOf(arg);
    if (!gradient)
      gradient = fill(b, arg.getLoc(), sweep.adjointType(arg), 0);
    if (stepping &&
        func.getArgAttr(arg.getArgNumber(), EinDialect::getWeightAttrName())) {
      weights.push_back(arg);
      weightGradients.push_back(gradient);
    } else {
      results.push_back({gradient, ~0u});
    }
  }
  if (stepping) {
    SmallVector<std::pair<Value, unsigned>> updates =
        appendOptimizerStep(func, b, weights, weightGradients, optimizer);
    results.insert(results.begin(), updates.begin(), updates.end());
  }
  for (auto [value, replaces] : results) {
    DictionaryAttr attrs;
    if (replaces != ~0u)
      attrs = b.getDictionaryAttr(b.getNamedAttr(
          EinDialect::getUpdatesAttrName(), b.getI64IntegerAttr(replaces)));
    if (failed(func.insertResult(func.getNumResults(), value.getType(), attrs)))
      return failure();
    ret->insertOperands(ret->getNumOperands(), value);
  }
  return success();
}
