//===- RmsNorm.cpp - RMSNorm from one join and its sum of squares ---------===//
//
// ss = sum_i x * x; y = x * rsqrt(ss / n + eps) * w, the second one join as
// ein-import's elementwise fusion leaves it, becomes ein.rms_norm x, w eps.
//
//===----------------------------------------------------------------------===//

#include "FuseComposites.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

namespace mlir::ein::fuse_composites_detail {

bool fuseRmsNorm(JoinAggOp op) {
  auto type = cast<RankedTensorType>(op.getType());
  int64_t rank = type.getRank();
  if (rank == 0 || !isElementwise(op) || op.getInputs().size() != 3)
    return false;
  int64_t width = type.getShape().back();
  // Inputs by their indices: x whole, the sum of squares without the last
  // dimension, the weight along it alone.
  Value x, sumOfSquares, weight, xArg, ssArg, wArg;
  Block &body = op.getJoin().front();
  for (auto [i, input] : llvm::enumerate(op.getInputs())) {
    ArrayRef<int64_t> indices = op.getIndicesOfInput(i);
    Value arg = body.getArgument(i);
    if (isIdentity(indices, rank) && !x)
      x = input, xArg = arg;
    else if (isIdentityWithout(indices, rank, rank - 1) && !sumOfSquares)
      sumOfSquares = input, ssArg = arg;
    else if (indices == ArrayRef<int64_t>{rank - 1} && !weight)
      weight = input, wArg = arg;
    else
      return false;
  }
  // Its body: x * w * rsqrt(m), or x * w / sqrt(m), m = ss * (1 / n) + eps.
  Product product = productOf(yieldedValue(op));
  if (product.coefficient != 1 || product.factors.size() != 3 ||
      product.powerOf(xArg) != 1 || product.powerOf(wArg) != 1)
    return false;
  Value root;
  for (auto [leaf, power] : product.factors)
    if (leaf != xArg && leaf != wArg) {
      if (power == 1)
        if (auto rsqrt = leaf.getDefiningOp<math::RsqrtOp>())
          root = rsqrt.getOperand();
      if (power == -1)
        if (auto sqrt = leaf.getDefiningOp<math::SqrtOp>())
          root = sqrt.getOperand();
    }
  auto add = root ? stripFloatCasts(root).getDefiningOp<arith::AddFOp>()
                  : arith::AddFOp();
  if (!add)
    return false;
  std::optional<double> eps = constantOf(add.getRhs());
  Value mean = add.getLhs();
  if (!eps) {
    eps = constantOf(add.getLhs());
    mean = add.getRhs();
  }
  Product meanProduct = productOf(mean);
  if (!eps || !(*eps > 0) || !meanProduct.hasFactors({{ssArg, 1}}) ||
      std::abs(meanProduct.coefficient * width - 1) > 1e-6)
    return false;
  // The sum of squares of the same x, used only here.
  auto ss = sumOfSquares.getDefiningOp<JoinAggOp>();
  if (!ss || !sumOfSquares.hasOneUse() || !isLogical(ss) ||
      ss.getAgg() != AggKind::Add || ss.getInputs().size() != 1 ||
      ss.getInputs()[0] != x || !isIdentity(ss.getIndicesOfInput(0), rank) ||
      !isIdentityWithout(ss.getOutputIndices(), rank, rank - 1))
    return false;
  Product square = productOf(yieldedValue(ss));
  if (square.coefficient != 1 ||
      !square.hasFactors({{ss.getJoin().front().getArgument(0), 2}}))
    return false;
  auto wType = cast<RankedTensorType>(weight.getType());
  if (x.getType() != type || wType.getElementType() != type.getElementType())
    return false;
  OpBuilder builder(op);
  auto norm = RmsNormOp::create(builder, op.getLoc(), x, weight, *eps);
  op.getResult().replaceAllUsesWith(norm.getResult());
  eraseIfDead({op, ss});
  return true;
}

} // namespace mlir::ein::fuse_composites_detail
