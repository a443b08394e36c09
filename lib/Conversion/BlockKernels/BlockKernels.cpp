//===- BlockKernels.cpp - Device-level ein blocks as kernels --------------===//
//
// Each block becomes linalg on memrefs. Aggregations fill their accumulator
// with the aggregation's identity and reduce into it; bf16 and f16 blocks
// accumulate in f32 in a scratch buffer and round once. Composites spell
// out their stages: RMSNorm and softmax as a reduction then a map, attention
// as scores, masked row maximum, exponential sums and the weighted values,
// with GQA read through `h floordiv group` (no repeated KV).
//
//===----------------------------------------------------------------------===//

#include "Einsummable/Conversion/BlockKernels/BlockKernels.h"
#include "Einsummable/Program/ExportProgram.h"
#include "Einsummable/Target/TargetBackend.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <limits>

using namespace mlir;
using namespace mlir::ein;

std::string mlir::ein::whyNotLibraryAttention(AttentionOp attention,
                                              ::ein::Backend backend) {
  return getTargetBackend(backend).whyNotLibraryAttention(attention);
}

std::string mlir::ein::whyNotLibraryConv(ConvOp conv, ::ein::Backend backend) {
  return getTargetBackend(backend).whyNotLibraryConv(conv);
}

bool mlir::ein::isLibraryAttention(AttentionOp attention,
                                   ::ein::Backend backend) {
  return whyNotLibraryAttention(attention, backend).empty();
}

/// Fewer summed terms than this are not a product worth a gemm remark.
static constexpr int64_t kGemmWorthyTerms = 16;

std::string mlir::ein::whyNotLibraryGemm(JoinAggOp join) {
  if (succeeded(matchLibraryGemm(join)))
    return "";
  // Only a sum of products of two inputs is a near miss worth naming.
  if (join.getInputs().size() != 2 || join.getAgg() != AggKind::Add ||
      join.getAggregatedLoops().empty())
    return "";
  bool product = false;
  for (Operation &op : join.getJoin().front().without_terminator()) {
    if (isa<arith::MulFOp>(op))
      product = true;
    else if (!isa<arith::ExtFOp>(op))
      return "";
  }
  if (!product)
    return "";
  // A short sum (RoPE's rotation sums 2 terms) is elementwise work, not a
  // gemm missed.
  SmallVector<int64_t> sizes = join.getLoopSizes();
  int64_t terms = 1;
  for (int64_t loop : join.getAggregatedLoops())
    terms *= sizes[loop];
  if (terms < kGemmWorthyTerms)
    return "";
  size_t summed = join.getAggregatedLoops().size();
  if (summed != 1)
    return "it sums over " + std::to_string(summed) +
           " loops (a library gemm sums over one: collapse the contracted "
           "dimensions into one)";
  return "its indices are not a (batched) matrix product the library "
         "takes (each input's last two dimensions must be its row or column "
         "and the summed loop, the result's last two the rows and columns, "
         "and the batch loops lead every operand in one order)";
}

bool mlir::ein::needsBlockKernel(Operation *op, ::ein::Backend backend) {
  if (!op->hasAttr("device"))
    return false;
  if (auto join = dyn_cast<JoinAggOp>(op))
    return failed(matchLibraryGemm(join));
  if (auto attention = dyn_cast<AttentionOp>(op))
    return !isLibraryAttention(attention, backend);
  if (auto conv = dyn_cast<ConvOp>(op))
    return !whyNotLibraryConv(conv, backend).empty();
  // Other composites have no library form: a kernel of their own.
  return op->hasTrait<BlockKernel>();
}

namespace {

using utils::IteratorType;

Type elementOf(Value v) {
  return cast<ShapedType>(v.getType()).getElementType();
}

Value infinity(OpBuilder &b, Location loc, Type type, bool negative) {
  auto f = cast<FloatType>(type);
  return arith::ConstantOp::create(
      b, loc, f,
      b.getFloatAttr(f, APFloat::getInf(f.getFloatSemantics(), negative)));
}

} // namespace

Value mlir::ein::floatConstant(OpBuilder &b, Location loc, Type type,
                               double value) {
  return arith::ConstantOp::create(b, loc, type, b.getFloatAttr(type, value));
}

Value mlir::ein::castFloat(OpBuilder &b, Location loc, Value v, Type to) {
  auto from = cast<FloatType>(v.getType());
  auto into = cast<FloatType>(to);
  if (from == into)
    return v;
  if (from.getWidth() < into.getWidth())
    return arith::ExtFOp::create(b, loc, into, v);
  if (from.getWidth() > into.getWidth())
    return arith::TruncFOp::create(b, loc, into, v);
  Value wide = arith::ExtFOp::create(b, loc, b.getF32Type(), v);
  return arith::TruncFOp::create(b, loc, into, wide);
}

Value mlir::ein::aggregationIdentity(OpBuilder &b, Location loc, AggKind kind,
                                     Type type) {
  switch (kind) {
  case AggKind::Add:
    return floatConstant(b, loc, type, 0.0);
  case AggKind::Mul:
    return floatConstant(b, loc, type, 1.0);
  case AggKind::Max:
    return infinity(b, loc, type, /*negative=*/true);
  case AggKind::Min:
    return infinity(b, loc, type, /*negative=*/false);
  default:
    llvm_unreachable("no identity for aggregation none");
  }
}

Value mlir::ein::aggregationCombine(OpBuilder &b, Location loc, AggKind kind,
                                    Value acc, Value v) {
  switch (kind) {
  case AggKind::Add:
    return arith::AddFOp::create(b, loc, acc, v);
  case AggKind::Mul:
    return arith::MulFOp::create(b, loc, acc, v);
  case AggKind::Max:
    return arith::MaximumFOp::create(b, loc, acc, v);
  case AggKind::Min:
    return arith::MinimumFOp::create(b, loc, acc, v);
  default:
    llvm_unreachable("nothing to combine for aggregation none");
  }
}

namespace {

/// The map from `numLoops` loops to the listed ones.
AffineMap loopsMap(MLIRContext *ctx, int64_t numLoops,
                   ArrayRef<int64_t> loops) {
  SmallVector<AffineExpr> exprs;
  for (int64_t l : loops)
    exprs.push_back(getAffineDimExpr(l, ctx));
  return AffineMap::get(numLoops, 0, exprs, ctx);
}

SmallVector<int64_t> range(int64_t begin, int64_t end) {
  SmallVector<int64_t> r;
  for (int64_t i = begin; i < end; ++i)
    r.push_back(i);
  return r;
}

void yieldValue(OpBuilder &b, Location loc, Value v) {
  linalg::YieldOp::create(b, loc, ValueRange{v});
}

using BodyFn = function_ref<void(OpBuilder &, Location, ValueRange)>;

void generic(OpBuilder &b, Location loc, ValueRange ins, ValueRange outs,
             ArrayRef<AffineMap> maps, ArrayRef<IteratorType> iterators,
             BodyFn body) {
  linalg::GenericOp::create(b, loc, TypeRange(), ins, outs, maps, iterators,
                            body);
}

/// A scratch buffer the kernel frees before it returns.
class Scratch {
public:
  Scratch(OpBuilder &b, Location loc) : b(b), loc(loc) {}
  Value make(ArrayRef<int64_t> shape, Type element) {
    Value buffer =
        memref::AllocOp::create(b, loc, MemRefType::get(shape, element));
    buffers.push_back(buffer);
    return buffer;
  }
  void freeAll() {
    for (Value buffer : buffers)
      memref::DeallocOp::create(b, loc, buffer);
  }

private:
  OpBuilder &b;
  Location loc;
  SmallVector<Value> buffers;
};

/// `out = round(acc)`, element by element.
void roundInto(OpBuilder &b, Location loc, Value acc, Value out) {
  int64_t rank = cast<MemRefType>(out.getType()).getRank();
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, b.getContext());
  Type element = elementOf(out);
  generic(b, loc, acc, out, {id, id},
          SmallVector<IteratorType>(rank, IteratorType::parallel),
          [&](OpBuilder &nb, Location l, ValueRange args) {
            yieldValue(nb, l, castFloat(nb, l, args[0], element));
          });
}

/// The compute type of a normalisation: f32, or the element type if wider.
Type computeTypeOf(OpBuilder &b, Type element) {
  return cast<FloatType>(element).getWidth() > 32 ? element : b.getF32Type();
}

/// A join's region cloned at the builder on `elements` (its arguments):
/// each `ein.index d` becomes `loopIndex(d)` plus the block's offset in
/// loop `d`, so block kernels see whole-tensor coordinates. Returns the
/// yielded value.
Value joinBody(OpBuilder &nb, Location l, Block &region, ValueRange elements,
               ArrayRef<int64_t> offsets,
               llvm::function_ref<Value(int64_t)> loopIndex) {
  IRMapping map;
  for (auto [arg, element] : llvm::zip(region.getArguments(), elements))
    map.map(arg, element);
  for (Operation &op : region.without_terminator()) {
    auto index = dyn_cast<IndexOp>(op);
    if (!index) {
      nb.clone(op, map);
      continue;
    }
    int64_t dim = index.getDim();
    Value i = loopIndex(dim);
    if (offsets[dim] != 0)
      i = arith::AddIOp::create(
          nb, l, i, arith::ConstantIndexOp::create(nb, l, offsets[dim]));
    map.map(index.getResult(), i);
  }
  return map.lookup(cast<YieldOp>(region.getTerminator()).getValues().front());
}

/// Aggregations over at most this many points per output element (a RoPE's
/// 2 x 2 rotation, a sum of a few terms) are unrolled (unrolledReduction).
constexpr int64_t kUnrolledReduction = 8;

/// A join-agg whose reduction loops span `extent` points, at most
/// kUnrolledReduction, as one elementwise pass over its output: each
/// input read once per reduction point (its reduction loops fixed to that
/// point's coordinates in the indexing map), the body cloned per point, the
/// values combined in the accumulator type from the aggregation's identity
/// in the order the loops run, and rounded once. The same arithmetic as the
/// general path's fill, accumulate and round, without its scratch
/// accumulator and its two extra passes (on a GPU, two extra kernels).
LogicalResult unrolledReduction(JoinAggOp join, ValueRange args, OpBuilder &b,
                                int64_t extent) {
  Location loc = join.getLoc();
  MLIRContext *ctx = b.getContext();
  int64_t numLoops = join.getNumLoops();
  SmallVector<int64_t> offsets = join.getBlockOffsets();
  SmallVector<int64_t> sizes = join.getLoopSizes();
  Block &region = join.getJoin().front();
  Type accType = join.getAccType();
  Value out = args.back();
  Type resultType = elementOf(out);
  AggKind kind = join.getAgg();

  // The output's loops, in order, are the new iteration space.
  ArrayRef<int64_t> outLoops = join.getOutputIndices();
  SmallVector<int64_t> position(numLoops, -1), reduced;
  for (auto [i, l] : llvm::enumerate(outLoops))
    position[l] = static_cast<int64_t>(i);
  for (int64_t l = 0; l < numLoops; ++l)
    if (position[l] < 0)
      reduced.push_back(l);
  int64_t rank = static_cast<int64_t>(outLoops.size());

  // Per reduction point (row-major over the reduction loops, as the
  // general path's loops run), each input with that point's coordinates.
  SmallVector<Value> ins;
  SmallVector<AffineMap> maps;
  SmallVector<SmallVector<int64_t>> points;
  unsigned numInputs = join.getInputs().size();
  for (int64_t r = 0; r < extent; ++r) {
    SmallVector<int64_t> coords(numLoops, 0);
    int64_t rest = r;
    for (int64_t i = int64_t(reduced.size()) - 1; i >= 0; --i) {
      coords[reduced[i]] = rest % sizes[reduced[i]];
      rest /= sizes[reduced[i]];
    }
    points.push_back(coords);
    for (unsigned i = 0; i < numInputs; ++i) {
      SmallVector<AffineExpr> exprs;
      for (int64_t l : join.getIndicesOfInput(i))
        exprs.push_back(position[l] >= 0
                            ? getAffineDimExpr(position[l], ctx)
                            : getAffineConstantExpr(coords[l], ctx));
      ins.push_back(args[i]);
      maps.push_back(AffineMap::get(rank, 0, exprs, ctx));
    }
  }
  maps.push_back(AffineMap::getMultiDimIdentityMap(rank, ctx));
  generic(b, loc, ins, out, maps,
          SmallVector<IteratorType>(rank, IteratorType::parallel),
          [&](OpBuilder &nb, Location l, ValueRange elements) {
            Value acc = aggregationIdentity(nb, l, kind, accType);
            for (int64_t r = 0; r < extent; ++r) {
              // A reduction loop's coordinate is this point's.
              Value v = joinBody(
                  nb, l, region, elements.slice(r * numInputs, numInputs),
                  offsets, [&](int64_t dim) -> Value {
                    if (position[dim] >= 0)
                      return linalg::IndexOp::create(nb, l, position[dim]);
                    return arith::ConstantIndexOp::create(nb, l,
                                                          points[r][dim]);
                  });
              acc = aggregationCombine(nb, l, kind, acc,
                                       castFloat(nb, l, v, accType));
            }
            yieldValue(nb, l, castFloat(nb, l, acc, resultType));
          });
  return success();
}

LogicalResult joinAggKernel(JoinAggOp join, ValueRange args, OpBuilder &b) {
  Location loc = join.getLoc();
  MLIRContext *ctx = b.getContext();
  int64_t numLoops = join.getNumLoops();
  // The dialect verifies one offset per loop.
  SmallVector<int64_t> offsets = join.getBlockOffsets();

  Block &region = join.getJoin().front();
  auto yield = cast<YieldOp>(region.getTerminator());
  if (yield.getValues().size() != 1)
    return join.emitOpError() << "yields " << yield.getValues().size()
                              << " values; a block kernel needs one";
  bool nestedIndex = false;
  region.walk([&](IndexOp index) {
    nestedIndex |= index->getParentOp() != join.getOperation();
  });
  if (nestedIndex)
    return join.emitOpError()
           << "reads ein.index inside a nested region, which block kernels "
              "do not lower";

  Type accType = join.getAccType();
  Value out = args.back();
  Type resultType = elementOf(out);
  AggKind kind = join.getAgg();
  bool aggregates = kind != AggKind::None;
  if (aggregates && !isa<FloatType>(accType))
    return join.emitOpError() << "accumulates in " << accType
                              << "; block kernels accumulate in float types";
  Type yielded = yield.getValues().front().getType();
  if (!isa<FloatType>(resultType) && yielded != resultType)
    return join.emitOpError()
           << "yields " << yielded << " into a " << resultType
           << " result; an integer or boolean result is yielded as it is";

  SmallVector<AffineMap> maps;
  for (unsigned i = 0, e = join.getInputs().size(); i < e; ++i)
    maps.push_back(loopsMap(ctx, numLoops, join.getIndicesOfInput(i)));
  maps.push_back(loopsMap(ctx, numLoops, join.getOutputIndices()));
  SmallVector<IteratorType> iterators;
  for (int64_t l = 0; l < numLoops; ++l)
    iterators.push_back(llvm::is_contained(join.getOutputIndices(), l)
                            ? IteratorType::parallel
                            : IteratorType::reduction);

  if (aggregates) {
    int64_t extent = 1;
    SmallVector<int64_t> sizes = join.getLoopSizes();
    for (int64_t l = 0; l < numLoops; ++l)
      if (iterators[l] == IteratorType::reduction)
        extent *= sizes[l];
    if (extent <= kUnrolledReduction)
      return unrolledReduction(join, args, b, extent);
  }
  Scratch scratch(b, loc);
  Value acc = out;
  if (aggregates) {
    if (accType != resultType)
      acc = scratch.make(cast<MemRefType>(out.getType()).getShape(), accType);
    linalg::FillOp::create(
        b, loc, ValueRange{aggregationIdentity(b, loc, kind, accType)},
        ValueRange{acc});
  }
  generic(b, loc, args.drop_back(), acc, maps, iterators,
          [&](OpBuilder &nb, Location l, ValueRange elements) {
            Value v = joinBody(nb, l, region, elements, offsets,
                               [&](int64_t dim) -> Value {
                                 return linalg::IndexOp::create(nb, l, dim);
                               });
            if (aggregates)
              v = aggregationCombine(nb, l, kind, elements.back(),
                                     castFloat(nb, l, v, accType));
            else if (isa<FloatType>(resultType))
              v = castFloat(nb, l, v, resultType);
            yieldValue(nb, l, v);
          });
  if (acc != out)
    roundInto(b, loc, acc, out);
  scratch.freeAll();
  return success();
}

/// `out[..., i] = x[..., i] / sqrt(mean(x^2) + eps) * w[i]`.
LogicalResult rmsNormKernel(RmsNormOp norm, ValueRange args, OpBuilder &b) {
  Location loc = norm.getLoc();
  MLIRContext *ctx = b.getContext();
  Value x = args[0], w = args[1], out = args[2];
  ArrayRef<int64_t> shape = cast<MemRefType>(x.getType()).getShape();
  int64_t rank = shape.size();
  Type ct = computeTypeOf(b, elementOf(x));
  Scratch scratch(b, loc);
  Value sum = scratch.make(shape.drop_back(), ct);
  linalg::FillOp::create(b, loc, ValueRange{floatConstant(b, loc, ct, 0.0)},
                         ValueRange{sum});
  AffineMap full = AffineMap::getMultiDimIdentityMap(rank, ctx);
  AffineMap lead = loopsMap(ctx, rank, range(0, rank - 1));
  AffineMap last = loopsMap(ctx, rank, {rank - 1});
  SmallVector<IteratorType> reduceLast(rank, IteratorType::parallel);
  reduceLast.back() = IteratorType::reduction;
  generic(b, loc, x, sum, {full, lead}, reduceLast,
          [&](OpBuilder &nb, Location l, ValueRange e) {
            Value xf = castFloat(nb, l, e[0], ct);
            Value sq = arith::MulFOp::create(nb, l, xf, xf);
            yieldValue(nb, l, arith::AddFOp::create(nb, l, e[1], sq));
          });
  double n = static_cast<double>(shape.back());
  double eps = norm.getEps().convertToDouble();
  generic(
      b, loc, ValueRange{x, w, sum}, out, {full, last, lead, full},
      SmallVector<IteratorType>(rank, IteratorType::parallel),
      [&](OpBuilder &nb, Location l, ValueRange e) {
        Value mean =
            arith::DivFOp::create(nb, l, e[2], floatConstant(nb, l, ct, n));
        Value root = math::SqrtOp::create(
            nb, l,
            arith::AddFOp::create(nb, l, mean, floatConstant(nb, l, ct, eps)));
        Value y =
            arith::DivFOp::create(nb, l, castFloat(nb, l, e[0], ct), root);
        y = arith::MulFOp::create(nb, l, y, castFloat(nb, l, e[1], ct));
        yieldValue(nb, l, castFloat(nb, l, y, elementOf(out)));
      });
  scratch.freeAll();
  return success();
}

/// `out[..., i] = (x[..., i] - mean) / sqrt(var + eps) * w[i] + b[i]`: the
/// sum, then the squared deviations from the mean (two passes, not
/// E[x^2] - mean^2, which cancels), in the compute type; `w` and `b` when
/// the op has them.
LogicalResult layerNormKernel(LayerNormOp norm, ValueRange args, OpBuilder &b) {
  Location loc = norm.getLoc();
  MLIRContext *ctx = b.getContext();
  Value x = args.front(), out = args.back();
  ValueRange params = args.drop_front().drop_back();
  ArrayRef<int64_t> shape = cast<MemRefType>(x.getType()).getShape();
  int64_t rank = shape.size();
  Type ct = computeTypeOf(b, elementOf(x));
  double n = static_cast<double>(shape.back());
  Scratch scratch(b, loc);
  Value sum = scratch.make(shape.drop_back(), ct);
  Value deviations = scratch.make(shape.drop_back(), ct);
  for (Value stat : {sum, deviations})
    linalg::FillOp::create(b, loc, ValueRange{floatConstant(b, loc, ct, 0.0)},
                           ValueRange{stat});
  AffineMap full = AffineMap::getMultiDimIdentityMap(rank, ctx);
  AffineMap lead = loopsMap(ctx, rank, range(0, rank - 1));
  AffineMap last = loopsMap(ctx, rank, {rank - 1});
  SmallVector<IteratorType> reduceLast(rank, IteratorType::parallel);
  reduceLast.back() = IteratorType::reduction;
  SmallVector<IteratorType> parallel(rank, IteratorType::parallel);
  generic(b, loc, x, sum, {full, lead}, reduceLast,
          [&](OpBuilder &nb, Location l, ValueRange e) {
            yieldValue(
                nb, l,
                arith::AddFOp::create(nb, l, e[1], castFloat(nb, l, e[0], ct)));
          });
  auto meanOf = [&](OpBuilder &nb, Location l, Value total) -> Value {
    return arith::DivFOp::create(nb, l, total, floatConstant(nb, l, ct, n));
  };
  generic(b, loc, ValueRange{x, sum}, deviations, {full, lead, lead},
          reduceLast, [&](OpBuilder &nb, Location l, ValueRange e) {
            Value d = arith::SubFOp::create(nb, l, castFloat(nb, l, e[0], ct),
                                            meanOf(nb, l, e[1]));
            yieldValue(nb, l,
                       arith::AddFOp::create(
                           nb, l, e[2], arith::MulFOp::create(nb, l, d, d)));
          });
  double eps = norm.getEps().convertToDouble();
  SmallVector<Value> inputs = {x, sum, deviations};
  SmallVector<AffineMap> maps = {full, lead, lead};
  for (Value param : params) {
    inputs.push_back(param);
    maps.push_back(last);
  }
  maps.push_back(full);
  generic(b, loc, inputs, out, maps, parallel,
          [&](OpBuilder &nb, Location l, ValueRange e) {
            Value variance =
                arith::DivFOp::create(nb, l, e[2], floatConstant(nb, l, ct, n));
            Value root = math::SqrtOp::create(
                nb, l,
                arith::AddFOp::create(nb, l, variance,
                                      floatConstant(nb, l, ct, eps)));
            Value y = arith::DivFOp::create(
                nb, l,
                arith::SubFOp::create(nb, l, castFloat(nb, l, e[0], ct),
                                      meanOf(nb, l, e[1])),
                root);
            if (params.size() > 0)
              y = arith::MulFOp::create(nb, l, y, castFloat(nb, l, e[3], ct));
            if (params.size() > 1)
              y = arith::AddFOp::create(nb, l, y, castFloat(nb, l, e[4], ct));
            yieldValue(nb, l, castFloat(nb, l, y, elementOf(out)));
          });
  scratch.freeAll();
  return success();
}

/// The index of the maximum (minimum) along `dim`, as ein.arg_reduce
/// defines it: the maximum in the compute type, NaNs skipped (maxnumf, from
/// -inf); then the least index holding it; 0 where the maximum stayed -inf
/// (no element above it).
LogicalResult argReduceKernel(ArgReduceOp op, ValueRange args, OpBuilder &b) {
  Location loc = op.getLoc();
  MLIRContext *ctx = b.getContext();
  Value x = args[0], out = args[1];
  ArrayRef<int64_t> shape = cast<MemRefType>(x.getType()).getShape();
  int64_t rank = shape.size(), dim = op.getDimAttr().getInt();
  bool max = op.getKind() == AggKind::Max;
  Type ct = computeTypeOf(b, elementOf(x));
  auto indexType = cast<IntegerType>(elementOf(out));
  Scratch scratch(b, loc);
  Value best = scratch.make(cast<MemRefType>(out.getType()).getShape(), ct);
  Value start = infinity(b, loc, ct, /*negative=*/max);
  linalg::FillOp::create(b, loc, ValueRange{start}, ValueRange{best});
  AffineMap full = AffineMap::getMultiDimIdentityMap(rank, ctx);
  SmallVector<int64_t> kept;
  for (int64_t d = 0; d < rank; ++d)
    if (d != dim)
      kept.push_back(d);
  AffineMap lead = loopsMap(ctx, rank, kept);
  SmallVector<IteratorType> reduceDim(rank, IteratorType::parallel);
  reduceDim[dim] = IteratorType::reduction;
  generic(b, loc, x, best, {full, lead}, reduceDim,
          [&](OpBuilder &nb, Location l, ValueRange e) {
            Value v = castFloat(nb, l, e[0], ct);
            Value m =
                max ? arith::MaxNumFOp::create(nb, l, e[1], v).getResult()
                    : arith::MinNumFOp::create(nb, l, e[1], v).getResult();
            yieldValue(nb, l, m);
          });
  auto integer = [&](OpBuilder &nb, Location l, int64_t v) -> Value {
    return arith::ConstantOp::create(nb, l, nb.getIntegerAttr(indexType, v));
  };
  int64_t none = indexType.getWidth() == 64
                     ? std::numeric_limits<int64_t>::max()
                     : std::numeric_limits<int32_t>::max();
  linalg::FillOp::create(b, loc, ValueRange{integer(b, loc, none)},
                         ValueRange{out});
  generic(b, loc, ValueRange{x, best}, out, {full, lead, lead}, reduceDim,
          [&](OpBuilder &nb, Location l, ValueRange e) {
            Value v = castFloat(nb, l, e[0], ct);
            Value here = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OEQ,
                                               v, e[1]);
            Value i = arith::IndexCastOp::create(
                nb, l, indexType, linalg::IndexOp::create(nb, l, dim));
            Value candidate =
                arith::SelectOp::create(nb, l, here, i, integer(nb, l, none));
            yieldValue(nb, l, arith::MinSIOp::create(nb, l, e[2], candidate));
          });
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank - 1, ctx);
  generic(b, loc, ValueRange{best}, out, {id, id},
          SmallVector<IteratorType>(rank - 1, IteratorType::parallel),
          [&](OpBuilder &nb, Location l, ValueRange e) {
            Value stayed =
                arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OEQ, e[0],
                                      infinity(nb, l, ct, /*negative=*/max));
            yieldValue(nb, l,
                       arith::SelectOp::create(nb, l, stayed, integer(nb, l, 0),
                                               e[1]));
          });
  scratch.freeAll();
  return success();
}

/// Index `i` of a dimension of `extent` elements clamped into it, and
/// whether it lies inside: what a window read at a padded place loads, and
/// whether it keeps it.
std::pair<Value, Value> clampIndex(OpBuilder &b, Location loc, Value i,
                                   int64_t extent) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value end = arith::ConstantIndexOp::create(b, loc, extent - 1);
  Value inside = arith::AndIOp::create(
      b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, i, zero),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, i, end));
  Value clamped = arith::MinSIOp::create(
      b, loc, arith::MaxSIOp::create(b, loc, i, zero), end);
  return {clamped, inside};
}

/// Pooling windows up to this many elements are unrolled (pooledKernel).
static constexpr int64_t kUnrolledWindow = 64;

/// Pooling over a 4-D block whose window is small: one map over the output
/// combining the window's elements, unrolled, in the compute type from the
/// aggregation's identity (kh, then kw, as the general path's loops run),
/// each read at a clamped place and replaced by the padding value (0, or
/// -inf for max pooling) where it lies in the padding; then rounded once.
/// The general path's arithmetic without its padded copy, its scratch
/// accumulator and their passes (on a GPU, one kernel instead of four).
LogicalResult pooledKernel(Operation *op, Value x, Value out,
                           ArrayRef<int64_t> window, StringRef layout,
                           AggKind kind, ArrayRef<int64_t> strides,
                           ArrayRef<int64_t> dilations,
                           ArrayRef<int64_t> padLow, OpBuilder &b) {
  Location loc = op->getLoc();
  bool last = layout == "nhwc";
  int64_t rowsDim = last ? 1 : 2, colsDim = last ? 2 : 3;
  ArrayRef<int64_t> in = cast<MemRefType>(x.getType()).getShape();
  Type ct = computeTypeOf(b, elementOf(x));
  AffineMap id = AffineMap::getMultiDimIdentityMap(4, b.getContext());
  generic(b, loc, ValueRange{}, out, {id},
          SmallVector<IteratorType>(4, IteratorType::parallel),
          [&](OpBuilder &nb, Location l, ValueRange) {
            SmallVector<Value> at;
            for (int64_t d = 0; d < 4; ++d)
              at.push_back(linalg::IndexOp::create(nb, l, d));
            auto constant = [&](int64_t v) {
              return arith::ConstantIndexOp::create(nb, l, v).getResult();
            };
            // The input row (or column) of output place `i` and window place
            // `k` along dimension `d`, clamped into the block, and whether it
            // lies inside.
            auto place = [&](int64_t d, int64_t k, int64_t axis) {
              Value i = arith::AddIOp::create(
                  nb, l,
                  arith::MulIOp::create(nb, l, at[d], constant(strides[axis])),
                  constant(k * dilations[axis] - padLow[axis]));
              return clampIndex(nb, l, i, in[d]);
            };
            Value fill = kind == AggKind::Add
                             ? floatConstant(nb, l, ct, 0.0)
                             : infinity(nb, l, ct, /*negative=*/true);
            Value acc = aggregationIdentity(nb, l, kind, ct);
            for (int64_t kh = 0; kh < window[0]; ++kh) {
              auto [row, rowInside] = place(rowsDim, kh, 0);
              for (int64_t kw = 0; kw < window[1]; ++kw) {
                auto [col, colInside] = place(colsDim, kw, 1);
                SmallVector<Value> from(at);
                from[rowsDim] = row;
                from[colsDim] = col;
                Value v = castFloat(nb, l,
                                    memref::LoadOp::create(nb, l, x, from), ct);
                Value inside =
                    arith::AndIOp::create(nb, l, rowInside, colInside);
                v = arith::SelectOp::create(nb, l, inside, v, fill);
                acc = aggregationCombine(nb, l, kind, acc, v);
              }
            }
            yieldValue(nb, l, castFloat(nb, l, acc, elementOf(out)));
          });
  return success();
}

/// A convolution (`filter` set) or pooling over a 4-D block: the input
/// copied into a scratch buffer of the padded size filled with the padding
/// value (0, or -inf for max pooling) unless the block has no padding, then
/// one generic over (n, oh, ow, f|c, kh, kw[, c]) reading rows
/// `oh * stride + kh * dilation`, summed or maximised in the compute type.
/// Pooling over a window of at most kUnrolledWindow elements is
/// pooledKernel's.
LogicalResult windowKernel(Operation *op, Value x, Value filter, Value out,
                           ArrayRef<int64_t> window, StringRef layout,
                           AggKind kind, ArrayRef<int64_t> strides,
                           ArrayRef<int64_t> dilations,
                           ArrayRef<int64_t> padLow, ArrayRef<int64_t> padHigh,
                           int64_t groups, OpBuilder &b) {
  if (!filter && window[0] * window[1] <= kUnrolledWindow)
    return pooledKernel(op, x, out, window, layout, kind, strides, dilations,
                        padLow, b);
  Location loc = op->getLoc();
  MLIRContext *ctx = b.getContext();
  bool last = layout == "nhwc";
  int64_t rowsDim = last ? 1 : 2, colsDim = last ? 2 : 3;
  Type ct = computeTypeOf(b, elementOf(x));
  Scratch scratch(b, loc);
  Value padded = x;
  if (llvm::any_of(padLow, [](int64_t p) { return p != 0; }) ||
      llvm::any_of(padHigh, [](int64_t p) { return p != 0; })) {
    // A map over the padded buffer loading x where it lies inside (at a
    // clamped place, as the gather does: block kernels pass their own
    // buffers only, not views of them).
    ArrayRef<int64_t> in = cast<MemRefType>(x.getType()).getShape();
    SmallVector<int64_t> shape(in);
    shape[rowsDim] += padLow[0] + padHigh[0];
    shape[colsDim] += padLow[1] + padHigh[1];
    padded = scratch.make(shape, elementOf(x));
    AffineMap id = AffineMap::getMultiDimIdentityMap(4, ctx);
    generic(
        b, loc, ValueRange{}, padded, {id},
        SmallVector<IteratorType>(4, IteratorType::parallel),
        [&](OpBuilder &nb, Location l, ValueRange) {
          Value inside;
          SmallVector<Value> at;
          for (int64_t d = 0; d < 4; ++d) {
            Value i = linalg::IndexOp::create(nb, l, d);
            int64_t low =
                d == rowsDim ? padLow[0] : (d == colsDim ? padLow[1] : 0);
            if (low == 0 && d != rowsDim && d != colsDim) {
              at.push_back(i);
              continue;
            }
            Value shifted = arith::SubIOp::create(
                nb, l, i, arith::ConstantIndexOp::create(nb, l, low));
            auto [clamped, here] = clampIndex(nb, l, shifted, in[d]);
            inside =
                inside ? arith::AndIOp::create(nb, l, inside, here).getResult()
                       : here;
            at.push_back(clamped);
          }
          Value v = memref::LoadOp::create(nb, l, x, at);
          Value fill = filter || kind == AggKind::Add
                           ? floatConstant(nb, l, v.getType(), 0.0)
                           : infinity(nb, l, v.getType(), /*negative=*/true);
          yieldValue(nb, l, arith::SelectOp::create(nb, l, inside, v, fill));
        });
  }
  // Loops: n, oh, ow, f (c for pooling), kh, kw, then c for a convolution
  // (its channel within f's group when grouped).
  int64_t numLoops = filter ? 7 : 6;
  auto d = [&](int64_t l) { return getAffineDimExpr(l, ctx); };
  AffineExpr rows = d(1) * strides[0] + d(4) * dilations[0];
  AffineExpr cols = d(2) * strides[1] + d(5) * dilations[1];
  AffineExpr chan = filter ? d(6) : d(3);
  if (filter && groups != 1) {
    ArrayRef<int64_t> w = cast<MemRefType>(filter.getType()).getShape();
    int64_t perGroup = w[last ? 2 : 1], features = w[last ? 3 : 0];
    chan = d(3).floorDiv(features / groups) * perGroup + d(6);
  }
  auto inLayout = [&](AffineExpr n, AffineExpr c, AffineExpr h, AffineExpr w) {
    SmallVector<AffineExpr> e = last ? SmallVector<AffineExpr>{n, h, w, c}
                                     : SmallVector<AffineExpr>{n, c, h, w};
    return AffineMap::get(numLoops, 0, e, ctx);
  };
  SmallVector<AffineMap> maps = {inLayout(d(0), chan, rows, cols)};
  SmallVector<Value> ins = {padded};
  if (filter) {
    maps.push_back(
        AffineMap::get(numLoops, 0,
                       last ? SmallVector<AffineExpr>{d(4), d(5), d(6), d(3)}
                            : SmallVector<AffineExpr>{d(3), d(6), d(4), d(5)},
                       ctx));
    ins.push_back(filter);
  } else {
    // The window's loops need a bound: a buffer of its shape, never read
    // (as linalg's pooling ops take one).
    maps.push_back(AffineMap::get(numLoops, 0, {d(4), d(5)}, ctx));
    ins.push_back(scratch.make(window, elementOf(x)));
  }
  maps.push_back(inLayout(d(0), d(3), d(1), d(2)));
  SmallVector<IteratorType> iterators(numLoops, IteratorType::reduction);
  for (int64_t l = 0; l < 4; ++l)
    iterators[l] = IteratorType::parallel;
  AggKind combine = filter ? AggKind::Add : kind;
  Value acc = out;
  if (elementOf(out) != ct)
    acc = scratch.make(cast<MemRefType>(out.getType()).getShape(), ct);
  linalg::FillOp::create(b, loc,
                         ValueRange{aggregationIdentity(b, loc, combine, ct)},
                         ValueRange{acc});
  generic(b, loc, ins, acc, maps, iterators,
          [&](OpBuilder &nb, Location l, ValueRange e) {
            Value v = castFloat(nb, l, e[0], ct);
            if (filter)
              v = arith::MulFOp::create(nb, l, v, castFloat(nb, l, e[1], ct));
            yieldValue(nb, l, aggregationCombine(nb, l, combine, e[2], v));
          });
  if (acc != out)
    roundInto(b, loc, acc, out);
  scratch.freeAll();
  return success();
}

/// `out[i..., t...] = table[idx[i...] - row_offset, t...]`, 0 where that is
/// not one of the block's rows: a map over the result reading the index,
/// then the row at a clamped place, kept where it is inside.
LogicalResult gatherKernel(GatherOp gather, ValueRange args, OpBuilder &b) {
  Location loc = gather.getLoc();
  MLIRContext *ctx = b.getContext();
  Value table = args[0], indices = args[1], out = args[2];
  auto tableType = cast<MemRefType>(table.getType());
  int64_t r = cast<MemRefType>(indices.getType()).getRank();
  int64_t rank = cast<MemRefType>(out.getType()).getRank();
  int64_t rows = tableType.getShape()[0];
  AffineMap full = AffineMap::getMultiDimIdentityMap(rank, ctx);
  AffineMap lead = loopsMap(ctx, rank, range(0, r));
  generic(
      b, loc, indices, out, {lead, full},
      SmallVector<IteratorType>(rank, IteratorType::parallel),
      [&](OpBuilder &nb, Location l, ValueRange e) {
        Value offset = arith::ConstantOp::create(
            nb, l,
            nb.getIntegerAttr(e[0].getType(),
                              gather.getRowOffsetAttr().getInt()));
        Value row = arith::SubIOp::create(nb, l, e[0], offset);
        Value zero = arith::ConstantOp::create(
            nb, l, nb.getIntegerAttr(e[0].getType(), 0));
        Value last = arith::ConstantOp::create(
            nb, l, nb.getIntegerAttr(e[0].getType(), rows - 1));
        Value inside = arith::AndIOp::create(
            nb, l,
            arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sge, row, zero),
            arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sle, row, last));
        Value clamped = arith::MinSIOp::create(
            nb, l, arith::MaxSIOp::create(nb, l, row, zero), last);
        SmallVector<Value> at = {
            arith::IndexCastOp::create(nb, l, nb.getIndexType(), clamped)};
        for (int64_t d = r; d < rank; ++d)
          at.push_back(linalg::IndexOp::create(nb, l, d));
        Value v = memref::LoadOp::create(nb, l, table, at);
        Value none = floatConstant(nb, l, v.getType(), 0.0);
        yieldValue(nb, l, arith::SelectOp::create(nb, l, inside, v, none));
      });
  return success();
}

/// The row maximum of `source` over its last `reduced` loop, with rows that
/// hold no finite value read as 0 by `safeMax` (a fully masked row).
Value safeMax(OpBuilder &b, Location loc, Value m) {
  Value negInf = infinity(b, loc, m.getType(), /*negative=*/true);
  Value isEmpty =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, m, negInf);
  return arith::SelectOp::create(b, loc, isEmpty,
                                 floatConstant(b, loc, m.getType(), 0.0), m);
}

/// Normalises `scores` in place along loop `dim` of its `rank` loops:
/// `scores = exp(scores - max) / sum(exp(scores - max))`, 0 for rows with
/// nothing unmasked. Returns nothing; uses `scratch` for the statistics.
void softmaxInPlace(OpBuilder &b, Location loc, Value scores, int64_t dim,
                    Scratch &scratch) {
  MLIRContext *ctx = b.getContext();
  ArrayRef<int64_t> shape = cast<MemRefType>(scores.getType()).getShape();
  int64_t rank = shape.size();
  Type ct = elementOf(scores);
  SmallVector<int64_t> kept, keptShape;
  for (int64_t d = 0; d < rank; ++d)
    if (d != dim) {
      kept.push_back(d);
      keptShape.push_back(shape[d]);
    }
  AffineMap full = AffineMap::getMultiDimIdentityMap(rank, ctx);
  AffineMap row = loopsMap(ctx, rank, kept);
  SmallVector<IteratorType> reduce(rank, IteratorType::parallel);
  reduce[dim] = IteratorType::reduction;
  Value max = scratch.make(keptShape, ct);
  Value sum = scratch.make(keptShape, ct);
  linalg::FillOp::create(b, loc, ValueRange{infinity(b, loc, ct, true)},
                         ValueRange{max});
  linalg::FillOp::create(b, loc, ValueRange{floatConstant(b, loc, ct, 0.0)},
                         ValueRange{sum});
  generic(b, loc, scores, max, {full, row}, reduce,
          [&](OpBuilder &nb, Location l, ValueRange e) {
            yieldValue(nb, l, arith::MaximumFOp::create(nb, l, e[1], e[0]));
          });
  generic(b, loc, ValueRange{scores, max}, sum, {full, row, row}, reduce,
          [&](OpBuilder &nb, Location l, ValueRange e) {
            Value p = math::ExpOp::create(
                nb, l,
                arith::SubFOp::create(nb, l, e[0], safeMax(nb, l, e[1])));
            yieldValue(nb, l, arith::AddFOp::create(nb, l, e[2], p));
          });
  generic(
      b, loc, ValueRange{max, sum}, scores, {row, row, full},
      SmallVector<IteratorType>(rank, IteratorType::parallel),
      [&](OpBuilder &nb, Location l, ValueRange e) {
        Value p = math::ExpOp::create(
            nb, l, arith::SubFOp::create(nb, l, e[2], safeMax(nb, l, e[0])));
        Value zero = floatConstant(nb, l, ct, 0.0);
        Value empty =
            arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OEQ, e[1], zero);
        Value q = arith::DivFOp::create(nb, l, p, e[1]);
        yieldValue(nb, l, arith::SelectOp::create(nb, l, empty, zero, q));
      });
}

LogicalResult softmaxKernel(SoftmaxOp softmax, ValueRange args, OpBuilder &b) {
  Location loc = softmax.getLoc();
  Value x = args[0], out = args[1];
  auto type = cast<MemRefType>(x.getType());
  int64_t rank = type.getRank();
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, b.getContext());
  Type ct = computeTypeOf(b, type.getElementType());
  Scratch scratch(b, loc);
  Value work =
      ct == type.getElementType() ? out : scratch.make(type.getShape(), ct);
  generic(b, loc, x, work, {id, id},
          SmallVector<IteratorType>(rank, IteratorType::parallel),
          [&](OpBuilder &nb, Location l, ValueRange e) {
            yieldValue(nb, l, castFloat(nb, l, e[0], ct));
          });
  softmaxInPlace(b, loc, work, softmax.getDim(), scratch);
  if (work != out)
    roundInto(b, loc, work, out);
  scratch.freeAll();
  return success();
}

/// Scores in f32 with the scale and causal mask, softmax along the keys,
/// then the weighted values.
LogicalResult attentionKernel(AttentionOp attention, ValueRange args,
                              OpBuilder &b) {
  Location loc = attention.getLoc();
  MLIRContext *ctx = b.getContext();
  Value q = args[0], k = args[1], v = args[2], out = args[3];
  ArrayRef<int64_t> qs = cast<MemRefType>(q.getType()).getShape(),
                    ks = cast<MemRefType>(k.getType()).getShape(),
                    vs = cast<MemRefType>(v.getType()).getShape();
  int64_t group = attention.getGroup();
  if (qs.size() != 4 || ks.size() != 4 || vs.size() != 4)
    return attention.emitOpError() << "needs rank-4 blocks for its kernel";
  if (qs[1] != ks[1] * group)
    return attention.emitOpError()
           << "block has " << qs[1] << " query heads for " << ks[1]
           << " KV heads in groups of " << group;
  int64_t batch = qs[0], heads = qs[1], queries = qs[2], keys = ks[2];
  Type f32 = b.getF32Type();
  Scratch scratch(b, loc);

  // Loops b, h, s, t, d: scores[b, h, s, t] = sum_d q[b, h, s, d] k[b, h/g, t,
  // d].
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  AffineExpr kvHead = d(1).floorDiv(group);
  Value scores = scratch.make({batch, heads, queries, keys}, f32);
  linalg::FillOp::create(b, loc, ValueRange{floatConstant(b, loc, f32, 0.0)},
                         ValueRange{scores});
  auto map = [&](unsigned dims, ArrayRef<AffineExpr> exprs) {
    return AffineMap::get(dims, 0, exprs, ctx);
  };
  using IT = IteratorType;
  generic(
      b, loc, ValueRange{q, k}, scores,
      {map(5, {d(0), d(1), d(2), d(4)}), map(5, {d(0), kvHead, d(3), d(4)}),
       map(5, {d(0), d(1), d(2), d(3)})},
      {IT::parallel, IT::parallel, IT::parallel, IT::parallel, IT::reduction},
      [&](OpBuilder &nb, Location l, ValueRange e) {
        Value p = arith::MulFOp::create(nb, l, castFloat(nb, l, e[0], f32),
                                        castFloat(nb, l, e[1], f32));
        yieldValue(nb, l, arith::AddFOp::create(nb, l, e[2], p));
      });
  // Scale and mask: query s sees key t when t + key_offset <= s + query_offset.
  double scale = attention.getScaleOrDefault();
  int64_t queryOffset = attention.getQueryOffset(),
          keyOffset = attention.getKeyOffset();
  bool causal = attention.getCausal();
  AffineMap id4 = AffineMap::getMultiDimIdentityMap(4, ctx);
  generic(b, loc, ValueRange{}, scores, {id4}, SmallVector<IT>(4, IT::parallel),
          [&](OpBuilder &nb, Location l, ValueRange e) {
            Value s = arith::MulFOp::create(nb, l, e[0],
                                            floatConstant(nb, l, f32, scale));
            if (causal) {
              auto shifted = [&](int64_t dim, int64_t offset) {
                Value i = linalg::IndexOp::create(nb, l, dim);
                return arith::AddIOp::create(
                    nb, l, i, arith::ConstantIndexOp::create(nb, l, offset));
              };
              Value hidden = arith::CmpIOp::create(
                  nb, l, arith::CmpIPredicate::sgt, shifted(3, keyOffset),
                  shifted(2, queryOffset));
              s = arith::SelectOp::create(nb, l, hidden,
                                          infinity(nb, l, f32, true), s);
            }
            yieldValue(nb, l, s);
          });
  softmaxInPlace(b, loc, scores, /*dim=*/3, scratch);
  // Loops b, h, s, e, t: out[b, h, s, e] = sum_t p[b, h, s, t] v[b, h/g, t, e].
  Value acc =
      elementOf(out) == f32
          ? out
          : scratch.make(cast<MemRefType>(out.getType()).getShape(), f32);
  linalg::FillOp::create(b, loc, ValueRange{floatConstant(b, loc, f32, 0.0)},
                         ValueRange{acc});
  generic(
      b, loc, ValueRange{scores, v}, acc,
      {map(5, {d(0), d(1), d(2), d(4)}), map(5, {d(0), kvHead, d(4), d(3)}),
       map(5, {d(0), d(1), d(2), d(3)})},
      {IT::parallel, IT::parallel, IT::parallel, IT::parallel, IT::reduction},
      [&](OpBuilder &nb, Location l, ValueRange e) {
        Value p =
            arith::MulFOp::create(nb, l, e[0], castFloat(nb, l, e[1], f32));
        yieldValue(nb, l, arith::AddFOp::create(nb, l, e[2], p));
      });
  if (acc != out)
    roundInto(b, loc, acc, out);
  scratch.freeAll();
  return success();
}

} // namespace

FailureOr<func::FuncOp>
mlir::ein::buildBlockKernel(Operation *op, StringRef name, OpBuilder &builder) {
  SmallVector<Type> argTypes;
  for (Type type : llvm::concat<Type>(llvm::to_vector(op->getOperandTypes()),
                                      llvm::to_vector(op->getResultTypes()))) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !tensor.hasStaticShape())
      return op->emitOpError()
             << "has a " << type
             << " operand or result; a block kernel needs static tensors";
    // A gather also reads integer indices; an arg_reduce writes them; a
    // join-agg may read them (its region converts or compares them), and
    // an elementwise one may write integers or booleans (a mask several
    // ops read).
    bool result = type == op->getResult(0).getType() &&
                  llvm::is_contained(op->getResultTypes(), type);
    auto join = dyn_cast<JoinAggOp>(op);
    bool indices =
        (isa<GatherOp>(op) && type == op->getOperand(1).getType()) ||
        (isa<ArgReduceOp>(op) && type == op->getResult(0).getType()) ||
        (join && (!result || join.getAgg() == AggKind::None));
    if (!isa<FloatType>(tensor.getElementType()) && !indices)
      return op->emitOpError() << "has element type " << tensor.getElementType()
                               << "; block kernels read and write floats";
    argTypes.push_back(
        MemRefType::get(tensor.getShape(), tensor.getElementType()));
  }
  Location loc = op->getLoc();
  auto func = func::FuncOp::create(
      builder, loc, name, builder.getFunctionType(argTypes, TypeRange()));
  Block *entry = func.addEntryBlock();
  OpBuilder b = OpBuilder::atBlockBegin(entry);
  ValueRange args = entry->getArguments();
  LogicalResult built =
      TypeSwitch<Operation *, LogicalResult>(op)
          .Case([&](JoinAggOp join) { return joinAggKernel(join, args, b); })
          .Case([&](RmsNormOp norm) { return rmsNormKernel(norm, args, b); })
          .Case(
              [&](LayerNormOp norm) { return layerNormKernel(norm, args, b); })
          .Case([&](GatherOp gather) { return gatherKernel(gather, args, b); })
          .Case([&](ArgReduceOp a) { return argReduceKernel(a, args, b); })
          .Case([&](ConvOp conv) {
            ArrayRef<int64_t> f =
                cast<MemRefType>(args[1].getType()).getShape();
            bool last = conv.getLayout() == "nhwc";
            int64_t window[2] = {f[last ? 0 : 2], f[last ? 1 : 3]};
            return windowKernel(
                conv, args[0], args[1], args[2], window, conv.getLayout(),
                AggKind::Add, conv.getStrides(), conv.getDilations(),
                conv.getPadLow(), conv.getPadHigh(), conv.getGroupCount(), b);
          })
          .Case([&](PoolOp pool) {
            return windowKernel(
                pool, args[0], Value(), args[1], pool.getWindow(),
                pool.getLayout(), pool.getKind(), pool.getStrides(),
                pool.getDilations(), pool.getPadLow(), pool.getPadHigh(),
                /*groups=*/1, b);
          })
          .Case([&](SoftmaxOp s) { return softmaxKernel(s, args, b); })
          .Case([&](AttentionOp a) { return attentionKernel(a, args, b); })
          .Default([](Operation *other) {
            return other->emitOpError() << "has no block kernel form";
          });
  if (failed(built)) {
    func.erase();
    return failure();
  }
  func::ReturnOp::create(b, loc);
  return func;
}

ModuleOp mlir::ein::findKernelsModule(ModuleOp module) {
  for (auto nested : module.getBody()->getOps<ModuleOp>())
    if (nested.getSymName() == kKernelsModuleName)
      return nested;
  return nullptr;
}

/// What a kernel computes, whatever its name: its printed form under a
/// fixed name, and how it uses each argument. Two blocks with one key may
/// call one kernel.
static std::string kernelKey(func::FuncOp kernel,
                             const ::ein::KernelSignature &signature) {
  StringAttr name = kernel.getSymNameAttr();
  kernel.setSymName("kernel");
  std::string key;
  llvm::raw_string_ostream os(key);
  // Numbered on its own (a kernel is isolated from above, so its names are
  // the same): numbering the whole module for every kernel costs the
  // program's size squared.
  kernel.print(os, OpPrintingFlags().printGenericOpForm().useLocalScope());
  kernel.setSymNameAttr(name);
  for (const ::ein::SignatureArg &arg : signature.args)
    os << "|" << static_cast<int>(arg.access);
  return key;
}

FailureOr<ModuleOp> mlir::ein::outlineBlockKernels(ModuleOp module,
                                                   ::ein::Backend backend,
                                                   bool remarks) {
  if (findKernelsModule(module))
    return module.emitError()
           << "already has an @ein_kernels module; block kernels are "
              "built once";
  FailureOr<func::FuncOp> func = selectProgramFunction(module, "");
  if (failed(func))
    return failure();
  OpBuilder builder(module.getContext());
  builder.setInsertionPointToEnd(module.getBody());
  auto kernels =
      ModuleOp::create(builder, module.getLoc(), StringRef(kKernelsModuleName));
  kernels->setAttr(EinDialect::getKernelTargetAttrName(),
                   builder.getStringAttr(::ein::backendName(backend)));
  builder.setInsertionPointToEnd(kernels.getBody());
  int count = 0;
  ::ein::KernelSignatures signatures;
  // Each distinct kernel's name, by what it computes.
  llvm::StringMap<std::string> kernelByKey;
  // One remark per source op (its device blocks share its location).
  llvm::DenseSet<Location> told;
  WalkResult walked = func->walk([&](Operation *op) {
    if (!needsBlockKernel(op, backend))
      return WalkResult::advance();
    if (remarks && !told.contains(op->getLoc())) {
      std::string why, what;
      if (auto attention = dyn_cast<AttentionOp>(op)) {
        why = whyNotLibraryAttention(attention, backend);
        what = "attention runs as generated kernels, with its scores in "
               "memory, not as the fused attention: ";
      } else if (auto join = dyn_cast<JoinAggOp>(op)) {
        why = whyNotLibraryGemm(join);
        what = "this product runs as a generated kernel, not a library "
               "gemm: ";
      } else if (auto conv = dyn_cast<ConvOp>(op);
                 conv && getTargetBackend(backend).hasLibraryConv()) {
        why = whyNotLibraryConv(conv, backend);
        what = "this convolution runs as a generated kernel, not cuDNN's: ";
      }
      if (!why.empty()) {
        told.insert(op->getLoc());
        op->emitRemark() << what << why;
      }
    }
    std::string name = "ein_kernel_" + std::to_string(count);
    FailureOr<func::FuncOp> kernel = buildBlockKernel(op, name, builder);
    if (failed(kernel))
      return WalkResult::interrupt();
    ::ein::KernelSignature signature;
    for (auto [i, type] : llvm::enumerate(kernel->getArgumentTypes())) {
      FailureOr<::ein::SignatureArg> arg =
          signatureArg(type, i < op->getNumOperands() ? ::ein::Access::Read
                                                      : ::ein::Access::Write);
      if (failed(arg)) {
        op->emitOpError() << "has a kernel argument of type " << type
                          << ", which a kernel signature cannot describe";
        return WalkResult::interrupt();
      }
      signature.args.push_back(std::move(*arg));
    }
    // Blocks that compute the same thing (an op's even blocks on every
    // GPU, the same op in every layer) share one kernel: it is compiled
    // once, not once per block.
    std::string key = kernelKey(*kernel, signature);
    auto [it, added] = kernelByKey.try_emplace(key, name);
    if (added) {
      ++count;
      signatures[name] = std::move(signature);
    } else {
      kernel->erase();
    }
    op->setAttr(EinDialect::getKernelAttrName(),
                builder.getStringAttr(it->second));
    return WalkResult::advance();
  });
  if (walked.wasInterrupted())
    return failure();
  kernels->setAttr(
      EinDialect::getKernelSignaturesAttrName(),
      builder.getStringAttr(::ein::writeKernelSignatures(signatures)));
  return kernels;
}
