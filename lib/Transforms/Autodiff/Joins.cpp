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
