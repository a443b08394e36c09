//===- FuseBlocks.cpp - ein-fuse-blocks -----------------------------------===//
//
// Fuses a device-level elementwise block into its only reader on the same
// GPU, when the reader reads it one to one: the producer's scalar is
// computed inside the reader's region (rounded as the producer would have
// stored it), so one kernel reads the producer's inputs directly.
//
//===----------------------------------------------------------------------===//

#include "Einsummable/Conversion/BlockKernels/BlockKernels.h"
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

/// Whether `consumer` reads its input `operand` one to one: every loop of
/// it indexes the input, none twice.
bool readsOneToOne(JoinAggOp consumer, unsigned operand) {
  ArrayRef<int64_t> reads = consumer.getIndicesOfInput(operand);
  llvm::SmallDenseSet<int64_t> distinct(reads.begin(), reads.end());
  return distinct.size() == reads.size() &&
         int64_t(distinct.size()) == consumer.getNumLoops();
}

/// Whether `producer` only copies its one input (a transpose, float casts
/// aside): a consumer reading it twice recomputes nothing but the read.
bool isCopy(JoinAggOp producer) {
  return producer.getInputs().size() == 1 &&
         yieldedValue(producer) == producer.getJoin().front().getArgument(0);
}

/// Whether `consumer` may take `producer` in although it does not read it
/// one to one: the producer is a copy, and the consumer no library gemm
/// (whose operands must stay in a layout the library takes).
bool mayReadTwice(JoinAggOp producer, JoinAggOp consumer) {
  return isCopy(producer) && failed(matchLibraryGemm(consumer));
}

/// For each of `producer`'s loops, the loop of `consumer` that reads it
/// through input `operand`, if `consumer` reads the producer one to one or
/// may read it twice.
std::optional<SmallVector<int64_t>>
loopMap(JoinAggOp producer, JoinAggOp consumer, unsigned operand) {
  if (!readsOneToOne(consumer, operand) && !mayReadTwice(producer, consumer))
    return std::nullopt;
  ArrayRef<int64_t> reads = consumer.getIndicesOfInput(operand);
  SmallVector<int64_t> map(producer.getNumLoops(), -1);
  for (auto [d, loop] : llvm::enumerate(producer.getOutputIndices()))
    map[loop] = reads[d];
  if (llvm::is_contained(map, -1))
    return std::nullopt;
  // Every loop of the fused op must still be read or written: a loop only
  // the producer's output had (a broadcast the consumer reduces) has no
  // size in the fused op.
  llvm::SmallDenseSet<int64_t> used(consumer.getOutputIndices().begin(),
                                    consumer.getOutputIndices().end());
  for (unsigned i = 0, e = consumer.getInputs().size(); i < e; ++i)
    if (i != operand) {
      ArrayRef<int64_t> reads = consumer.getIndicesOfInput(i);
      used.insert(reads.begin(), reads.end());
    }
  for (unsigned j = 0, e = producer.getInputs().size(); j < e; ++j)
    for (int64_t loop : producer.getIndicesOfInput(j))
      used.insert(map[loop]);
  if (int64_t(used.size()) != consumer.getNumLoops())
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

/// `producer`, whose one reader is `reshape`, an expansion, rebuilt to
/// compute the reshaped result itself: each loop whose result dimension the
/// reshape splits becomes one loop per part, and each input indexed by such
/// a loop is reshaped the same way (a view of the same bytes). A consumer
/// reading the reshape one to one then reads the producer one to one (a
/// transpose before RoPE's split of the head dimension). Null where it
/// cannot: a split loop read by ein.index, cut between blocks (a nonzero
/// block offset), or indexing an input twice.
JoinAggOp splitThroughReshape(JoinAggOp producer, ReshapeOp reshape) {
  auto to = cast<RankedTensorType>(reshape.getType());
  if (to.getRank() <= cast<ShapedType>(producer.getType()).getRank())
    return nullptr;
  ArrayRef<int64_t> out = producer.getOutputIndices();
  int64_t loops = producer.getNumLoops();
  SmallVector<int64_t> offsets = producer.getBlockOffsets();
  // Per loop of the producer: the loops it becomes and their sizes.
  SmallVector<SmallVector<int64_t>> becomes(loops), sizes(loops);
  for (int64_t l = 0; l < loops; ++l)
    becomes[l] = {l};
  SmallVector<int64_t> newOut;
  int64_t next = loops;
  for (auto [d, group] : llvm::enumerate(reshape.getReassociation())) {
    auto dims = cast<ArrayAttr>(group);
    int64_t loop = out[d];
    if (dims.size() > 1) {
      if (offsets[loop] != 0)
        return nullptr;
      becomes[loop].clear();
      for (auto [k, dim] : llvm::enumerate(dims)) {
        becomes[loop].push_back(k == 0 ? loop : next++);
        sizes[loop].push_back(to.getShape()[cast<IntegerAttr>(dim).getInt()]);
      }
    }
    llvm::append_range(newOut, becomes[loop]);
  }
  WalkResult indexed = producer.getJoin().walk([&](IndexOp index) {
    return becomes[index.getDim()].size() > 1 ? WalkResult::interrupt()
                                              : WalkResult::advance();
  });
  if (indexed.wasInterrupted())
    return nullptr;
  for (unsigned j = 0, e = producer.getInputs().size(); j < e; ++j) {
    llvm::SmallDenseSet<int64_t> seen;
    for (int64_t loop : producer.getIndicesOfInput(j))
      if (!seen.insert(loop).second && becomes[loop].size() > 1)
        return nullptr;
  }

  OpBuilder b(producer);
  SmallVector<Value> inputs;
  SmallVector<Attribute> lists;
  for (auto [j, input] : llvm::enumerate(producer.getInputs())) {
    ArrayRef<int64_t> indices = producer.getIndicesOfInput(j);
    auto type = cast<RankedTensorType>(input.getType());
    SmallVector<int64_t> newIndices, shape;
    SmallVector<Attribute> groups;
    for (auto [e, loop] : llvm::enumerate(indices)) {
      SmallVector<int64_t> group;
      if (becomes[loop].size() == 1) {
        group.push_back(shape.size());
        shape.push_back(type.getShape()[e]);
      } else {
        for (int64_t size : sizes[loop]) {
          group.push_back(shape.size());
          shape.push_back(size);
        }
      }
      groups.push_back(b.getI64ArrayAttr(group));
      llvm::append_range(newIndices, becomes[loop]);
    }
    if (int64_t(shape.size()) != type.getRank()) {
      auto viewType = RankedTensorType::get(shape, type.getElementType());
      auto view = ReshapeOp::create(b, reshape.getLoc(), viewType, input,
                                    b.getArrayAttr(groups), SpecAttr());
      if (Attribute device = reshape->getAttr("device"))
        view->setAttr("device", device);
      input = view.getResult();
    }
    inputs.push_back(input);
    lists.push_back(b.getDenseI64ArrayAttr(newIndices));
  }
  auto split = cast<JoinAggOp>(b.clone(*producer));
  split->setOperands(inputs);
  split.setInputIndicesAttr(b.getArrayAttr(lists));
  split.setOutputIndices(newOut);
  split.getResult().setType(to);
  if (producer->hasAttr(EinDialect::getLoopOffsetsAttrName())) {
    offsets.resize(next, 0);
    split->setAttr(EinDialect::getLoopOffsetsAttrName(),
                   b.getDenseI64ArrayAttr(offsets));
  }
  reshape.getResult().replaceAllUsesWith(split.getResult());
  reshape->erase();
  producer->erase();
  return split;
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
          // Through an expanding reshape (a view): the producer computes
          // the reshaped result itself.
          if (auto reshape = input.getDefiningOp<ReshapeOp>();
              reshape && reshape->hasOneUse()) {
            auto source = reshape.getSource().getDefiningOp<JoinAggOp>();
            if (fusible(source, consumer) &&
                (readsOneToOne(consumer, i) || mayReadTwice(source, consumer)))
              producer = splitThroughReshape(source, reshape);
          }
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
