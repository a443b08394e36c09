//===- StagedPlan.cpp - A pipeline-staged plan in IR ----------------------===//

#include "Einsummable/Plan/StagedPlan.h"

#include "Einsummable/Dialect/Ein/IR/EinOps.h"
#include "Einsummable/Planner/Cost.h"
#include "ein/partition.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Verifier.h"

using namespace mlir;
using namespace mlir::ein;
namespace planner = ::ein::planner;
namespace physical = ::ein::physical;

namespace {

/// An op of the staged function: the op of the original it copies (-1 for
/// the slices and concats around the copies) and its stage.
struct Staged {
  int origin = -1;
  int stage = 0;
};

RankedTensorType withBatch(Type type, int dim, int64_t rows) {
  auto tensor = cast<RankedTensorType>(type);
  SmallVector<int64_t> shape(tensor.getShape());
  shape[dim] = rows;
  return RankedTensorType::get(shape, tensor.getElementType(),
                               tensor.getEncoding());
}

} // namespace

LogicalResult
mlir::ein::applyStagedPlan(func::FuncOp func, const PlannerGraph &pg,
                           const physical::StagedPlan &staged,
                           const planner::TargetInfo &info,
                           const planner::SearchOptions &options) {
  const planner::Graph &g = pg.graph;
  physical::ChunkLoops chunks;
  std::string error;
  if (staged.chunkDim == 1) {
    if (!physical::sequenceLoopsOf(g, chunks, error))
      return func.emitOpError() << "cannot be chunked: " << error;
  } else if (!physical::batchLoopsOf(g, chunks.loops, chunks.extent, error,
                                     &chunks.dims)) {
    return func.emitOpError() << "cannot be staged: " << error;
  } else {
    chunks.whole.assign(g.ops.size(), false);
    chunks.prefix.assign(g.ops.size(), -1);
  }
  const std::vector<int> &loops = chunks.loops, &dims = chunks.dims;
  int64_t batch = chunks.extent;
  int64_t microBatches = staged.microBatches;
  if (microBatches < 1 || batch % microBatches != 0 ||
      staged.stageOf.size() != g.ops.size() ||
      staged.specs.size() != g.ops.size() || staged.stageDevices < 1)
    return func.emitOpError() << "cannot be staged: the staged plan does not "
                                 "describe this function";
  int64_t rows = batch / microBatches;

  // Refusals first, so that a refused function is left as it was.
  // (buildPlannerGraph takes ops of one result only: each copy has one.)
  for (size_t o = 0; o < g.ops.size(); ++o) {
    if (loops[o] < 0)
      continue;
    Operation *op = pg.ops[o];
    WalkResult positional = op->walk([&](IndexOp index) {
      return int64_t(index.getDim()) == loops[o] ? WalkResult::interrupt()
                                                 : WalkResult::advance();
    });
    if (positional.wasInterrupted())
      return op->emitOpError()
             << "cannot be staged: it reads its batch position (ein.index "
             << loops[o] << "), which a micro-batch's copy would not know";
  }

  DenseMap<Operation *, Staged> stagedOps;
  for (size_t o = 0; o < g.ops.size(); ++o)
    if (loops[o] < 0 && !chunks.whole[o])
      stagedOps[pg.ops[o]] = {static_cast<int>(o), staged.stageOf[o]};
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  OpBuilder b(ret);
  DenseMap<Value, SmallVector<Value>> copies;
  // A prefix op's keys, their first i + 1 chunks put back together, by
  // (value, i).
  DenseMap<std::pair<Value, int64_t>, Value> prefixes;

  // The planner's value of an operand: an argument's number, or its
  // producer's result.
  auto valueOf = [&](Value value) -> int {
    if (auto arg = dyn_cast<BlockArgument>(value))
      return static_cast<int>(arg.getArgNumber());
    auto it = llvm::find(pg.ops, value.getDefiningOp());
    return it == pg.ops.end() ? -1 : g.ops[it - pg.ops.begin()].output.value;
  };
  // `value` cut into micro-batches (chunks) along `dim` on `stage`.
  auto sliceInto = [&](Value value, int dim, int stage) {
    auto type = cast<RankedTensorType>(value.getType());
    SmallVector<int64_t> offsets(type.getRank(), 0);
    SmallVector<int64_t> sizes(type.getShape());
    sizes[dim] = rows;
    for (int64_t i = 0; i < microBatches; ++i) {
      offsets[dim] = i * rows;
      auto slice =
          SliceOp::create(b, value.getLoc(), withBatch(type, dim, rows), value,
                          offsets, sizes, SpecAttr());
      copies[value].push_back(slice);
      stagedOps[slice] = {-1, stage};
    }
  };

  // Each batched activation argument (and, along the sequence, each weight
  // read along it), cut into micro-batches on the stage of its first
  // reader.
  for (BlockArgument arg : func.getArguments()) {
    int dim = dims[arg.getArgNumber()];
    if (dim < 0)
      continue;
    int stage = -1;
    for (size_t o = 0; o < g.ops.size() && stage < 0; ++o)
      for (const planner::Access &input : g.ops[o].inputs)
        if (input.value == int(arg.getArgNumber()))
          stage = staged.stageOf[o];
    sliceInto(arg, dim, std::max(stage, 0));
  }
  // Along the sequence, a value computed once and read along it (a mask
  // from a constant) is cut after its op, which runs once.
  for (size_t o = 0; o < g.ops.size(); ++o)
    if (chunks.keptOnceAndCut(g, o))
      sliceInto(pg.ops[o]->getResult(0), dims[g.ops[o].output.value],
                staged.stageOf[o]);

  // The batched ops in the staged plan's order (micro-batch by micro-batch,
  // or a chunked plan's ChunkOrder), as physical::microBatch and
  // sequenceChunks made them;
  // a whole op once, on its inputs' chunks put back together, its result
  // cut again.
  SmallVector<size_t> batched;
  for (size_t o = 0; o < g.ops.size(); ++o)
    if (loops[o] >= 0 || chunks.whole[o])
      batched.push_back(o);
  physical::CopyOrder order =
      !staged.copies.empty()
          ? staged.copies
          : physical::copyOrder(loops, microBatches,
                                staged.order != physical::ChunkOrder::Chunk,
                                &chunks.whole);
  for (auto [o, i] : order) {
    Operation *op = pg.ops[o];
    if (i < 0) {
      IRMapping map;
      for (Value operand : op->getOperands()) {
        auto found = copies.find(operand);
        if (found == copies.end() || map.contains(operand))
          continue;
        auto concat =
            ConcatOp::create(b, op->getLoc(), operand.getType(),
                             static_cast<uint64_t>(dims[valueOf(operand)]),
                             found->second, SpecAttr());
        stagedOps[concat] = {-1, staged.stageOf[o]};
        map.map(operand, concat.getResult());
      }
      Operation *copy = b.clone(*op, map);
      copy->removeAttr("spec");
      stagedOps[copy] = {static_cast<int>(o), staged.stageOf[o]};
      // The result's chunks stand for the original's, as a copy's do.
      sliceInto(copy->getResult(0), dims[g.ops[o].output.value],
                staged.stageOf[o]);
      SmallVector<Value> parts = copies.lookup(copy->getResult(0));
      copies.erase(copy->getResult(0));
      copies[op->getResult(0)] = std::move(parts);
      continue;
    }
    IRMapping map;
    for (auto [operand, access] :
         llvm::zip(op->getOperands(), g.ops[o].inputs)) {
      auto found = copies.find(operand);
      if (found == copies.end())
        continue;
      if (!chunks.readsPrefix(o, access) || i == 0) {
        map.map(operand, found->second[i]);
        continue;
      }
      // Chunk i of a prefix op reads the first i + 1 chunks of its keys.
      Value &joined = prefixes[{operand, i}];
      if (!joined) {
        int dim = dims[access.value];
        ConcatOp concat = ConcatOp::create(
            b, op->getLoc(), withBatch(operand.getType(), dim, (i + 1) * rows),
            static_cast<uint64_t>(dim),
            ArrayRef<Value>(found->second).take_front(i + 1), SpecAttr());
        stagedOps[concat] = {-1, staged.stageOf[o]};
        joined = concat.getResult();
      }
      map.map(operand, joined);
    }
    Operation *copy = b.clone(*op, map);
    copy->removeAttr("spec");
    if (chunks.prefix[o] >= 0) {
      // Its queries sit i chunks into the sequence.
      auto attention = cast<AttentionOp>(copy);
      attention.setQueryOffset(attention.getQueryOffset() + i * rows);
    }
    int dim = dims[g.ops[o].output.value];
    copy->getResult(0).setType(
        withBatch(op->getResult(0).getType(), dim, rows));
    // A slice's sizes are its result's shape.
    if (auto slice = dyn_cast<SliceOp>(copy)) {
      SmallVector<int64_t> sizes(slice.getSizes());
      sizes[dim] = rows;
      slice.setSizes(sizes);
    }
    // (Copies of one op need not come in chunk order: ChunkOrder.)
    SmallVector<Value> &chunksOf = copies[op->getResult(0)];
    chunksOf.resize(microBatches);
    chunksOf[i] = copy->getResult(0);
    stagedOps[copy] = {static_cast<int>(o), staged.stageOf[o]};
  }

  // Batched results, put back together on their producer's stage.
  for (OpOperand &operand : ret->getOpOperands()) {
    auto found = copies.find(operand.get());
    if (found == copies.end())
      continue;
    auto result = cast<OpResult>(operand.get());
    auto it = llvm::find(pg.ops, result.getOwner());
    size_t o = it - pg.ops.begin();
    auto concat =
        ConcatOp::create(b, ret.getLoc(), result.getType(),
                         static_cast<uint64_t>(dims[g.ops[o].output.value]),
                         found->second, SpecAttr());
    stagedOps[concat] = {-1, staged.stageOf[o]};
    operand.set(concat);
  }
  for (size_t o : llvm::reverse(batched)) {
    stagedOps.erase(pg.ops[o]);
    pg.ops[o]->erase();
  }
  if (failed(verify(func)))
    return failure();

  // Specs: the copies take their op's; the search cuts the slices and
  // concats around them for a stage's devices.
  FailureOr<PlannerGraph> graph = buildPlannerGraph(func, info);
  if (failed(graph))
    return failure();
  planner::SearchOptions within = options;
  within.devices = staged.stageDevices;
  within.onProgress = nullptr;
  within.allowedSpecs.clear();
  within.restriction = "within a pipeline stage";
  for (size_t o = 0; o < graph->ops.size(); ++o) {
    const Staged &s = stagedOps.lookup(graph->ops[o]);
    within.allowedSpecs.push_back(
        s.origin >= 0 ? std::vector<planner::Spec>{staged.specs[s.origin]}
                      : planner::enumerateSpecs(graph->graph.ops[o],
                                                staged.stageDevices));
  }
  planner::Plan plan = planner::search(graph->graph, within);
  if (!plan.feasible)
    return func.emitOpError() << "has no staged plan: " << plan.error;
  if (staged.dataflow)
    func->setAttr(EinDialect::getDataflowAttrName(),
                  UnitAttr::get(func.getContext()));
  for (size_t o = 0; o < graph->ops.size(); ++o) {
    Operation *op = graph->ops[o];
    int64_t blocks = ::ein::numBlocks(plan.specs[o]);
    int64_t first = stagedOps.lookup(op).stage * staged.stageDevices;
    SmallVector<int64_t> devices;
    for (int64_t j = 0; j < blocks; ++j)
      devices.push_back(first + j);
    op->setAttr("spec", SpecAttr::get(func.getContext(), plan.specs[o]));
    op->setAttr(EinDialect::getPlaceAttrName(),
                DenseI64ArrayAttr::get(func.getContext(), devices));
  }
  return success();
}
