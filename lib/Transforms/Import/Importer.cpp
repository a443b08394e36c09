//===- Importer.cpp - ein-import's driver ---------------------------------===//
//
// The importer's run over one function, in order: linalg.softmax decomposed
// and named ops generalized, lookups imported, elementwise chains fused,
// each generic, fill and layout op imported, what is dead erased. Also the
// helpers the other pieces share: the aggregation a combine performs, its
// identity, the constant a fill writes.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::ein::import_detail {

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

LogicalResult Importer::run() {
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
  for (Operation *folded : foldedOps)
    if (folded->use_empty())
      folded->erase();
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

void Importer::foldReshapePairs() {
  SmallVector<ReshapeOp> reshapes;
  func.walk([&](ReshapeOp op) { reshapes.push_back(op); });
  for (ReshapeOp op : reshapes) {
    auto inner = op.getSource().getDefiningOp<ReshapeOp>();
    if (inner && inner.getSource().getType() == op.getType())
      op.getResult().replaceAllUsesWith(inner.getSource());
  }
}

void Importer::eraseDeadOps() {
  SmallVector<Operation *> ops;
  for (Operation &op : func.getBody().front().without_terminator())
    ops.push_back(&op);
  for (Operation *op : llvm::reverse(ops))
    if (op->use_empty() && isMemoryEffectFree(op))
      op->erase();
}

LogicalResult Importer::fuseElementwise() {
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
      apply.replaceAllUsesWith(
          arith::ConstantIndexOp::create(builder, apply.getLoc(), c.getValue())
              .getResult());
    } else {
      continue; // a floordiv or sum: refused below as it stands
    }
    apply.erase();
  }
  return success();
}

} // namespace mlir::ein::import_detail
