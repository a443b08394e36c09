//===- BuildGraph.cpp - ein IR to the planner's graph -------------------===//

#include "Einsummable/Plan/BuildGraph.h"

#include "Einsummable/Dialect/Ein/IR/EinGemm.h"

#include "Einsummable/Planner/Sharding.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace mlir::ein;
namespace planner = ::ein::planner;

namespace {

int64_t elementBytes(Type type) {
  return std::max<int64_t>(1, (type.getIntOrFloatBitWidth() + 7) / 8);
}

/// What runs `op`'s join blocks (Graph.h KernelKind): a library gemm's
/// loops where the CUDA backend's gemm matcher takes the join-agg (the batch
/// of an operand that has none folded into the rows, as the runtime folds
/// it), attention's fixed loops.
void classifyKernel(Operation *op, planner::Op &node) {
  if (isa<AttentionOp>(op)) {
    node.kernel = planner::KernelKind::Attention;
    return;
  }
  if (isa<ReshapeOp>(op)) {
    node.kernel = planner::KernelKind::InPlace;
    return;
  }
  if (isa<SliceOp, ConcatOp>(op)) {
    node.kernel = planner::KernelKind::Touch;
    return;
  }
  auto join = dyn_cast<JoinAggOp>(op);
  if (!join || failed(matchLibraryGemm(join)))
    return;
  ArrayRef<int64_t> out = join.getOutputIndices();
  node.kernel = planner::KernelKind::Gemm;
  node.gemm.m = out[out.size() - 2];
  node.gemm.n = out.back();
  node.gemm.k = join.getAggregatedLoops().front();
  bool bothBatched = join.getIndicesOfInput(0).size() > 2 &&
                     join.getIndicesOfInput(1).size() > 2;
  for (int64_t l : out.drop_back(2))
    (bothBatched ? node.gemm.batch : node.gemm.rows).push_back(l);
}

std::vector<std::string> loopNames(SpecOpInterface op) {
  SmallVector<std::string> names = op.getLoopNames();
  return std::vector<std::string>(names.begin(), names.end());
}

class GraphBuilder {
public:
  explicit GraphBuilder(const planner::TargetInfo &target) : target(target) {}

  FailureOr<PlannerGraph> run(func::FuncOp func) {
    for (auto [i, arg] : llvm::enumerate(func.getArguments())) {
      bool weight =
          func.getArgAttr(i, EinDialect::getWeightAttrName()) != nullptr;
      if (failed(addValue(func, arg, "arg" + std::to_string(i),
                          weight ? planner::ValueKind::Weight
                                 : planner::ValueKind::Activation)))
        return failure();
    }
    for (Operation &op : func.getBody().front()) {
      // In the planned form, exchanges between relations stand for the value
      // they move: the graph is the logical program either way.
      if (planned && isa<PartitionOp, RepartitionOp, AssembleOp>(op)) {
        values[op.getResult(0)] = values.lookup(op.getOperand(0));
        continue;
      }
      // A user's `shard` annotations: pins on the value, which they alias.
      if (isa<shard::ShardingOp>(op))
        continue;
      if (auto annotation = dyn_cast<shard::ShardOp>(op)) {
        if (failed(addPin(annotation)))
          return failure();
        continue;
      }
      if (auto ret = dyn_cast<func::ReturnOp>(op)) {
        for (Value v : ret.getOperands())
          result.graph.results.push_back(values.lookup(v));
        if (tieLayout && failed(tieResults(func, ret)))
          return failure();
        continue;
      }
      if (auto constant = dyn_cast<arith::ConstantOp>(op);
          constant && isa<RankedTensorType>(constant.getType())) {
        // Constants are materialised wherever they are needed, for free.
        if (failed(addValue(&op, constant.getResult(),
                            "v" + std::to_string(next++),
                            planner::ValueKind::Constant)))
          return failure();
        continue;
      }
      if (failed(addOp(&op)))
        return failure();
    }
    return std::move(result);
  }

  bool tieLayout = false;
  bool planned = false;
  int64_t devices = 0;

private:
  /// The parts a `shard.shard` annotation cuts its value into, as a pin:
  /// on the argument's arrival or the producer's result (a result
  /// annotation), or on every op that reads the annotated value
  /// (annotate_for_users).
  LogicalResult addPin(shard::ShardOp annotation) {
    Value src = annotation.getSrc();
    if (!values.count(src))
      return annotation.emitOpError()
             << "annotates a value the planner does not see";
    int v = values.lookup(src);
    auto sharding = annotation.getSharding().getDefiningOp<shard::ShardingOp>();
    auto grid = sharding ? SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(
                               sharding, sharding.getGridAttr())
                         : shard::GridOp();
    auto refuse = [&](const Twine &why) {
      return annotation.emitOpError() << "cannot be honoured as a pin on "
                                      << src.getType() << ": " << why;
    };
    if (!sharding || !grid)
      return refuse("its sharding is not a shard.sharding of a shard.grid in "
                    "this module");
    if (!sharding.getStaticHaloSizes().empty() ||
        !sharding.getDynamicHaloSizes().empty() ||
        !sharding.getDynamicShardedDimsOffsets().empty())
      return refuse("ein takes split axes and static sharded_dims_offsets, "
                    "not halo sizes or dynamic offsets");
    planner::GridSharding pin;
    pin.grid.assign(grid.getShape().begin(), grid.getShape().end());
    int64_t size = 1;
    for (int64_t s : pin.grid) {
      if (s < 1)
        return refuse("grid @" + grid.getSymName() + " has a dynamic size");
      size *= s;
    }
    if (devices > 0 && size != devices)
      return refuse("grid @" + grid.getSymName() + " has " + Twine(size) +
                    " devices; the target has " + Twine(devices));
    for (shard::GridAxesAttr axes : sharding.getSplitAxes().getAxes())
      pin.splitAxes.emplace_back(axes.asArrayRef().begin(),
                                 axes.asArrayRef().end());
    pin.offsets.assign(sharding.getStaticShardedDimsOffsets().begin(),
                       sharding.getStaticShardedDimsOffsets().end());
    std::string why;
    std::optional<planner::DimParts> parts =
        planner::shardingParts(pin, result.graph.values[v].shape, why);
    if (!parts)
      return refuse(why);
    values[annotation.getResult()] = v;
    if (annotation.getAnnotateForUsers()) {
      readPins[annotation.getResult()] = *parts;
      return success();
    }
    if (isa<BlockArgument>(src)) {
      result.graph.values[v].pinnedParts = *parts;
      return success();
    }
    for (planner::Op &op : result.graph.ops)
      if (op.output.value == v)
        op.pinnedOutput = *parts;
    return success();
  }

  /// Ties each result to the first activation argument of its type.
  LogicalResult tieResults(func::FuncOp func, func::ReturnOp ret) {
    for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
      BlockArgument match;
      for (BlockArgument arg : func.getArguments())
        if (arg.getType() == v.getType() &&
            !func.getArgAttr(arg.getArgNumber(),
                             EinDialect::getWeightAttrName())) {
          match = arg;
          break;
        }
      if (!match)
        return ret.emitOpError()
               << "result " << i << " (" << v.getType()
               << ") has no activation argument of its type to tie its "
                  "layout to";
      if (isa<BlockArgument>(v))
        return ret.emitOpError() << "result " << i
                                 << " is an argument itself; it already "
                                    "leaves in its own layout";
      result.graph.ties.push_back({values.lookup(match), values.lookup(v)});
    }
    return success();
  }

  LogicalResult addValue(Operation *where, Value value, std::string name,
                         planner::ValueKind kind) {
    auto type = dyn_cast<ShapedType>(value.getType());
    if (!type || (!planned && !isa<RankedTensorType>(type)) ||
        !type.hasStaticShape() || !type.getElementType().isIntOrFloat())
      return where->emitOpError() << "the planner takes ranked tensors of "
                                     "static shape, of integers or floats, got "
                                  << value.getType();
    planner::Value v;
    v.name = std::move(name);
    v.shape.assign(type.getShape().begin(), type.getShape().end());
    v.elementBytes = elementBytes(type.getElementType());
    v.kind = kind;
    values[value] = static_cast<int>(result.graph.values.size());
    result.graph.values.push_back(std::move(v));
    result.values.push_back(value);
    return success();
  }

  planner::Access access(Value value, std::vector<std::vector<int>> dims,
                         std::vector<int64_t> shift = {}) {
    return planner::Access{
        values.lookup(value), std::move(dims), std::move(shift), {}, {}};
  }

  LogicalResult addOp(Operation *op) {
    auto spec = dyn_cast<SpecOpInterface>(op);
    if (!spec || op->getNumResults() != 1 ||
        !(isa<RankedTensorType>(op->getResult(0).getType()) ||
          (planned && isa<RelationType>(op->getResult(0).getType()))))
      return op->emitOpError()
             << "cannot be planned; the planner takes logical ein ops on "
                "tensors";
    for (Value operand : op->getOperands())
      if (!values.count(operand))
        return op->emitOpError() << "uses a value defined outside the function";
    if (op->hasAttr("device"))
      return op->emitOpError() << "is a device-level block kernel; the planner "
                                  "takes the logical program";
    planner::Op node;
    node.name = op->getName().getStringRef().str() + " #" +
                std::to_string(result.graph.ops.size());
    SmallVector<int64_t> sizes = spec.getLoopSizes();
    node.loopSizes.assign(sizes.begin(), sizes.end());
    node.loopNames = loopNames(spec);
    node.cuttable.assign(sizes.size(), true);
    Value out = op->getResult(0);
    if (failed(addValue(op, out, "v" + std::to_string(next++),
                        planner::ValueKind::Intermediate)))
      return failure();

    // Operand and result accesses come from the dialect, so the planner
    // and the planned-form verifier read one definition.
    OpAccesses accesses = spec.getAccesses();
    auto convert = [&](Value value, const OperandAccess &access) {
      std::vector<std::vector<int>> dims;
      for (const auto &loops : access.dimLoops)
        dims.emplace_back(loops.begin(), loops.end());
      planner::Access converted = this->access(
          value, dims,
          std::vector<int64_t>(access.shift.begin(), access.shift.end()));
      converted.stride.assign(access.stride.begin(), access.stride.end());
      converted.extent.assign(access.extent.begin(), access.extent.end());
      return converted;
    };
    for (auto [operand, access] : llvm::zip(op->getOperands(), accesses.inputs))
      node.inputs.push_back(convert(operand, access));
    for (auto [i, operand] : llvm::enumerate(op->getOperands()))
      if (auto pin = readPins.find(operand); pin != readPins.end()) {
        node.pinnedInputs.resize(op->getNumOperands());
        node.pinnedInputs[i] = pin->second;
      }
    node.output = convert(out, accesses.result);
    node.accBytes = elementBytes(accesses.accumulator);

    // What only the planner needs: loops the kernels keep whole, and work.
    for (int64_t l : spec.getWholeLoops())
      node.cuttable[l] = false;
    if (accesses.aggregation == AggKind::OnlineSoftmax) {
      // Partial softmaxes combine only where the target's kernel returns
      // the log-sum-exp beside each partial (attention's key loop).
      llvm::SmallDenseSet<int64_t> kept;
      for (const auto &loops : accesses.result.dimLoops)
        kept.insert(loops.begin(), loops.end());
      for (int64_t l = 0, e = sizes.size(); l < e; ++l)
        if (!kept.contains(l))
          node.cuttable[l] = node.cuttable[l] && target.canCutAttentionKeys();
    }
    node.flopsPerPoint = spec.getFlopsPerPoint();
    classifyKernel(op, node);
    if (std::optional<CausalMask> mask = spec.getCausalMask()) {
      node.causal = true;
      node.attention = {static_cast<int>(mask->queryLoop),
                        static_cast<int>(mask->keyLoop), mask->queryOffset,
                        mask->keyOffset};
    }
    result.graph.ops.push_back(std::move(node));
    result.ops.push_back(op);
    return success();
  }

  const planner::TargetInfo &target;
  PlannerGraph result;
  llvm::DenseMap<Value, int> values;
  /// annotate_for_users results: how their readers must read them.
  llvm::DenseMap<Value, planner::DimParts> readPins;
  int64_t next = 0;
};

} // namespace

FailureOr<PlannerGraph>
mlir::ein::buildPlannerGraph(func::FuncOp func,
                             const planner::TargetInfo &target, bool tieLayout,
                             bool planned, int64_t devices) {
  if (func.isExternal() || !func.getBody().hasOneBlock())
    return func.emitOpError() << "the planner takes a function with one block";
  GraphBuilder builder(target);
  builder.tieLayout = tieLayout;
  builder.planned = planned;
  builder.devices = devices;
  return builder.run(func);
}
