//===- EinGemm.cpp - The gemm form of a join-agg -------------------------===//
//
// Which join-aggs are (batched, transposed) matmuls. A fact about the op,
// read by the planner's graph builder (what runs a join block), the gemm
// epilogue fusion, the block-kernel outliner and the bundle writer alike.
//
//===----------------------------------------------------------------------===//

#include "Einsummable/Dialect/Ein/IR/EinGemm.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::ein;

FailureOr<LibraryGemm> mlir::ein::matchLibraryGemm(JoinAggOp join) {
  if (join.getInputs().size() != 2 || join.getAgg() != AggKind::Add ||
      join.getAggregatedLoops().size() != 1)
    return failure();
  // The region: optional extensions, one product, yielded.
  Block &body = join.getJoin().front();
  Operation *product = nullptr;
  for (Operation &op : body.without_terminator()) {
    if (isa<arith::ExtFOp>(op))
      continue;
    if (!isa<arith::MulFOp>(op) || product)
      return failure();
    product = &op;
  }
  auto origin = [&](Value v) {
    while (auto ext = v.getDefiningOp<arith::ExtFOp>())
      v = ext.getIn();
    return v;
  };
  // The product may be yielded extended to the accumulator: a bf16 matmul
  // imported from linalg multiplies in bf16 and sums in f32. The library
  // forms the product exactly, which is at least as accurate.
  auto yield = cast<YieldOp>(body.getTerminator());
  if (!product || origin(yield.getValues().front()) != product->getResult(0))
    return failure();
  if (origin(product->getOperand(0)) != body.getArgument(0) ||
      origin(product->getOperand(1)) != body.getArgument(1))
    return failure();
  int64_t k = join.getAggregatedLoops().front();
  ArrayRef<int64_t> out = join.getOutputIndices(),
                    a = join.getIndicesOfInput(0),
                    b = join.getIndicesOfInput(1);
  if (out.size() < 2 || a.size() < 2 || b.size() < 2)
    return failure();
  int64_t i = out[out.size() - 2], j = out.back();
  ArrayRef<int64_t> batch = out.drop_back(2);
  LibraryGemm g;
  if (a[a.size() - 2] == i && a.back() == k)
    g.transposeA = false;
  else if (a[a.size() - 2] == k && a.back() == i)
    g.transposeA = true;
  else
    return failure();
  if (b[b.size() - 2] == k && b.back() == j)
    g.transposeB = false;
  else if (b[b.size() - 2] == j && b.back() == k)
    g.transposeB = true;
  else
    return failure();
  for (ArrayRef<int64_t> lead : {a.drop_back(2), b.drop_back(2)})
    if (!lead.empty() && lead != batch)
      return failure();
  return g;
}
