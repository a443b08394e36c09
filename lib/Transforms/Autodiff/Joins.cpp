//===- Joins.cpp - Building join-aggs for gradients and updates -----------===//

#include "Autodiff.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::ein;
using namespace mlir::ein::autodiff_detail;

RankedTensorType autodiff_detail::tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

Type autodiff_detail::defaultAcc(Type element) {
  if (element.isF16() || element.isBF16())
    return Float32Type::get(element.getContext());
  return element;
}

SmallVector<int64_t> autodiff_detail::identity(int64_t rank) {
  return llvm::to_vector(llvm::seq<int64_t>(0, rank));
}

JoinAggOp autodiff_detail::createJoin(
    OpBuilder &b, Location loc, RankedTensorType type, ValueRange inputs,
    ArrayRef<SmallVector<int64_t>> indices, ArrayRef<int64_t> out, AggKind agg,
    function_ref<Value(OpBuilder &, ValueRange, Type)> body) {
  SmallVector<Attribute> lists;
  for (ArrayRef<int64_t> list : indices)
    lists.push_back(b.getDenseI64ArrayAttr(list));
  auto join =
      JoinAggOp::create(b, loc, type, inputs, b.getArrayAttr(lists), out, agg,
                        TypeAttr(), SpecAttr(), IntegerAttr());
  Block *block = new Block();
  join.getJoin().push_back(block);
  for (Value input : inputs)
    block->addArgument(tensorType(input).getElementType(), loc);
  OpBuilder inner = OpBuilder::atBlockEnd(block);
  Type acc = join.getAccType();
  YieldOp::create(
      inner, loc,
      castFloat(inner, loc, body(inner, block->getArguments(), acc), acc));
  return join;
}

Value autodiff_detail::fill(OpBuilder &b, Location loc, RankedTensorType type,
                            double x) {
  return createJoin(b, loc, type, {}, {}, identity(type.getRank()),
                    AggKind::None,
                    [&](OpBuilder &inner, ValueRange, Type acc) -> Value {
                      return floatConstant(inner, loc, acc, x);
                    });
}

RankedTensorType autodiff_detail::withDim(Value x, int64_t dim, int64_t size) {
  SmallVector<int64_t> shape(tensorType(x).getShape());
  shape[dim] = size;
  return tensorType(x).clone(shape);
}

Value autodiff_detail::sliceDim(OpBuilder &b, Location loc, Value x,
                                int64_t dim, int64_t offset, int64_t size) {
  RankedTensorType type = tensorType(x);
  if (offset == 0 && size == type.getDimSize(dim))
    return x;
  SmallVector<int64_t> offsets(type.getRank(), 0);
  offsets[dim] = offset;
  RankedTensorType result = withDim(x, dim, size);
  return SliceOp::create(b, loc, result, x, offsets, result.getShape(),
                         SpecAttr());
}

Value autodiff_detail::padDim(OpBuilder &b, Location loc, Value x, int64_t dim,
                              int64_t low, int64_t high, double value) {
  int64_t size = tensorType(x).getDimSize(dim);
  if (low < 0 || high < 0) {
    int64_t from = std::max<int64_t>(0, -low);
    int64_t to = size - std::max<int64_t>(0, -high);
    x = sliceDim(b, loc, x, dim, from, to - from);
    size = to - from;
  }
  low = std::max<int64_t>(low, 0);
  high = std::max<int64_t>(high, 0);
  if (!low && !high)
    return x;
  SmallVector<Value> parts;
  if (low)
    parts.push_back(fill(b, loc, withDim(x, dim, low), value));
  parts.push_back(x);
  if (high)
    parts.push_back(fill(b, loc, withDim(x, dim, high), value));
  return ConcatOp::create(b, loc, withDim(x, dim, low + size + high), dim,
                          parts, SpecAttr());
}
