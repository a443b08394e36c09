//===- Import.cpp - linalg on tensors to ein (ein-import) -----------------===//
//
// Named linalg ops are first generalized (upstream's generalizeNamedOp);
// every linalg.generic then becomes one ein.join_agg: its indexing maps,
// projected permutations, give each operand's loop indices; a body that
// yields `combine(accumulator, f(inputs))` over reduction loops becomes the
// join f and the aggregation kind of `combine`; linalg.index becomes
// ein.index. An initial value that is the combine's identity (a
// linalg.fill, or an unwritten tensor.empty) is dropped; any other initial
// value is combined with the result by one more elementwise join-agg. A
// fill that no reduction starts from becomes a splat constant.
//
//===----------------------------------------------------------------------===//

#include "Einsummable/Dialect/Ein/IR/EinDialect.h"
#include "Einsummable/Dialect/Ein/IR/EinOps.h"
#include "Einsummable/Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <functional>

namespace mlir::ein {
#define GEN_PASS_DEF_EINIMPORT
#include "Einsummable/Transforms/Passes.h.inc"
} // namespace mlir::ein

using namespace mlir;
using namespace mlir::ein;

namespace {

/// The aggregation `combine` performs, if it is one ein knows.
std::optional<AggKind> aggKindOf(Operation *combine) {
  if (isa<arith::AddFOp, arith::AddIOp>(combine))
    return AggKind::Add;
  if (isa<arith::MulFOp, arith::MulIOp>(combine))
    return AggKind::Mul;
  if (isa<arith::MaximumFOp, arith::MaxNumFOp, arith::MaxSIOp>(combine))
    return AggKind::Max;
  if (isa<arith::MinimumFOp, arith::MinNumFOp, arith::MinSIOp>(combine))
    return AggKind::Min;
  return std::nullopt;
}

/// Whether `value` is the identity of the reduction `combine` (an initial
/// value it may start from without changing its result). NaN is the
/// identity of maxnumf/minnumf (what linalg.softmax's decomposition starts
/// from), not of maximumf/minimumf, which propagate it.
bool isIdentity(Attribute value, Operation *combine) {
  AggKind kind = *aggKindOf(combine);
  if (auto f = dyn_cast<FloatAttr>(value)) {
    APFloat x = f.getValue();
    bool ignoresNaN = isa<arith::MaxNumFOp, arith::MinNumFOp>(combine);
    switch (kind) {
    case AggKind::Add:
      return x.isZero();
    case AggKind::Mul:
      return x.isExactlyValue(1.0);
    case AggKind::Max:
      return (x.isInfinity() && x.isNegative()) || (ignoresNaN && x.isNaN());
    case AggKind::Min:
      return (x.isInfinity() && !x.isNegative()) || (ignoresNaN && x.isNaN());
    default:
      return false;
    }
  }
  if (auto i = dyn_cast<IntegerAttr>(value)) {
    APInt x = i.getValue();
    switch (kind) {
    case AggKind::Add:
      return x.isZero();
    case AggKind::Mul:
      return x.isOne();
    case AggKind::Max:
      return x.isMinSignedValue();
    case AggKind::Min:
      return x.isMaxSignedValue();
    default:
      return false;
    }
  }
  return false;
}

/// The constant a linalg.fill writes (seen through reshapes), or null.
Attribute fillValue(Value tensor) {
  while (Operation *def = tensor.getDefiningOp()) {
    if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def))
      break;
    tensor = def->getOperand(0);
  }
  auto fill = tensor.getDefiningOp<linalg::FillOp>();
  if (!fill)
    return {};
  Attribute value;
  if (!matchPattern(fill.getInputs()[0], m_Constant(&value)))
    return {};
  return value;
}

class Importer {
public:
  explicit Importer(func::FuncOp func) : func(func), builder(func) {}

  LogicalResult run() {
    // Ops that are compositions of structured ops (linalg.softmax) are
    // decomposed into them first.
    SmallVector<linalg::AggregatedOpInterface> aggregated;
    func.walk(
        [&](linalg::AggregatedOpInterface op) { aggregated.push_back(op); });
    for (linalg::AggregatedOpInterface op : aggregated) {
      builder.setInsertionPoint(op);
      FailureOr<SmallVector<Value>> parts = op.decomposeOperation(builder);
      if (failed(parts))
        return op->emitOpError() << "cannot be imported: it does not "
                                    "decompose into structured ops";
      op->replaceAllUsesWith(*parts);
      op->erase();
    }
    // Named ops to generics first, so one conversion serves them all.
    SmallVector<linalg::LinalgOp> named;
    func.walk([&](linalg::LinalgOp op) {
      if (!isa<linalg::GenericOp, linalg::FillOp>(op))
        named.push_back(op);
    });
    IRRewriter rewriter(func.getContext());
    for (linalg::LinalgOp op : named) {
      rewriter.setInsertionPoint(op);
      if (failed(linalg::generalizeNamedOp(rewriter, op)))
        return op->emitOpError()
               << "cannot be imported: it has no linalg.generic form";
    }
    // Lookups first, before elementwise fusion can merge them into their
    // consumers' bodies.
    SmallVector<linalg::GenericOp> lookups;
    func.walk([&](linalg::GenericOp op) { lookups.push_back(op); });
    for (linalg::GenericOp op : lookups) {
      if (importGather(op))
        continue;
      FailureOr<bool> window = importWindow(op);
      if (failed(window) || (!*window && failed(importArgReduce(op))))
        return failure();
    }
    for (Operation *pad : padOps)
      if (pad->use_empty())
        pad->erase();
    if (failed(fuseElementwise()))
      return failure();
    SmallVector<linalg::GenericOp> generics;
    func.walk([&](linalg::GenericOp op) { generics.push_back(op); });
    for (linalg::GenericOp op : generics) {
      FailureOr<linalg::GenericOp> unitFree = dropUnitReads(op);
      if (failed(unitFree))
        return failure();
      FailureOr<linalg::GenericOp> split = splitFloorDivLoop(*unitFree);
      if (failed(split) || failed(importGeneric(*split)))
        return failure();
    }
    // Fills nothing reduces from any more: splat constants.
    SmallVector<linalg::FillOp> fills;
    func.walk([&](linalg::FillOp op) { fills.push_back(op); });
    for (linalg::FillOp fill : fills) {
      if (fill->use_empty()) {
        fill->erase();
        continue;
      }
      Attribute value = fillValue(fill.getResult(0));
      auto type = dyn_cast<RankedTensorType>(fill.getResult(0).getType());
      if (!value || !type)
        return fill->emitOpError()
               << "cannot be imported: only a fill with a constant into a "
                  "ranked tensor is";
      builder.setInsertionPoint(fill);
      Value filled = splat(fill.getLoc(), type, value);
      if (!filled)
        return fill->emitOpError()
               << "cannot be imported: only a fill with a float or integer "
                  "constant is";
      fill.getResult(0).replaceAllUsesWith(filled);
      fill->erase();
    }
    if (failed(importLayoutOps()))
      return failure();
    // What is left of linalg and tensor must be dead, or is not importable.
    SmallVector<Operation *> dead;
    WalkResult walk = func.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (!isa<linalg::LinalgDialect, tensor::TensorDialect>(op->getDialect()))
        return WalkResult::advance();
      if (isa<tensor::EmptyOp>(op)) {
        if (op->use_empty()) {
          dead.push_back(op);
          return WalkResult::advance();
        }
        op->emitOpError() << "cannot be imported: its contents are read "
                             "before anything writes them";
        return WalkResult::interrupt();
      }
      op->emitOpError() << "cannot be imported yet: ein-import handles "
                           "linalg ops with a generic form, linalg.fill, "
                           "linalg.softmax, tensor.empty, expand_shape, "
                           "collapse_shape, extract_slice, insert_slice, "
                           "concat and pad";
      return WalkResult::interrupt();
    });
    if (walk.wasInterrupted())
      return failure();
    for (Operation *op : dead)
      op->erase();
    // Scalar constants only the imported bodies read are copied into the
    // join regions; the originals are dead now.
    SmallVector<arith::ConstantOp> constants;
    func.walk([&](arith::ConstantOp c) {
      if (c->use_empty())
        constants.push_back(c);
    });
    for (arith::ConstantOp c : constants)
      c->erase();
    foldReshapePairs();
    eraseDeadOps();
    return success();
  }

private:
  /// A reshape undoing the reshape it reads (a unit dimension added for a
  /// keepdim read and removed again) is its source.
  void foldReshapePairs() {
    SmallVector<ReshapeOp> reshapes;
    func.walk([&](ReshapeOp op) { reshapes.push_back(op); });
    for (ReshapeOp op : reshapes) {
      auto inner = op.getSource().getDefiningOp<ReshapeOp>();
      if (inner && inner.getSource().getType() == op.getType())
        op.getResult().replaceAllUsesWith(inner.getSource());
    }
  }

  /// Top-level ops without side effects nothing uses any more (a fill's
  /// generator that only a folded reshape read, say), users first.
  void eraseDeadOps() {
    SmallVector<Operation *> ops;
    for (Operation &op : func.getBody().front().without_terminator())
      ops.push_back(&op);
    for (Operation *op : llvm::reverse(ops))
      if (op->use_empty() && isMemoryEffectFree(op))
        op->erase();
  }

  func::FuncOp func;
  OpBuilder builder;

  /// Upstream elementwise fusion: an elementwise generic with one user is
  /// folded into that user when the user is elementwise too or reduces a
  /// single input (x * x into a sum of squares), so a chain such as
  /// RMSNorm's `x * rsqrt(mean + eps) * w` imports as one join whose body
  /// ein-fuse-composites can read whole. A producer is never folded into a
  /// contraction: a matmul keeps its plain product body (its kernel is a
  /// library call).
  LogicalResult fuseElementwise() {
    RewritePatternSet patterns(func.getContext());
    linalg::populateElementwiseOpsFusionPatterns(
        patterns, [](OpOperand *operand) {
          Operation *producer = operand->get().getDefiningOp();
          auto consumer = dyn_cast<linalg::GenericOp>(operand->getOwner());
          if (!producer || !producer->hasOneUse() || !consumer)
            return false;
          return consumer.getNumDpsInputs() == 1 ||
                 consumer.getNumParallelLoops() == consumer.getNumLoops();
        });
    // Only the fusion: no folding, so the rest imports as written.
    GreedyRewriteConfig config;
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled)
        .enableFolding(false)
        .enableConstantCSE(false);
    if (failed(applyPatternsGreedily(func, std::move(patterns), config)))
      return func.emitOpError()
             << "cannot be imported: elementwise fusion did not converge";
    // Fusing a producer that reads linalg.index remaps its indices through
    // the consumer's map as affine.apply ops; with projected-permutation
    // maps each is one loop index (or the constant a broadcast reads).
    SmallVector<affine::AffineApplyOp> applies;
    func.walk([&](affine::AffineApplyOp apply) { applies.push_back(apply); });
    for (affine::AffineApplyOp apply : applies) {
      AffineExpr e = apply.getAffineMap().getResult(0);
      builder.setInsertionPoint(apply);
      if (auto dim = dyn_cast<AffineDimExpr>(e)) {
        apply.replaceAllUsesWith(apply.getMapOperands()[dim.getPosition()]);
      } else if (auto c = dyn_cast<AffineConstantExpr>(e)) {
        apply.replaceAllUsesWith(arith::ConstantIndexOp::create(
                                     builder, apply.getLoc(), c.getValue())
                                     .getResult());
      } else {
        continue; // a floordiv or sum: refused below as it stands
      }
      apply.erase();
    }
    return success();
  }

  /// A generic reading a unit dimension of an operand at the constant 0
  /// (torch-mlir's keepdim tensors: `(d0, d1) -> (d0, 0)`) rewritten to read
  /// the operand collapsed without it; a result written so is computed
  /// collapsed and expanded back. Returns the generic unchanged when no map
  /// has a constant.
  FailureOr<linalg::GenericOp> dropUnitReads(linalg::GenericOp op) {
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
          op->emitOpError()
              << "cannot be imported: operand " << operand.getOperandNumber()
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
      result = tensor::ExpandShapeOp::create(builder, loc, original, result,
                                             *groups);
    }
    op.getResult(0).replaceAllUsesWith(result);
    op->erase();
    return reduced;
  }

  /// How two shapes that differ only by unit dimensions regroup: the
  /// dimensions of the higher-rank one gathered onto the lower's.
  static SmallVector<ReassociationIndices>
  unitDimensionGroups(RankedTensorType from, RankedTensorType to) {
    bool expands = to.getRank() > from.getRank();
    std::optional<SmallVector<ReassociationIndices>> groups =
        getReassociationIndicesForReshape(expands ? to : from,
                                          expands ? from : to);
    assert(groups && "shapes differ by more than unit dimensions");
    return *groups;
  }

  /// `value` collapsed to `type`, which lacks some of its unit dimensions.
  Value collapseTo(Location loc, Value value, RankedTensorType type) {
    return tensor::CollapseShapeOp::create(
        builder, loc, type, value,
        unitDimensionGroups(cast<RankedTensorType>(value.getType()), type));
  }

  /// A generic reading an operand at `dK floordiv c` (GQA: query head h
  /// reads KV head h floordiv g) rewritten without it: loop k of extent n
  /// splits into k (n / c values) and a new innermost loop (c values),
  /// dK = dK * c + dNew. The floordiv becomes dK; an operand or the result
  /// indexed by dK itself is expanded there into two dimensions (and the
  /// result collapsed back after), linalg.index k is recomputed. Returns
  /// the generic unchanged when no map has a floordiv.
  FailureOr<linalg::GenericOp> splitFloorDivLoop(linalg::GenericOp op) {
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

  /// Reshapes, static unit-stride slices and concatenations map one to one
  /// onto ein's layout ops.
  LogicalResult importLayoutOps() {
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
        return op->emitOpError()
               << "cannot be imported: ein needs static shapes";
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
        auto full = RankedTensorType::get(slice.getStaticSizes(),
                                          type.getElementType());
        result = SliceOp::create(
            builder, op->getLoc(), full, slice.getSource(),
            builder.getDenseI64ArrayAttr(slice.getStaticOffsets()),
            builder.getDenseI64ArrayAttr(slice.getStaticSizes()), SpecAttr());
        if (full != type)
          result = reshapeBetween(op, result, type);
      } else {
        auto insert = cast<tensor::InsertSliceOp>(op);
        auto full = RankedTensorType::get(insert.getStaticSizes(),
                                          type.getElementType());
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

  /// A tensor.pad no window reads: along each padded dimension, a splat of
  /// the padding value before and after the source, concatenated (a join
  /// with no input yielding the constant, computed where needed, so a cut
  /// of the result reads what it needs of each piece by intersection).
  FailureOr<Value> padOf(tensor::PadOp pad) {
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

  Value reshapeOf(Operation *op, Value source,
                  ArrayRef<ReassociationIndices> groups, Type type = {}) {
    SmallVector<Attribute> lists;
    for (const ReassociationIndices &group : groups)
      lists.push_back(builder.getI64ArrayAttr(group));
    return ReshapeOp::create(builder, op->getLoc(),
                             type ? type : op->getResult(0).getType(), source,
                             builder.getArrayAttr(lists), SpecAttr());
  }

  /// A tensor of `type` holding `value` everywhere: a join-agg with no
  /// inputs whose region yields it (a tensor constant would have to travel
  /// in the bundle; this is computed where it is needed). Null when `value`
  /// is not a float or integer.
  Value splat(Location loc, RankedTensorType type, Attribute value) {
    SmallVector<int64_t> loops;
    for (int64_t i = 0; i < type.getRank(); ++i)
      loops.push_back(i);
    auto join = JoinAggOp::create(
        builder, loc, type, ValueRange{}, builder.getArrayAttr({}), loops,
        AggKind::None, TypeAttr(), SpecAttr(), IntegerAttr());
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

  /// `value` reshaped to `type`, which differs from it only by unit
  /// dimensions.
  Value reshapeBetween(Operation *op, Value value, RankedTensorType type) {
    return reshapeOf(
        op, value,
        unitDimensionGroups(cast<RankedTensorType>(value.getType()), type),
        type);
  }

  /// `dest` with `source` written at `offsets`, from dimension `dim` on:
  /// the part of `dest` before the inserted range along `dim`, the range
  /// itself (filled in recursively along the next dimensions) and the part
  /// after it, concatenated. Dimensions the source spans whole are skipped.
  Value insertInto(Operation *op, Value dest, Value source,
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
        return splat(loc, pieceType,
                     builder.getZeroAttr(type.getElementType()));
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

  /// The loop indices of `map`, a projected permutation, or failure.
  FailureOr<SmallVector<int64_t>> indicesOf(linalg::GenericOp op, AffineMap map,
                                            unsigned operand) {
    if (!map.isProjectedPermutation(/*allowZeroInResults=*/false)) {
      op->emitOpError()
          << "cannot be imported: operand " << operand << " is indexed by "
          << AffineMapAttr::get(map)
          << ", not by a projected permutation of the loops (windowed "
             "reads are imported as 2-D convolutions and poolings only, in "
             "nhwc or nchw layouts)";
      return failure();
    }
    SmallVector<int64_t> indices;
    for (AffineExpr e : map.getResults())
      indices.push_back(cast<AffineDimExpr>(e).getPosition());
    return indices;
  }

  /// An embedding lookup, as front ends write one: a generic over the
  /// result (the indices' dimensions, then a row's) whose body reads its
  /// integer index, casts it, and extracts `table[index, d_r, ...]` from a
  /// tensor outside. Becomes ein.gather; returns whether it matched.
  bool importGather(linalg::GenericOp op) {
    if (op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
        op.getNumReductionLoops() != 0 || !op.hasPureTensorSemantics())
      return false;
    Value indices = op.getDpsInputs()[0];
    auto indexType = dyn_cast<RankedTensorType>(indices.getType());
    auto resultType = dyn_cast<RankedTensorType>(op.getResult(0).getType());
    if (!indexType || !resultType || !indexType.hasStaticShape() ||
        !resultType.hasStaticShape() ||
        !(indexType.getElementType().isSignlessInteger(64) ||
          indexType.getElementType().isSignlessInteger(32)))
      return false;
    int64_t n = resultType.getRank(), r = indexType.getRank();
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    // The indices read along the result's leading dimensions.
    if (r > n || !maps[1].isIdentity() ||
        maps[0] != AffineMap::getMultiDimIdentityMap(n, op.getContext())
                       .getSubMap(llvm::to_vector(llvm::seq<unsigned>(0, r))))
      return false;
    Block &body = op.getRegion().front();
    auto yield = cast<linalg::YieldOp>(body.getTerminator());
    auto extract = yield.getValues().front().getDefiningOp<tensor::ExtractOp>();
    if (!extract || extract->getBlock() != &body)
      return false;
    Value table = extract.getTensor();
    auto tableType = dyn_cast<RankedTensorType>(table.getType());
    if (!tableType || !tableType.hasStaticShape() ||
        table.getParentRegion() == &op.getRegion() ||
        tableType.getRank() != 1 + n - r ||
        tableType.getShape().drop_front() !=
            resultType.getShape().drop_front(r) ||
        tableType.getElementType() != resultType.getElementType())
      return false;
    auto cast = extract.getIndices()[0].getDefiningOp<arith::IndexCastOp>();
    if (!cast || cast.getIn() != body.getArgument(0))
      return false;
    for (auto [k, index] : llvm::enumerate(extract.getIndices().drop_front())) {
      auto loop = index.getDefiningOp<linalg::IndexOp>();
      if (!loop || int64_t(loop.getDim()) != r + int64_t(k))
        return false;
    }
    // Nothing else in the body.
    for (Operation &inner : body.without_terminator())
      if (!isa<arith::IndexCastOp, linalg::IndexOp, tensor::ExtractOp>(inner))
        return false;
    builder.setInsertionPoint(op);
    auto gather = GatherOp::create(builder, op.getLoc(), resultType, table,
                                   indices, builder.getI64IntegerAttr(0),
                                   SpecAttr(), IntegerAttr());
    op.getResult(0).replaceAllUsesWith(gather.getResult());
    op->erase();
    return true;
  }

  /// A generic with two results over one input, the running maximum and
  /// its index along one reduction loop, as torch-mlir writes argmax (and
  /// argmin, and max/min with indices): the body yields `maximumf(x, m)`
  /// (or a select of x on the compare) and `select(cmpf ogt x m, index,
  /// i)`, from -inf and 0. Becomes ein.arg_reduce for the indices and a
  /// max join-agg for the values, each only where read. Does nothing to
  /// other generics; fails, saying why, on a two-result generic it cannot
  /// take.
  LogicalResult importArgReduce(linalg::GenericOp op) {
    if (op.getNumDpsInits() < 2 || splitResults(op))
      return success();
    if (op.getNumDpsInits() != 2)
      return op->emitOpError()
             << "cannot be imported: its " << op.getNumDpsInits()
             << " results depend on each other's accumulators; ein imports "
                "results computed apart (split into one generic each) and "
                "argmax/argmin (a running maximum and its index)";
    auto refuse = [&](const Twine &why) {
      return op->emitOpError()
             << "cannot be imported: a generic with two results is imported "
                "as an argmax or argmin (a running maximum and its index), "
                "but "
             << why;
    };
    if (op.getNumDpsInputs() != 1 || !op.hasPureTensorSemantics() ||
        op.getNumReductionLoops() != 1)
      return refuse("it does not read one tensor over one reduction loop");
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    int64_t rank = op.getNumLoops();
    unsigned dim = 0;
    for (auto [l, it] : llvm::enumerate(op.getIteratorTypesArray()))
      if (it == utils::IteratorType::reduction)
        dim = l;
    SmallVector<AffineExpr> kept;
    for (int64_t d = 0; d < rank; ++d)
      if (d != dim)
        kept.push_back(getAffineDimExpr(d, op.getContext()));
    AffineMap lead = AffineMap::get(rank, 0, kept, op.getContext());
    if (!maps[0].isIdentity() || maps[1] != lead || maps[2] != lead)
      return refuse("its input is not read whole and its results along "
                    "the other loops");
    Value x = op.getDpsInputs()[0];
    auto xType = cast<RankedTensorType>(x.getType());
    auto valueType = cast<RankedTensorType>(op.getResult(0).getType());
    auto indexType = cast<RankedTensorType>(op.getResult(1).getType());
    if (!xType.hasStaticShape() || !isa<FloatType>(xType.getElementType()) ||
        valueType.getElementType() != xType.getElementType() ||
        !(indexType.getElementType().isSignlessInteger(64) ||
          indexType.getElementType().isSignlessInteger(32)))
      return refuse("it does not reduce a static float tensor to its own "
                    "type and i64 or i32 indices");
    Block &body = op.getRegion().front();
    Value in = body.getArgument(0), running = body.getArgument(1),
          index = body.getArgument(2);
    auto yield = cast<linalg::YieldOp>(body.getTerminator());
    // The index: select(cmpf ogt|olt (x, m), index_cast(linalg.index dim), i).
    auto select = yield.getValues()[1].getDefiningOp<arith::SelectOp>();
    auto cmp = select ? select.getCondition().getDefiningOp<arith::CmpFOp>()
                      : arith::CmpFOp();
    auto cast = select
                    ? select.getTrueValue().getDefiningOp<arith::IndexCastOp>()
                    : arith::IndexCastOp();
    auto loop = cast ? cast.getIn().getDefiningOp<linalg::IndexOp>()
                     : linalg::IndexOp();
    bool max = cmp && cmp.getPredicate() == arith::CmpFPredicate::OGT;
    bool min = cmp && cmp.getPredicate() == arith::CmpFPredicate::OLT;
    if (!select || select.getFalseValue() != index || !(max || min) ||
        cmp.getLhs() != in || cmp.getRhs() != running || !loop ||
        loop.getDim() != dim)
      return refuse("its index is not `select(cmpf ogt (or olt) x, max), "
                    "index d" +
                    Twine(dim) + ", index)`");
    // The value: the running maximum, by maximumf or by the same select.
    Operation *value = yield.getValues()[0].getDefiningOp();
    bool valueOk = false;
    if (auto s = dyn_cast_or_null<arith::SelectOp>(value))
      valueOk = s.getCondition() == cmp.getResult() && s.getTrueValue() == in &&
                s.getFalseValue() == running;
    else if (value && isa<arith::MaximumFOp, arith::MaxNumFOp>(value))
      valueOk = max;
    else if (value && isa<arith::MinimumFOp, arith::MinNumFOp>(value))
      valueOk = min;
    if (valueOk && !isa<arith::SelectOp>(value))
      valueOk = llvm::is_contained(value->getOperands(), in) &&
                llvm::is_contained(value->getOperands(), running);
    if (!valueOk)
      return refuse(Twine("its value is not the running ") +
                    (max ? "maximum" : "minimum"));
    // From -inf (+inf) and index 0.
    auto floatStart =
        dyn_cast_or_null<FloatAttr>(fillValue(op.getDpsInits()[0]));
    auto indexStart =
        dyn_cast_or_null<IntegerAttr>(fillValue(op.getDpsInits()[1]));
    if (!floatStart || !indexStart || !indexStart.getValue().isZero() ||
        !floatStart.getValue().isInfinity() ||
        floatStart.getValue().isNegative() != max)
      return refuse(Twine("it does not start from ") + (max ? "-inf" : "+inf") +
                    " and index 0");
    builder.setInsertionPoint(op);
    Location loc = op.getLoc();
    AggKind kind = max ? AggKind::Max : AggKind::Min;
    if (!op.getResult(1).use_empty())
      op.getResult(1).replaceAllUsesWith(
          ArgReduceOp::create(builder, loc, indexType, kind, x, uint64_t(dim),
                              SpecAttr(), IntegerAttr()));
    if (!op.getResult(0).use_empty()) {
      SmallVector<int64_t> all, out;
      for (int64_t d = 0; d < rank; ++d) {
        all.push_back(d);
        if (d != dim)
          out.push_back(d);
      }
      auto join = JoinAggOp::create(
          builder, loc, valueType, ValueRange{x},
          builder.getArrayAttr({builder.getDenseI64ArrayAttr(all)}), out, kind,
          TypeAttr(), SpecAttr(), IntegerAttr());
      Block *block = new Block();
      join.getJoin().push_back(block);
      OpBuilder inner = OpBuilder::atBlockEnd(block);
      Value v = block->addArgument(xType.getElementType(), loc);
      if (v.getType() != join.getAccType())
        v = arith::ExtFOp::create(inner, loc, join.getAccType(), v);
      YieldOp::create(inner, loc, v);
      op.getResult(0).replaceAllUsesWith(join.getResult());
    }
    op->erase();
    return success();
  }

  /// A generic whose results are computed apart (each yield reads the
  /// inputs, the loop indices and its own accumulator only: a sum and a sum
  /// of squares together) becomes one generic per result, which the rest
  /// of the import takes as any other. Returns whether it split `op`.
  bool splitResults(linalg::GenericOp op) {
    Block &body = op.getRegion().front();
    unsigned inputs = op.getNumDpsInputs();
    auto yield = cast<linalg::YieldOp>(body.getTerminator());
    SmallVector<SetVector<Operation *>> slices;
    for (auto [r, yielded] : llvm::enumerate(yield.getValues())) {
      SetVector<Operation *> slice;
      SmallVector<Value> work = {yielded};
      while (!work.empty()) {
        Value v = work.pop_back_val();
        if (auto arg = dyn_cast<BlockArgument>(v)) {
          if (arg.getOwner() == &body && arg.getArgNumber() >= inputs &&
              arg.getArgNumber() != inputs + r)
            return false; // reads another result's accumulator
          continue;
        }
        Operation *def = v.getDefiningOp();
        if (!def || def->getBlock() != &body || !slice.insert(def))
          continue;
        llvm::append_range(work, def->getOperands());
      }
      slices.push_back(std::move(slice));
    }
    builder.setInsertionPoint(op);
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    SmallVector<AffineMap> inputMaps(maps.begin(), maps.begin() + inputs);
    for (auto [r, result] : llvm::enumerate(op.getResults())) {
      SmallVector<AffineMap> own = inputMaps;
      own.push_back(maps[inputs + r]);
      auto split = linalg::GenericOp::create(
          builder, op.getLoc(), TypeRange{result.getType()}, op.getDpsInputs(),
          ValueRange{op.getDpsInits()[r]}, own, op.getIteratorTypesArray(),
          [&](OpBuilder &nb, Location l, ValueRange args) {
            IRMapping map;
            for (unsigned i = 0; i < inputs; ++i)
              map.map(body.getArgument(i), args[i]);
            map.map(body.getArgument(inputs + r), args[inputs]);
            // In body order, so operands come before their users.
            for (Operation &inner : body.without_terminator())
              if (slices[r].contains(&inner))
                nb.clone(inner, map);
            linalg::YieldOp::create(nb, l,
                                    map.lookupOrDefault(yield.getValues()[r]));
          });
      result.replaceAllUsesWith(split.getResult(0));
    }
    op->erase();
    return true;
  }

  /// One term of an input's index: `coefficient * d_loop`.
  struct Term {
    int64_t loop, coefficient;
  };

  /// The terms of `e` if it is a sum of loops times constants (`d1 * 2 +
  /// d4`), each loop once; nothing for any other expression (a constant
  /// offset included).
  static std::optional<SmallVector<Term>> linearTerms(AffineExpr e) {
    SmallVector<Term> terms;
    std::function<bool(AffineExpr)> walk = [&](AffineExpr x) {
      if (auto dim = dyn_cast<AffineDimExpr>(x)) {
        terms.push_back({dim.getPosition(), 1});
        return true;
      }
      auto bin = dyn_cast<AffineBinaryOpExpr>(x);
      if (!bin)
        return false;
      if (bin.getKind() == AffineExprKind::Add)
        return walk(bin.getLHS()) && walk(bin.getRHS());
      if (bin.getKind() != AffineExprKind::Mul)
        return false;
      auto dim = dyn_cast<AffineDimExpr>(bin.getLHS());
      auto c = dyn_cast<AffineConstantExpr>(bin.getRHS());
      if (!dim || !c || c.getValue() < 1)
        return false;
      terms.push_back({dim.getPosition(), c.getValue()});
      return true;
    };
    if (!walk(e))
      return std::nullopt;
    return terms;
  }

  /// A convolution or pooling, as front ends write them (linalg's
  /// conv_2d_nhwc_hwcf, conv_2d_nchw_fchw, pooling_nhwc/nchw_max/sum, or
  /// generics of their form): an input read at `oh * stride + kh *
  /// dilation` in its rows and columns. A tensor.pad before it becomes its
  /// padding. Becomes ein.conv or ein.pool; returns false when the op reads
  /// no input through a window, and fails, saying why, when it does but is
  /// not one of those forms.
  FailureOr<bool> importWindow(linalg::GenericOp op) {
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    if (op.getNumDpsInputs() < 1 || maps.empty() ||
        maps[0].getNumResults() != 4)
      return false;
    // Input 0's rows and columns: a loop of the result plus a window loop.
    SmallVector<int64_t> windowed;
    for (auto [d, e] : llvm::enumerate(maps[0].getResults()))
      if (auto terms = linearTerms(e); terms && terms->size() == 2)
        windowed.push_back(d);
    if (windowed.empty())
      return false;
    auto refuse = [&](const Twine &why) -> FailureOr<bool> {
      return op->emitOpError()
             << "cannot be imported: it reads input 0 through a window (a "
                "convolution or pooling), but "
             << why
             << "; ein imports 2-D convolutions and max/sum pooling in nhwc "
                "(filter hwcf) or nchw (filter fchw) layouts";
    };
    if (op.getNumDpsInits() != 1 || !op.hasPureTensorSemantics() ||
        op.getNumDpsInputs() != 2)
      return refuse("it does not have two inputs and one result on tensors");
    for (Value operand : op->getOperands())
      if (!cast<RankedTensorType>(operand.getType()).hasStaticShape())
        return refuse("its shapes are not static");
    bool last;
    if (windowed == SmallVector<int64_t>{1, 2})
      last = true;
    else if (windowed == SmallVector<int64_t>{2, 3})
      last = false;
    else
      return refuse("its windowed dimensions are not the rows and columns of "
                    "an nhwc or nchw tensor");
    AffineMap outMap = maps.back();
    if (!outMap.isProjectedPermutation() || outMap.getNumResults() != 4)
      return refuse("its result is not indexed by four loops");
    auto outLoop = [&](int64_t d) {
      return cast<AffineDimExpr>(outMap.getResult(d)).getPosition();
    };
    SmallVector<int64_t> strides, dilations, windowLoops;
    for (int64_t d : windowed) {
      SmallVector<Term> terms = *linearTerms(maps[0].getResult(d));
      if (terms[0].loop != outLoop(d))
        std::swap(terms[0], terms[1]);
      if (terms[0].loop != outLoop(d) ||
          llvm::is_contained(outMap.getResults(),
                             getAffineDimExpr(terms[1].loop, op.getContext())))
        return refuse("dimension " + Twine(d) +
                      " of input 0 is not read at an output position plus a "
                      "window position");
      strides.push_back(terms[0].coefficient);
      dilations.push_back(terms[1].coefficient);
      windowLoops.push_back(terms[1].loop);
    }
    int64_t chan = last ? 3 : 1;
    auto plain = [&](AffineMap map, int64_t d) -> std::optional<int64_t> {
      if (auto dim = dyn_cast<AffineDimExpr>(map.getResult(d)))
        return dim.getPosition();
      return std::nullopt;
    };
    std::optional<int64_t> batch = plain(maps[0], 0),
                           channel = plain(maps[0], chan);
    if (!batch || *batch != outLoop(0) || !channel)
      return refuse("its batch and channel dimensions are not read plainly "
                    "in the layout of its result");
    bool pooling = *channel == outLoop(chan);
    AffineMap second = maps[1];
    auto loopExpr = [&](int64_t l) {
      return getAffineDimExpr(l, op.getContext());
    };
    if (pooling) {
      if (second.getResults() != ArrayRef<AffineExpr>{loopExpr(windowLoops[0]),
                                                      loopExpr(windowLoops[1])})
        return refuse("its second input is neither a pooling window "
                      "(indexed by the window's loops alone) nor a filter "
                      "(grouped and depthwise convolutions are not imported "
                      "yet)");
    } else {
      SmallVector<AffineExpr> filter =
          last ? SmallVector<AffineExpr>{loopExpr(windowLoops[0]),
                                         loopExpr(windowLoops[1]),
                                         loopExpr(*channel),
                                         loopExpr(outLoop(chan))}
               : SmallVector<AffineExpr>{
                     loopExpr(outLoop(chan)), loopExpr(*channel),
                     loopExpr(windowLoops[0]), loopExpr(windowLoops[1])};
      if (second.getResults() != ArrayRef<AffineExpr>(filter))
        return refuse(Twine("its filter is not read as ") +
                      (last ? "hwcf" : "fchw") +
                      " (grouped and depthwise convolutions are not "
                      "imported yet)");
    }
    // The body: a conv sums x * w, a pooling combines x by max or add.
    Block &body = op.getRegion().front();
    BlockArgument accumulator = body.getArguments().back();
    Operation *combine = body.getTerminator()->getOperand(0).getDefiningOp();
    std::optional<AggKind> kind = combine && combine->getNumOperands() == 2 &&
                                          isa<FloatType>(accumulator.getType())
                                      ? aggKindOf(combine)
                                      : std::nullopt;
    if (!kind || (combine->getOperand(0) != accumulator &&
                  combine->getOperand(1) != accumulator))
      return refuse("its body does not combine the accumulator with a value");
    Value joined = combine->getOperand(0) == accumulator
                       ? combine->getOperand(1)
                       : combine->getOperand(0);
    auto origin = [&](Value v) {
      while (auto ext = v.getDefiningOp<arith::ExtFOp>())
        v = ext.getIn();
      return v;
    };
    joined = origin(joined);
    if (pooling) {
      if ((*kind != AggKind::Max && *kind != AggKind::Add) ||
          joined != body.getArgument(0))
        return refuse("its body is not a max or a sum of the input");
    } else {
      auto mul = joined.getDefiningOp<arith::MulFOp>();
      if (*kind != AggKind::Add || !mul ||
          !((origin(mul.getLhs()) == body.getArgument(0) &&
             origin(mul.getRhs()) == body.getArgument(1)) ||
            (origin(mul.getLhs()) == body.getArgument(1) &&
             origin(mul.getRhs()) == body.getArgument(0))))
        return refuse("its body is not a sum of input times filter");
    }
    auto resultType = cast<RankedTensorType>(op.getResult(0).getType());
    Value x = op.getDpsInputs()[0];
    Type element = cast<RankedTensorType>(x.getType()).getElementType();
    if (resultType.getElementType() != element ||
        (!pooling && cast<RankedTensorType>(op.getDpsInputs()[1].getType())
                             .getElementType() != element))
      return refuse("its input, filter and result element types differ");
    // A tensor.pad of the rows and columns only, with the value the window
    // ignores, is the op's padding.
    SmallVector<int64_t> padLow(2, 0), padHigh(2, 0);
    if (auto pad = x.getDefiningOp<tensor::PadOp>()) {
      Value padValue = pad.getConstantPaddingValue();
      FloatAttr value;
      if (padValue)
        matchPattern(padValue, m_Constant(&value));
      bool ignored = value && (*kind == AggKind::Add
                                   ? value.getValue().isZero()
                                   : value.getValue().isNegative() &&
                                         (value.getValue().isInfinity() ||
                                          value.getValue().isLargest()));
      ArrayRef<int64_t> low = pad.getStaticLow(), high = pad.getStaticHigh();
      bool spatialOnly = !ShapedType::isDynamicShape(low) &&
                         !ShapedType::isDynamicShape(high) && low[0] == 0 &&
                         high[0] == 0 && low[chan] == 0 && high[chan] == 0;
      // Any other pad is imported on its own (concatenated splats) and
      // the window reads the padded tensor.
      if (ignored && spatialOnly) {
        for (auto [i, d] : llvm::enumerate(windowed)) {
          padLow[i] = low[d];
          padHigh[i] = high[d];
        }
        x = pad.getSource();
        padOps.insert(pad);
      }
    }
    builder.setInsertionPoint(op);
    Location loc = op.getLoc();
    // linalg's result may stop before the padded input ends: padding it
    // never reads is dropped, and rows or columns it never reads sliced
    // off.
    auto inType = cast<RankedTensorType>(x.getType());
    SmallVector<int64_t> keep(inType.getShape());
    for (auto [i, d] : llvm::enumerate(windowed)) {
      int64_t reach = (cast<RankedTensorType>(op.getDpsInputs()[1].getType())
                           .getShape()[pooling ? i : (last ? i : 2 + i)] -
                       1) *
                          dilations[i] +
                      1;
      int64_t needed = (resultType.getShape()[d] - 1) * strides[i] + reach;
      int64_t fromInput = needed - padLow[i];
      if (fromInput < 1)
        return refuse("its result reads only the padding of dimension " +
                      Twine(d));
      padHigh[i] =
          std::min(padHigh[i], std::max<int64_t>(0, fromInput - keep[d]));
      int64_t reads =
          (keep[d] + padLow[i] + padHigh[i] - reach) / strides[i] + 1;
      if (reads != resultType.getShape()[d])
        keep[d] = std::min(keep[d], fromInput);
    }
    if (keep != SmallVector<int64_t>(inType.getShape()))
      x = SliceOp::create(
          builder, loc, RankedTensorType::get(keep, element), x,
          builder.getDenseI64ArrayAttr(SmallVector<int64_t>(4, 0)),
          builder.getDenseI64ArrayAttr(keep), SpecAttr());
    StringRef layout = last ? "nhwc" : "nchw";
    Value result;
    if (pooling) {
      ArrayRef<int64_t> window =
          cast<RankedTensorType>(op.getDpsInputs()[1].getType()).getShape();
      result = PoolOp::create(builder, loc, resultType, *kind, x, layout,
                              window, strides, dilations, padLow, padHigh,
                              SpecAttr(), IntegerAttr());
    } else {
      result = ConvOp::create(builder, loc, resultType, x, op.getDpsInputs()[1],
                              layout, strides, dilations, padLow, padHigh,
                              SpecAttr(), IntegerAttr());
    }
    if (failed(mlir::verify(result.getDefiningOp())))
      return failure();
    // A sum or max into a tensor other than its identity (a bias broadcast
    // into the result) is combined afterwards.
    Value init = op.getDpsInits()[0];
    Attribute initValue = fillValue(init);
    if (!init.getDefiningOp<tensor::EmptyOp>() &&
        !(initValue && isIdentity(initValue, combine)))
      result = combineWithInit(op, result, init, combine);
    op.getResult(0).replaceAllUsesWith(result);
    op->erase();
    return true;
  }

  /// Pads folded into a window's padding, erased once nothing reads them.
  llvm::SmallSetVector<Operation *, 4> padOps;

  LogicalResult importGeneric(linalg::GenericOp op) {
    if (op.getNumDpsInits() != 1 || !op.hasPureTensorSemantics())
      return op->emitOpError()
             << "cannot be imported: ein-import takes a generic on tensors "
                "with one result";
    auto resultType = cast<RankedTensorType>(op.getResult(0).getType());
    for (Value operand : op->getOperands())
      if (!cast<RankedTensorType>(operand.getType()).hasStaticShape())
        return op->emitOpError()
               << "cannot be imported: ein needs static shapes, got "
               << operand.getType();
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    int64_t loops = op.getNumLoops();
    SmallVector<SmallVector<int64_t>> inputIndices;
    for (unsigned i = 0; i < op.getNumDpsInputs(); ++i) {
      FailureOr<SmallVector<int64_t>> indices = indicesOf(op, maps[i], i);
      if (failed(indices))
        return failure();
      inputIndices.push_back(*indices);
    }
    FailureOr<SmallVector<int64_t>> outputIndices =
        indicesOf(op, maps.back(), op.getNumDpsInputs());
    if (failed(outputIndices))
      return failure();
    bool reduces = false;
    for (auto [loop, type] : llvm::enumerate(op.getIteratorTypesArray())) {
      bool inOutput = llvm::is_contained(*outputIndices, int64_t(loop));
      if ((type == utils::IteratorType::reduction) == inOutput)
        return op->emitOpError()
               << "cannot be imported: loop d" << loop << " is "
               << (inOutput ? "a reduction that indexes the result"
                            : "parallel but does not index the result");
      reduces = reduces || !inOutput;
    }
    Block &body = op.getRegion().front();
    BlockArgument accumulator = body.getArguments().back();
    Value yielded = body.getTerminator()->getOperand(0);

    // The join: what the body computes from the inputs. With reductions,
    // the yield must combine the accumulator with it.
    AggKind kind = AggKind::None;
    Value joined = yielded;
    Operation *combine = nullptr;
    if (reduces) {
      combine = yielded.getDefiningOp();
      std::optional<AggKind> k = combine && combine->getNumOperands() == 2
                                     ? aggKindOf(combine)
                                     : std::nullopt;
      if (!k || (combine->getOperand(0) != accumulator &&
                 combine->getOperand(1) != accumulator))
        return op->emitOpError()
               << "cannot be imported: its body does not yield the "
                  "accumulator combined (add, mul, max or min) with a value "
                  "of the inputs, so it does not split into a join and an "
                  "aggregation";
      kind = *k;
      joined = combine->getOperand(0) == accumulator ? combine->getOperand(1)
                                                     : combine->getOperand(0);
    }
    // The initial value: an elementwise body that reads it joins it as one
    // more input; a reduction's is dropped if it is the combine's identity
    // (or never written), else combined afterwards.
    Value init = op.getDpsInits()[0];
    bool joinReadsInit = kind == AggKind::None && !accumulator.use_empty();
    if (kind != AggKind::None && readsAccumulator(joined, accumulator))
      return op->emitOpError()
             << "cannot be imported: the value it combines into the "
                "accumulator also reads the accumulator";
    Attribute initValue = fillValue(init);
    bool initIsIdentity =
        kind != AggKind::None && initValue && isIdentity(initValue, combine);
    bool initUnwritten = init.getDefiningOp<tensor::EmptyOp>() != nullptr;

    // An input filled with a constant is that constant in the body (a scale
    // written as a product with a filled tensor), unless a loop is indexed
    // through such inputs alone.
    SmallVector<Attribute> folded;
    for (Value input : op.getDpsInputs())
      folded.push_back(fillValue(input));
    auto loopsUsed = [&](bool fold) {
      for (int64_t loop = 0; loop < loops; ++loop) {
        bool used = llvm::is_contained(*outputIndices, loop);
        for (auto [i, list] : llvm::enumerate(inputIndices))
          used =
              used || ((!fold || !folded[i]) && llvm::is_contained(list, loop));
        if (!used)
          return false;
      }
      return true;
    };
    if (!loopsUsed(/*fold=*/true))
      folded.assign(folded.size(), Attribute());
    SmallVector<Value> inputs;
    SmallVector<SmallVector<int64_t>> indices;
    for (auto [i, input] : llvm::enumerate(op.getDpsInputs()))
      if (!folded[i]) {
        inputs.push_back(input);
        indices.push_back(inputIndices[i]);
      }
    if (joinReadsInit) {
      inputs.push_back(init);
      indices.push_back(*outputIndices);
    }
    // Loops no operand indexes cannot be expressed: ein counts loops from
    // the indices its operands use.
    for (int64_t loop = 0; loop < loops; ++loop) {
      bool used = llvm::is_contained(*outputIndices, loop);
      for (const SmallVector<int64_t> &list : indices)
        used = used || llvm::is_contained(list, loop);
      if (!used)
        return op->emitOpError() << "cannot be imported: no operand is "
                                    "indexed by loop d"
                                 << loop;
    }

    builder.setInsertionPoint(op);
    Location loc = op.getLoc();
    SmallVector<Attribute> lists;
    for (const SmallVector<int64_t> &list : indices)
      lists.push_back(builder.getDenseI64ArrayAttr(list));
    auto join = JoinAggOp::create(builder, loc, resultType, inputs,
                                  builder.getArrayAttr(lists), *outputIndices,
                                  kind, TypeAttr(), SpecAttr(), IntegerAttr());
    if (failed(buildJoin(op, join, joined, joinReadsInit, folded)))
      return failure();
    Value result = join.getResult();
    if (kind != AggKind::None && !initIsIdentity && !initUnwritten)
      result = combineWithInit(op, result, init, combine);
    op.getResult(0).replaceAllUsesWith(result);
    op->erase();
    return success();
  }

  /// Whether `value`, computed in the body, reads `accumulator`.
  static bool readsAccumulator(Value value, BlockArgument accumulator) {
    if (value == accumulator)
      return true;
    Operation *def = value.getDefiningOp();
    if (!def || def->getBlock() != accumulator.getOwner())
      return false;
    return llvm::any_of(def->getOperands(), [&](Value v) {
      return readsAccumulator(v, accumulator);
    });
  }

  /// Fills the join region: the body's ops that `joined` depends on, with
  /// linalg.index as ein.index, and a yield of `joined` in the accumulator
  /// type (extended where the body computes in a narrower float).
  LogicalResult buildJoin(linalg::GenericOp op, JoinAggOp join, Value joined,
                          bool joinReadsInit, ArrayRef<Attribute> folded) {
    Block &body = op.getRegion().front();
    Block *block = new Block();
    join.getJoin().push_back(block);
    IRMapping map;
    OpBuilder inner = OpBuilder::atBlockEnd(block);
    for (unsigned i = 0; i < op.getNumDpsInputs(); ++i)
      map.map(body.getArgument(i),
              folded[i] ? Value(arith::ConstantOp::create(
                              inner, op.getLoc(), cast<TypedAttr>(folded[i])))
                        : Value(block->addArgument(
                              body.getArgument(i).getType(), op.getLoc())));
    if (joinReadsInit)
      map.map(body.getArguments().back(),
              block->addArgument(body.getArguments().back().getType(),
                                 op.getLoc()));
    // The join region is isolated: a constant from outside the body comes
    // in as a copy; any other outside value is refused.
    auto fromOutside = [&](Value outside, StringRef use) -> FailureOr<Value> {
      Operation *def = outside.getDefiningOp();
      if (!def || !matchPattern(outside, m_Constant()))
        return op->emitOpError()
               << "cannot be imported: its body " << use
               << " a value from outside that is not a constant";
      return inner.clone(*def)->getResult(0);
    };
    for (Operation &bodyOp : body.without_terminator()) {
      if (auto index = dyn_cast<linalg::IndexOp>(bodyOp)) {
        map.map(index.getResult(),
                IndexOp::create(inner, index.getLoc(), inner.getIndexType(),
                                inner.getI64IntegerAttr(index.getDim())));
        continue;
      }
      if (!isPure(&bodyOp) || bodyOp.getNumRegions())
        return bodyOp.emitOpError()
               << "cannot be imported into a join region: only pure scalar "
                  "ops are";
      for (Value operand : bodyOp.getOperands()) {
        if (map.contains(operand) ||
            operand.getParentRegion() == &op.getRegion())
          continue;
        FailureOr<Value> copy = fromOutside(operand, "reads");
        if (failed(copy))
          return failure();
        map.map(operand, *copy);
      }
      inner.clone(bodyOp, map);
    }
    Value value = map.lookupOrDefault(joined);
    if (value == joined && joined.getParentBlock() != &body) {
      FailureOr<Value> copy = fromOutside(joined, "yields");
      if (failed(copy))
        return failure();
      value = *copy;
    }
    Type acc = join.getAccType();
    if (value.getType() != acc) {
      if (!isa<FloatType>(value.getType()) || !isa<FloatType>(acc))
        return op->emitOpError()
               << "cannot be imported: its body yields " << value.getType()
               << " but ein accumulates in " << acc;
      value = arith::ExtFOp::create(inner, op.getLoc(), acc, value);
    }
    YieldOp::create(inner, op.getLoc(), value);
    // Ops the yield does not need are dead: drop them, users first.
    SmallVector<Operation *> ops;
    for (Operation &o : block->without_terminator())
      ops.push_back(&o);
    for (Operation *o : llvm::reverse(ops))
      if (o->use_empty())
        o->erase();
    return success();
  }

  /// `result` combined elementwise with the reduction's initial value by
  /// the reduction's own `combine` (maxnumf stays maxnumf), in the
  /// accumulator type.
  Value combineWithInit(linalg::GenericOp op, Value result, Value init,
                        Operation *combine) {
    auto type = cast<RankedTensorType>(result.getType());
    SmallVector<int64_t> loops;
    for (int64_t i = 0, e = type.getRank(); i < e; ++i)
      loops.push_back(i);
    Location loc = op.getLoc();
    auto join = JoinAggOp::create(
        builder, loc, type, ValueRange{result, init},
        builder.getArrayAttr({builder.getDenseI64ArrayAttr(loops),
                              builder.getDenseI64ArrayAttr(loops)}),
        loops, AggKind::None, TypeAttr(), SpecAttr(), IntegerAttr());
    Block *block = new Block();
    join.getJoin().push_back(block);
    Type element = type.getElementType();
    Value a = block->addArgument(element, loc);
    Value b = block->addArgument(element, loc);
    OpBuilder inner = OpBuilder::atBlockEnd(block);
    Type acc = join.getAccType();
    if (element != acc) {
      a = arith::ExtFOp::create(inner, loc, acc, a);
      b = arith::ExtFOp::create(inner, loc, acc, b);
    }
    OperationState state(loc, combine->getName());
    state.addOperands({a, b});
    state.addTypes(acc);
    state.addAttributes(combine->getAttrs());
    YieldOp::create(inner, loc, inner.create(state)->getResult(0));
    return join.getResult();
  }
};

struct EinImport : mlir::ein::impl::EinImportBase<EinImport> {
  using Base::Base;

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      if (failed(Importer(func).run()))
        return signalPassFailure();
    }
  }
};

} // namespace
