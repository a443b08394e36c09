//===- Windows.cpp - ein-import: convolutions and poolings ----------------===//
//
// A generic reading an input through a window (`oh * stride + kh *
// dilation`), as linalg's 2-D convolutions and poolings in nhwc or nchw
// layouts are (grouped and depthwise convolutions too), imported as
// ein.conv or ein.pool, a tensor.pad before it folded into its padding.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/Verifier.h"

#include <functional>

namespace mlir::ein::import_detail {

namespace {

/// One term of an input's index: `coefficient * d_loop`.
struct Term {
  int64_t loop, coefficient;
};

/// The terms of `e` if it is a sum of loops times constants (`d1 * 2 +
/// d4`), each loop once; nothing for any other expression (a constant
/// offset included).
std::optional<SmallVector<Term>> linearTerms(AffineExpr e) {
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

} // namespace

// Front ends expand a tensor into groups just for the window; a reshape
// keeps the row-major order, so any one from `type` undoes it.
Value Importer::regrouped(Location loc, Value value,
                          ArrayRef<ReassociationIndices> groups,
                          RankedTensorType type) {
  if (value.getType() == type)
    return value;
  Operation *def = value.getDefiningOp();
  if (isa_and_nonnull<tensor::ExpandShapeOp, tensor::CollapseShapeOp,
                      ReshapeOp>(def) &&
      def->getOperand(0).getType() == type) {
    foldedOps.insert(def);
    return def->getOperand(0);
  }
  SmallVector<Attribute> lists;
  for (const ReassociationIndices &group : groups)
    lists.push_back(builder.getI64ArrayAttr(group));
  return ReshapeOp::create(builder, loc, type, value,
                           builder.getArrayAttr(lists), SpecAttr());
}

FailureOr<bool> Importer::importWindow(linalg::GenericOp op) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (op.getNumDpsInputs() < 1 || maps.empty())
    return false;
  int64_t rank = maps[0].getNumResults();
  if (rank != 4 && rank != 5)
    return false;
  // Input 0's rows and columns: a loop of the result plus a window loop.
  SmallVector<int64_t> windowed;
  for (auto [d, e] : llvm::enumerate(maps[0].getResults()))
    if (auto terms = linearTerms(e); terms && terms->size() == 2)
      windowed.push_back(d);
  // A 5-D input is a grouped 2-D convolution's; one with three windowed
  // dimensions (a 3-D convolution) is refused as a generic.
  if (windowed.empty() || (rank == 5 && windowed.size() != 2))
    return false;
  auto refuse = [&](const Twine &why) -> FailureOr<bool> {
    return op->emitOpError()
           << "cannot be imported: it reads input 0 through a window (a "
              "convolution or pooling), but "
           << why
           << "; ein imports 2-D convolutions and max/sum pooling in nhwc "
              "(filter hwcf) or nchw (filter fchw) layouts, grouped "
              "convolutions in ngchw (filter gfchw) and depthwise ones in "
              "nchw (filter chw) or nhwc (filter hwc or hwcm)";
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
  else if (windowed == SmallVector<int64_t>{rank - 2, rank - 1})
    last = false;
  else
    return refuse("its windowed dimensions are not the rows and columns of "
                  "an nhwc or nchw tensor");
  AffineMap outMap = maps.back();
  int64_t outRank = outMap.getNumResults();
  if (!outMap.isProjectedPermutation() || (outRank != 4 && outRank != 5))
    return refuse("its result is not indexed by four or five loops");
  auto outLoop = [&](int64_t d) {
    return cast<AffineDimExpr>(outMap.getResult(d)).getPosition();
  };
  SmallVector<int64_t> outSpatial =
      last ? SmallVector<int64_t>{1, 2}
           : SmallVector<int64_t>{outRank - 2, outRank - 1};
  SmallVector<int64_t> strides, dilations, windowLoops;
  for (auto [i, d] : llvm::enumerate(windowed)) {
    SmallVector<Term> terms = *linearTerms(maps[0].getResult(d));
    int64_t out = outLoop(outSpatial[i]);
    if (terms[0].loop != out)
      std::swap(terms[0], terms[1]);
    if (terms[0].loop != out ||
        llvm::is_contained(outMap.getResults(),
                           getAffineDimExpr(terms[1].loop, op.getContext())))
      return refuse("dimension " + Twine(d) +
                    " of input 0 is not read at an output position plus a "
                    "window position");
    strides.push_back(terms[0].coefficient);
    dilations.push_back(terms[1].coefficient);
    windowLoops.push_back(terms[1].loop);
  }
  // The batch leads; the other dimensions are channels (the group, then
  // the channel in it, for a grouped input or a depthwise result with a
  // channel multiplier).
  SmallVector<int64_t> inChannels, outChannels;
  bool plainly = true;
  for (int64_t d = 1; d < rank; ++d) {
    if (llvm::is_contained(windowed, d))
      continue;
    auto dim = dyn_cast<AffineDimExpr>(maps[0].getResult(d));
    plainly = plainly && dim;
    if (dim)
      inChannels.push_back(dim.getPosition());
  }
  for (int64_t d = 1; d < outRank; ++d)
    if (!llvm::is_contained(outSpatial, d))
      outChannels.push_back(outLoop(d));
  auto batch = dyn_cast<AffineDimExpr>(maps[0].getResult(0));
  if (!plainly || !batch || batch.getPosition() != outLoop(0))
    return refuse("its batch and channel dimensions are not read plainly "
                  "in the layout of its result");
  auto loopExpr = [&](int64_t l) {
    return getAffineDimExpr(l, op.getContext());
  };
  auto reads = [&](AffineMap map, ArrayRef<int64_t> loops) {
    SmallVector<AffineExpr> exprs;
    for (int64_t l : loops)
      exprs.push_back(loopExpr(l));
    return map.getResults() == ArrayRef<AffineExpr>(exprs);
  };
  int64_t kh = windowLoops[0], kw = windowLoops[1];
  // What ein.conv reads and writes: the input and result in 4-D (groups
  // folded into the channels) and an hwcf or fchw filter, each regrouped
  // from the generic's operand by these (none where it is 4-D already).
  bool pooling = false;
  int64_t groups = 1;
  SmallVector<ReassociationIndices> inGroups, outGroups;
  // The filter's regroupings, in order (a channel multiplier's takes two).
  SmallVector<SmallVector<ReassociationIndices>> filterSteps;
  SmallVector<SmallVector<int64_t>> filterShapes;
  ArrayRef<int64_t> w =
      cast<RankedTensorType>(op.getDpsInputs()[1].getType()).getShape();
  if (inChannels.size() == 1 && outChannels.size() == 1 &&
      inChannels[0] == outChannels[0]) {
    int64_t k = inChannels[0];
    if (reads(maps[1], {kh, kw})) {
      pooling = true;
    } else if (reads(maps[1], last ? SmallVector<int64_t>{kh, kw, k}
                                   : SmallVector<int64_t>{k, kh, kw})) {
      // Depthwise: a group per channel, one feature each.
      groups = w[last ? 2 : 0];
      filterSteps.push_back(
          last ? SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}}
               : SmallVector<ReassociationIndices>{{0, 1}, {2}, {3}});
      filterShapes.push_back(last ? SmallVector<int64_t>{w[0], w[1], 1, w[2]}
                                  : SmallVector<int64_t>{w[0], 1, w[1], w[2]});
    } else {
      return refuse(Twine("its second input is neither a pooling window "
                          "(indexed by the window's loops alone) nor a "
                          "depthwise filter (") +
                    (last ? "hwc" : "chw") + ")");
    }
  } else if (inChannels.size() == 1 && outChannels.size() == 1) {
    int64_t c = inChannels[0], f = outChannels[0];
    if (!reads(maps[1], last ? SmallVector<int64_t>{kh, kw, c, f}
                             : SmallVector<int64_t>{f, c, kh, kw}))
      return refuse(Twine("its filter is not read as ") +
                    (last ? "hwcf" : "fchw"));
  } else if (last && inChannels.size() == 1 && outChannels.size() == 2 &&
             outChannels[0] == inChannels[0]) {
    // Depthwise with a channel multiplier: channel k's m-th feature is
    // output channel k * M + m, of group k.
    if (!reads(maps[1], {kh, kw, inChannels[0], outChannels[1]}))
      return refuse("its depthwise filter with a channel multiplier is not "
                    "read as hwcm");
    groups = w[2];
    outGroups = {{0}, {1}, {2}, {3, 4}};
    filterSteps.push_back({{0}, {1}, {2, 3}});
    filterShapes.push_back({w[0], w[1], w[2] * w[3]});
    filterSteps.push_back({{0}, {1}, {2, 3}});
    filterShapes.push_back({w[0], w[1], 1, w[2] * w[3]});
  } else if (!last && inChannels.size() == 2 && outChannels.size() == 2 &&
             inChannels[0] == outChannels[0]) {
    // Grouped: input [n, g, c, h, w], filter [g, f, c, kh, kw], result
    // [n, g, f, oh, ow].
    int64_t g = inChannels[0], c = inChannels[1], f = outChannels[1];
    if (!reads(maps[1], {g, f, c, kh, kw}))
      return refuse("its grouped filter is not read as gfchw");
    groups = w[0];
    inGroups = {{0}, {1, 2}, {3}, {4}};
    outGroups = inGroups;
    filterSteps.push_back({{0, 1}, {2}, {3}, {4}});
    filterShapes.push_back({w[0] * w[1], w[2], w[3], w[4]});
  } else {
    return refuse(last && inChannels.size() == 2
                      ? "it is a grouped convolution in nhwgc (its filter is "
                        "no hwcf without a transpose; write it in ngchw, "
                        "filter gfchw)"
                      : "its channels are not those of a convolution (the "
                        "result's channels, not the input's) or of a pooling "
                        "(the same loop)");
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
  Value joined = combine->getOperand(0) == accumulator ? combine->getOperand(1)
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
  auto outType = cast<RankedTensorType>(op.getResult(0).getType());
  Value x = op.getDpsInputs()[0];
  Type element = cast<RankedTensorType>(x.getType()).getElementType();
  if (outType.getElementType() != element ||
      (!pooling && cast<RankedTensorType>(op.getDpsInputs()[1].getType())
                           .getElementType() != element))
    return refuse("its input, filter and result element types differ");
  builder.setInsertionPoint(op);
  Location loc = op.getLoc();
  // The input and result with their groups folded into the channels.
  auto folded = [&](RankedTensorType type,
                    ArrayRef<ReassociationIndices> regroup) {
    if (regroup.empty())
      return type;
    SmallVector<int64_t> shape;
    for (const ReassociationIndices &group : regroup) {
      int64_t size = 1;
      for (int64_t d : group)
        size *= type.getShape()[d];
      shape.push_back(size);
    }
    return RankedTensorType::get(shape, type.getElementType());
  };
  x = regrouped(loc, x, inGroups,
                folded(cast<RankedTensorType>(x.getType()), inGroups));
  RankedTensorType resultType = folded(outType, outGroups);
  int64_t chan = last ? 3 : 1;
  int64_t spatial[2] = {last ? 1 : 2, last ? 2 : 3};
  // A tensor.pad of the rows and columns only, with the value the window
  // ignores, is the op's padding.
  SmallVector<int64_t> padLow(2, 0), padHigh(2, 0);
  if (auto pad = x.getDefiningOp<tensor::PadOp>()) {
    Value padValue = pad.getConstantPaddingValue();
    FloatAttr value;
    if (padValue)
      matchPattern(padValue, m_Constant(&value));
    bool ignored =
        value && (*kind == AggKind::Add ? value.getValue().isZero()
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
      for (auto [i, d] : llvm::enumerate(spatial)) {
        padLow[i] = low[d];
        padHigh[i] = high[d];
      }
      x = pad.getSource();
      foldedOps.insert(pad);
    }
  }
  // linalg's result may stop before the padded input ends: padding it
  // never reads is dropped, and rows or columns it never reads sliced
  // off.
  SmallVector<int64_t> loopSizes = op.getStaticLoopRanges();
  auto inType = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> keep(inType.getShape());
  for (auto [i, d] : llvm::enumerate(spatial)) {
    int64_t reach = (loopSizes[windowLoops[i]] - 1) * dilations[i] + 1;
    int64_t needed = (resultType.getShape()[d] - 1) * strides[i] + reach;
    int64_t fromInput = needed - padLow[i];
    if (fromInput < 1)
      return refuse("its result reads only the padding of dimension " +
                    Twine(windowed[i]));
    padHigh[i] =
        std::min(padHigh[i], std::max<int64_t>(0, fromInput - keep[d]));
    int64_t rows = (keep[d] + padLow[i] + padHigh[i] - reach) / strides[i] + 1;
    if (rows != resultType.getShape()[d])
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
    SmallVector<int64_t> window = {loopSizes[kh], loopSizes[kw]};
    result = PoolOp::create(builder, loc, resultType, *kind, x, layout, window,
                            strides, dilations, padLow, padHigh, SpecAttr(),
                            IntegerAttr());
  } else {
    Value filter = op.getDpsInputs()[1];
    for (auto [regroup, shape] : llvm::zip(filterSteps, filterShapes))
      filter = regrouped(loc, filter, regroup,
                         RankedTensorType::get(shape, element));
    result = ConvOp::create(
        builder, loc, resultType, x, filter, layout, strides, dilations, padLow,
        padHigh, static_cast<uint64_t>(groups), SpecAttr(), IntegerAttr());
  }
  if (failed(mlir::verify(result.getDefiningOp())))
    return failure();
  if (!outGroups.empty())
    result = reshapeOf(op, result, outGroups, outType);
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

} // namespace mlir::ein::import_detail
