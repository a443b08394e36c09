//===- FuseBlocks.cpp - ein-fuse-blocks -----------------------------------===//
//
// Fuses a device-level elementwise block into its only reader on the same
// GPU, when the reader reads it one to one: the producer's scalar is
// computed inside the reader's region (rounded as the producer would have
// stored it), so one kernel reads the producer's inputs directly.
//
//===----------------------------------------------------------------------===//

#include "Einsummable/Dialect/Ein/IR/EinOps.h"
#include "Einsummable/Program/ExportProgram.h"
#include "Einsummable/Transforms/Passes.h"

#include "mlir/IR/IRMapping.h"

namespace mlir::ein {
#define GEN_PASS_DEF_EINFUSEBLOCKS
#include "Einsummable/Transforms/Passes.h.inc"
} // namespace mlir::ein

using namespace mlir;
using namespace mlir::ein;

namespace {

/// For each of `producer`'s loops, the loop of `consumer` that reads it
/// through input `operand`, if `consumer` reads the producer one to one.
std::optional<SmallVector<int64_t>>
loopMap(JoinAggOp producer, JoinAggOp consumer, unsigned operand) {
  ArrayRef<int64_t> reads = consumer.getIndicesOfInput(operand);
  llvm::SmallDenseSet<int64_t> distinct(reads.begin(), reads.end());
  if (distinct.size() != reads.size() ||
      int64_t(distinct.size()) != consumer.getNumLoops())
    return std::nullopt;
  SmallVector<int64_t> map(producer.getNumLoops(), -1);
  for (auto [d, loop] : llvm::enumerate(producer.getOutputIndices()))
    map[loop] = reads[d];
  if (llvm::is_contained(map, -1))
    return std::nullopt;
  return map;
}

bool fusible(JoinAggOp producer, JoinAggOp consumer) {
  return producer && producer.getAgg() == AggKind::None &&
         producer.getDevice() && producer.getDevice() == consumer.getDevice() &&
         producer->getResult(0).hasOneUse() &&
         !producer->hasAttr(EinDialect::getKernelAttrName());
}

/// `consumer` with its input `operand` (produced by `producer`) replaced by
/// the producer's own inputs and scalar computation.
JoinAggOp fuse(JoinAggOp producer, JoinAggOp consumer, unsigned operand,
               ArrayRef<int64_t> map) {
  OpBuilder b(consumer);
  Location loc = consumer.getLoc();
  auto fused = cast<JoinAggOp>(b.clone(*consumer));

  // Inputs: the consumer's but `operand`, then the producer's.
  SmallVector<Value> inputs;
  SmallVector<Attribute> lists;
  for (auto [i, input] : llvm::enumerate(consumer.getInputs()))
    if (i != operand) {
      inputs.push_back(input);
      lists.push_back(b.getDenseI64ArrayAttr(consumer.getIndicesOfInput(i)));
    }
  for (auto [j, input] : llvm::enumerate(producer.getInputs())) {
    SmallVector<int64_t> indices;
    for (int64_t loop : producer.getIndicesOfInput(j))
      indices.push_back(map[loop]);
    inputs.push_back(input);
    lists.push_back(b.getDenseI64ArrayAttr(indices));
  }
  fused->setOperands(inputs);
  fused.setInputIndicesAttr(b.getArrayAttr(lists));

  // The region: the producer's scalar first, then the consumer's.
  Block &body = fused.getJoin().front();
  Block &source = producer.getJoin().front();
  IRMapping mapping;
  for (BlockArgument arg : source.getArguments())
    mapping.map(arg, body.addArgument(arg.getType(), arg.getLoc()));
  OpBuilder r = OpBuilder::atBlockBegin(&body);
  SmallVector<int64_t> producerOffsets = producer.getBlockOffsets(),
                       consumerOffsets = consumer.getBlockOffsets();
  for (Operation &op : source.without_terminator()) {
    auto index = dyn_cast<IndexOp>(op);
    if (!index) {
      r.clone(op, mapping);
      continue;
    }
    // The producer's loop, read as the consumer's loop it maps to, shifted
    // between the two blocks' whole-tensor coordinates.
    int64_t loop = index.getDim(), into = map[loop];
    Value value = IndexOp::create(r, index.getLoc(), into);
    int64_t shift = producerOffsets[loop] - consumerOffsets[into];
    if (shift != 0)
      value = arith::AddIOp::create(
          r, index.getLoc(), value,
          arith::ConstantIndexOp::create(r, index.getLoc(), shift));
    mapping.map(index.getResult(), value);
  }
  Value scalar =
      mapping.lookup(cast<YieldOp>(source.getTerminator()).getValues().front());
  // Stored in the producer's result type, as the separate block would be.
  Type stored = cast<ShapedType>(producer.getType()).getElementType();
  if (scalar.getType() != stored) {
    auto from = cast<FloatType>(scalar.getType());
    auto to = cast<FloatType>(stored);
    scalar = from.getWidth() > to.getWidth()
                 ? arith::TruncFOp::create(r, loc, to, scalar).getResult()
                 : arith::ExtFOp::create(r, loc, to, scalar).getResult();
  }
  body.getArgument(operand).replaceAllUsesWith(scalar);
  body.eraseArgument(operand);
  consumer->replaceAllUsesWith(fused);
  consumer->erase();
  producer->erase();
  return fused;
}

struct EinFuseBlocksPass
    : public mlir::ein::impl::EinFuseBlocksBase<EinFuseBlocksPass> {
  using Base::Base;

  void runOnOperation() override {
    FailureOr<func::FuncOp> func = selectProgramFunction(getOperation(), "");
    if (failed(func))
      return signalPassFailure();
    SmallVector<JoinAggOp> blocks;
    func->walk([&](JoinAggOp op) {
      if (op.getDevice())
        blocks.push_back(op);
    });
    // Program order: a consumer absorbs its producers, which absorbed
    // theirs before it.
    for (JoinAggOp consumer : blocks) {
      if (consumer->hasAttr(EinDialect::getKernelAttrName()))
        continue;
      bool changed = true;
      while (changed) {
        changed = false;
        for (auto [i, input] : llvm::enumerate(consumer.getInputs())) {
          auto producer = input.getDefiningOp<JoinAggOp>();
          if (!fusible(producer, consumer))
            continue;
          std::optional<SmallVector<int64_t>> map =
              loopMap(producer, consumer, i);
          if (!map)
            continue;
          consumer = fuse(producer, consumer, i, *map);
          changed = true;
          break;
        }
      }
    }
  }
};

} // namespace
