//===- JoinRegions.cpp - reading join regions -----------------------------===//
//
// What the composite matchers share for reading join regions as arithmetic:
// constants seen through casts, a scalar as a product of powers of leaves,
// identity index lists, elementwise and unplanned join-aggs, sole users, and
// the erasure of the ops a fused composite replaced.
//
//===----------------------------------------------------------------------===//

#include "FuseComposites.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

namespace mlir::ein::fuse_composites_detail {

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

void Product::multiply(Value leaf, int power) {
  for (auto &[v, p] : factors)
    if (v == leaf) {
      p += power;
      return;
    }
  factors.push_back({leaf, power});
}

void Product::multiply(const Product &other, int power) {
  coefficient *= power > 0 ? other.coefficient : 1 / other.coefficient;
  for (auto [v, p] : other.factors)
    multiply(v, p * power);
}

int Product::powerOf(Value leaf) const {
  for (auto [v, p] : factors)
    if (v == leaf)
      return p;
  return 0;
}

bool Product::hasFactors(ArrayRef<std::pair<Value, int>> want) const {
  unsigned nonzero = 0;
  for (auto [v, p] : factors)
    nonzero += p != 0;
  return nonzero == want.size() &&
         llvm::all_of(want, [&](std::pair<Value, int> w) {
           return powerOf(w.first) == w.second;
         });
}

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

bool isIdentity(ArrayRef<int64_t> indices, int64_t rank) {
  if (int64_t(indices.size()) != rank)
    return false;
  for (auto [i, loop] : llvm::enumerate(indices))
    if (loop != int64_t(i))
      return false;
  return true;
}

bool isIdentityWithout(ArrayRef<int64_t> indices, int64_t rank, int64_t dim) {
  SmallVector<int64_t> want;
  for (int64_t i = 0; i < rank; ++i)
    if (i != dim)
      want.push_back(i);
  return indices == ArrayRef<int64_t>(want);
}

bool isLogical(JoinAggOp op) { return !op.getSpec() && !op.getDevice(); }

bool isElementwise(JoinAggOp op) {
  return isLogical(op) && op.getAgg() == AggKind::None &&
         isIdentity(op.getOutputIndices(),
                    cast<ShapedType>(op.getType()).getRank());
}

Operation *soleUser(Value v) {
  return v.hasOneUse() ? *v.getUsers().begin() : nullptr;
}

void eraseIfDead(ArrayRef<Operation *> ops) {
  for (Operation *op : ops)
    if (op && op->use_empty())
      op->erase();
}

} // namespace mlir::ein::fuse_composites_detail
