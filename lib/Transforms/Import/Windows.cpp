//===- Windows.cpp - ein-import: convolutions and poolings ----------------===//
//
// A generic reading an input through a window (`oh * stride + kh *
// dilation`), as linalg's 2-D convolutions and poolings in nhwc or nchw
// layouts are, imported as ein.conv or ein.pool, a tensor.pad before it
// folded into its padding.
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

FailureOr<bool> Importer::importWindow(linalg::GenericOp op) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (op.getNumDpsInputs() < 1 || maps.empty() || maps[0].getNumResults() != 4)
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
    int64_t reads = (keep[d] + padLow[i] + padHigh[i] - reach) / strides[i] + 1;
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
    result = PoolOp::create(builder, loc, resultType, *kind, x, layout, window,
                            strides, dilations, padLow, padHigh, SpecAttr(),
                            IntegerAttr());
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

} // namespace mlir::ein::import_detail
