//===- Windows.cpp - The adjoints of ein.conv and ein.pool ----------------===//
//
// A convolution's two adjoints are convolutions again, so they run on the
// same kernels (cuDNN's on CUDA) and the planner cuts them as it cuts the
// forward one:
//
//   d input  = conv(the adjoint dilated by the stride, the filter flipped
//              with its channels swapped), stride 1, the forward dilation;
//   d filter = conv(the input with batch and channels swapped, the adjoint
//              as the filter), stride the forward dilation, dilation the
//              forward stride.
//
// Groups stay groups: the data gradient's filter regroups the forward
// one's, and the filter gradient folds the batch into each group's
// channels. Everything is built in nchw (fchw filters); nhwc is permuted
// in and out.
//
// A pool is rewritten, before the sweep, as the windows it reads (strided
// slices, one per window position, stacked on a last dimension) and a
// max or sum join-agg over them: the same values, whose adjoint the
// reshape, slice, concat and join-agg rules give (ties of a max share the
// adjoint, as for amax).
//
//===----------------------------------------------------------------------===//

#include "Autodiff.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <cmath>

using namespace mlir;
using namespace mlir::ein;
using namespace mlir::ein::autodiff_detail;

namespace {

/// The reshape of `x` to `shape` that splits or merges dimension `dim`
/// (merging `dim` and `dim + 1`, or splitting `dim` in two).
Value reshapeAt(OpBuilder &b, Location loc, Value x, int64_t dim,
                ArrayRef<int64_t> shape) {
  RankedTensorType from = tensorType(x);
  auto to = from.clone(shape);
  int64_t high = std::max(from.getRank(), to.getRank());
  SmallVector<Attribute> groups;
  for (int64_t d = 0; d < high; ++d) {
    if (d == dim + 1)
      continue;
    if (d == dim)
      groups.push_back(b.getI64ArrayAttr({d, d + 1}));
    else
      groups.push_back(b.getI64ArrayAttr({d}));
  }
  return ReshapeOp::create(b, loc, to, x, b.getArrayAttr(groups), SpecAttr());
}

/// Dimension `dim` of `x` split into (`outer`, its size / `outer`).
Value splitDim(OpBuilder &b, Location loc, Value x, int64_t dim,
               int64_t outer) {
  SmallVector<int64_t> shape(tensorType(x).getShape());
  int64_t size = shape[dim];
  shape[dim] = size / outer;
  shape.insert(shape.begin() + dim, outer);
  return reshapeAt(b, loc, x, dim, shape);
}

/// Dimensions `dim` and `dim + 1` of `x` merged into one.
Value mergeDims(OpBuilder &b, Location loc, Value x, int64_t dim) {
  SmallVector<int64_t> shape(tensorType(x).getShape());
  shape[dim] *= shape[dim + 1];
  shape.erase(shape.begin() + dim + 1);
  return reshapeAt(b, loc, x, dim, shape);
}

/// `x` with its dimensions reordered: the result's dimension `j` is
/// `x`'s dimension `order[j]`.
Value permute(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> order) {
  if (llvm::equal(order, identity(order.size())))
    return x;
  RankedTensorType type = tensorType(x);
  SmallVector<int64_t> shape, read(order.size());
  for (auto [j, from] : llvm::enumerate(order)) {
    shape.push_back(type.getDimSize(from));
    read[from] = j;
  }
  return createJoin(
      b, loc, type.clone(shape), {x}, {read}, identity(order.size()),
      AggKind::None,
      [](OpBuilder &, ValueRange args, Type) -> Value { return args[0]; });
}

/// Every `stride`-th element of `x` along `dim`, from `offset`, `count` of
/// them (all within `x`'s dimension, rounded up to whole strides).
Value strided(OpBuilder &b, Location loc, Value x, int64_t dim, int64_t offset,
              int64_t stride, int64_t count) {
  x = sliceDim(b, loc, x, dim, offset, count * stride);
  if (stride == 1)
    return x;
  x = splitDim(b, loc, x, dim, count);
  x = sliceDim(b, loc, x, dim + 1, 0, 1);
  SmallVector<int64_t> shape(tensorType(x).getShape());
  shape.erase(shape.begin() + dim + 1);
  return reshapeAt(b, loc, x, dim, shape);
}

/// `x` with `stride - 1` zeros between its elements along `dim`.
Value dilated(OpBuilder &b, Location loc, Value x, int64_t dim,
              int64_t stride) {
  if (stride == 1)
    return x;
  int64_t size = tensorType(x).getDimSize(dim);
  SmallVector<int64_t> shape(tensorType(x).getShape());
  shape.insert(shape.begin() + dim + 1, 1);
  x = reshapeAt(b, loc, x, dim, shape);
  x = padDim(b, loc, x, dim + 1, 0, stride - 1, 0);
  x = mergeDims(b, loc, x, dim);
  return sliceDim(b, loc, x, dim, 0, (size - 1) * stride + 1);
}

/// An nchw ein.conv of `x` and the fchw filter `w` with padding `low` and
/// `high` per spatial dimension, any integers: what the op's attributes
/// cannot hold (negative, or as wide as the window's reach) is cut from or
/// added to `x` as zeros. `rows` and `columns` bound the result's spatial
/// size (what lies beyond is cut off).
Value conv(OpBuilder &b, Location loc, Value x, Value w,
           ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations,
           std::array<int64_t, 2> low, std::array<int64_t, 2> high,
           int64_t groups, std::array<int64_t, 2> bound) {
  ArrayRef<int64_t> kernel = tensorType(w).getShape().drop_front(2);
  SmallVector<int64_t> padLow(2), padHigh(2), out(2);
  for (int d = 0; d < 2; ++d) {
    int64_t reach = (kernel[d] - 1) * dilations[d] + 1;
    padLow[d] = std::clamp<int64_t>(low[d], 0, reach - 1);
    padHigh[d] = std::clamp<int64_t>(high[d], 0, reach - 1);
    x = padDim(b, loc, x, 2 + d, low[d] - padLow[d], high[d] - padHigh[d], 0);
    int64_t padded = tensorType(x).getDimSize(2 + d) + padLow[d] + padHigh[d];
    out[d] = (padded - reach) / strides[d] + 1;
  }
  RankedTensorType xt = tensorType(x);
  auto type =
      xt.clone({xt.getDimSize(0), tensorType(w).getDimSize(0), out[0], out[1]});
  Value result = ConvOp::create(b, loc, type, x, w, "nchw", strides, dilations,
                                padLow, padHigh, static_cast<uint64_t>(groups),
                                SpecAttr(), IntegerAttr());
  for (int d = 0; d < 2; ++d)
    result = sliceDim(b, loc, result, 2 + d, 0, std::min(out[d], bound[d]));
  return result;
}

/// The forward filter `w` ([G*Fg, Cg, kh, kw]) as the data gradient's:
/// [G*Cg, Fg, kh, kw], each window flipped, w'[g*Cg + c, f, i, j] =
/// w[g*Fg + f, c, kh-1-i, kw-1-j].
Value flippedFilter(OpBuilder &b, Location loc, Value w, int64_t groups) {
  ArrayRef<int64_t> shape = tensorType(w).getShape();
  int64_t fg = shape[0] / groups, cg = shape[1], kh = shape[2], kw = shape[3];
  Value grouped = splitDim(b, loc, w, 0, groups); // [G, Fg, Cg, kh, kw]
  auto type = tensorType(w).clone({groups, cg, fg, kh, kw});
  Value flipped;
  if (kh == 1 && kw == 1) {
    flipped = permute(b, loc, grouped, {0, 2, 1, 3, 4});
  } else {
    // Loops (g, c, f, i', j', i, j): the sum picks i = kh-1-i', j = kw-1-j'.
    flipped = createJoin(
        b, loc, type, {grouped}, {SmallVector<int64_t>{0, 2, 1, 5, 6}},
        identity(5), AggKind::Add,
        [&](OpBuilder &inner, ValueRange args, Type acc) -> Value {
          auto mirrored = [&](int64_t to, int64_t from, int64_t size) {
            auto index = [&](int64_t loop) -> Value {
              return IndexOp::create(inner, loc, inner.getIndexType(),
                                     inner.getI64IntegerAttr(loop));
            };
            Value sum =
                arith::AddIOp::create(inner, loc, index(to), index(from));
            return arith::CmpIOp::create(
                inner, loc, arith::CmpIPredicate::eq, sum,
                arith::ConstantIndexOp::create(inner, loc, size - 1));
          };
          Value hit = arith::AndIOp::create(inner, loc, mirrored(3, 5, kh),
                                            mirrored(4, 6, kw));
          return arith::SelectOp::create(inner, loc, hit,
                                         castFloat(inner, loc, args[0], acc),
                                         floatConstant(inner, loc, acc, 0));
        });
  }
  return mergeDims(b, loc, flipped, 0);
}

/// nhwc to nchw and hwcf to fchw, and back.
constexpr std::array<int64_t, 4> kToNchw = {0, 3, 1, 2}, kToNhwc = {0, 2, 3, 1},
                                 kToFchw = {3, 2, 0, 1}, kToHwcf = {2, 3, 1, 0};

} // namespace

ConvAdjoints autodiff_detail::convAdjoints(OpBuilder &b, ConvOp op,
                                           Value adjoint, bool wantInput,
                                           bool wantFilter) {
  Location loc = op.getLoc();
  bool nhwc = op.getLayout() == "nhwc";
  Value x = op.getInput(), w = op.getFilter(), dy = adjoint;
  if (nhwc) {
    x = permute(b, loc, x, kToNchw);
    w = permute(b, loc, w, kToFchw);
    dy = permute(b, loc, dy, kToNchw);
  }
  ArrayRef<int64_t> xs = tensorType(x).getShape(),
                    ws = tensorType(w).getShape();
  int64_t groups = op.getGroupCount();
  ArrayRef<int64_t> s = op.getStrides(), d = op.getDilations(),
                    pl = op.getPadLow();
  ConvAdjoints result;
  if (wantInput) {
    Value dyd = dy;
    std::array<int64_t, 2> low, high;
    for (int a = 0; a < 2; ++a) {
      dyd = dilated(b, loc, dyd, 2 + a, s[a]);
      int64_t reach = (ws[2 + a] - 1) * d[a] + 1;
      low[a] = reach - 1 - pl[a];
      high[a] = xs[2 + a] - tensorType(dyd).getDimSize(2 + a) + pl[a];
    }
    Value dx = conv(b, loc, dyd, flippedFilter(b, loc, w, groups), {1, 1}, d,
                    low, high, groups, {xs[2], xs[3]});
    result.input = nhwc ? permute(b, loc, dx, kToNhwc) : dx;
  }
  if (wantFilter) {
    // x as [Cg, G*N, H, W]: the batch summed within each group.
    Value xg;
    if (groups == 1) {
      xg = permute(b, loc, x, {1, 0, 2, 3});
    } else {
      xg = splitDim(b, loc, x, 1, groups); // [N, G, Cg, H, W]
      xg = mergeDims(b, loc, permute(b, loc, xg, {2, 1, 0, 3, 4}), 1);
    }
    Value dyf = permute(b, loc, dy, {1, 0, 2, 3}); // [F, N, OH, OW]
    ArrayRef<int64_t> ph = op.getPadHigh();
    Value dw = conv(b, loc, xg, dyf, d, s, {pl[0], pl[1]}, {ph[0], ph[1]},
                    groups, {ws[2], ws[3]}); // [Cg, F, kh, kw]
    dw = permute(b, loc, dw, {1, 0, 2, 3});
    result.filter = nhwc ? permute(b, loc, dw, kToHwcf) : dw;
  }
  return result;
}

Value autodiff_detail::expandPool(OpBuilder &b, PoolOp op) {
  Location loc = op.getLoc();
  bool nhwc = op.getLayout() == "nhwc";
  int64_t spatial[2] = {nhwc ? 1 : 2, nhwc ? 2 : 3};
  RankedTensorType resultType = tensorType(op.getResult());
  bool max = op.getKind() == AggKind::Max;
  double padding = max ? -INFINITY : 0;
  ArrayRef<int64_t> window = op.getWindow(), s = op.getStrides(),
                    d = op.getDilations(), pl = op.getPadLow();
  Value x = op.getInput();
  int64_t out[2] = {resultType.getDimSize(spatial[0]),
                    resultType.getDimSize(spatial[1])};
  // Padded so that every window position's strided slice fits.
  for (int a = 0; a < 2; ++a) {
    int64_t needed = (window[a] - 1) * d[a] + out[a] * s[a];
    int64_t size = tensorType(x).getDimSize(spatial[a]);
    x = padDim(b, loc, x, spatial[a], pl[a], needed - size - pl[a], padding);
  }
  SmallVector<Value> rows, windows;
  for (int64_t i = 0; i < window[0]; ++i)
    rows.push_back(strided(b, loc, x, spatial[0], i * d[0], s[0], out[0]));
  SmallVector<int64_t> stacked(resultType.getShape());
  stacked.push_back(1);
  for (Value row : rows)
    for (int64_t j = 0; j < window[1]; ++j) {
      Value one = strided(b, loc, row, spatial[1], j * d[1], s[1], out[1]);
      windows.push_back(reshapeAt(b, loc, one, 3, stacked));
    }
  stacked.back() = windows.size();
  Value all = windows.size() == 1
                  ? windows.front()
                  : ConcatOp::create(b, loc, resultType.clone(stacked), 4,
                                     windows, SpecAttr())
                        .getResult();
  return createJoin(
      b, loc, resultType, {all}, {identity(5)}, identity(4),
      max ? AggKind::Max : AggKind::Add,
      [](OpBuilder &, ValueRange args, Type) -> Value { return args[0]; });
}
