//===- ShardInterop.cpp - ein plans and upstream `shard` ------------------===//

#include "Einsummable/Plan/ShardInterop.h"

#include "Einsummable/Dialect/Ein/IR/EinAttrs.h"
#include "Einsummable/Dialect/Ein/IR/EinDialect.h"
#include "Einsummable/Plan/BuildGraph.h"
#include "Einsummable/Planner/TargetInfo.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"

#include <map>

using namespace mlir;
using namespace mlir::ein;
namespace planner = ::ein::planner;

static constexpr llvm::StringLiteral kTag = "ein.source#";

void mlir::ein::tagSources(ModuleOp module) {
  int64_t next = 0;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal())
      continue;
    func.getBody().walk([&](Operation *op) {
      op->setLoc(NameLoc::get(
          StringAttr::get(module.getContext(), kTag + std::to_string(next++)),
          op->getLoc()));
    });
  }
}

/// The tag of a location tagSources made, or -1.
static int64_t tagOf(Location loc) {
  auto name = dyn_cast<NameLoc>(loc);
  if (!name || !name.getName().getValue().starts_with(kTag))
    return -1;
  int64_t n = -1;
  if (name.getName().getValue().drop_front(kTag.size()).getAsInteger(10, n))
    return -1;
  return n;
}

void mlir::ein::untagSources(ModuleOp module) {
  module.walk([](Operation *op) {
    if (tagOf(op->getLoc()) >= 0)
      op->setLoc(cast<NameLoc>(op->getLoc()).getChildLoc());
  });
}

/// Every tag inside `loc` (a fused location carries several).
static void collectTags(Location loc, llvm::SmallSetVector<int64_t, 4> &tags) {
  loc->walk([&](Location inner) {
    if (int64_t t = tagOf(inner); t >= 0)
      tags.insert(t);
    return WalkResult::advance();
  });
}

namespace {

/// The grids an annotated module uses, by shape: the source's own
/// `shard.grid`s where one has the shape, else `@ein_grid_AxB` (made once).
class Grids {
public:
  Grids(ModuleOp module) : module(module) {
    for (auto grid : module.getOps<shard::GridOp>())
      if (llvm::all_of(grid.getShape(), [](int64_t s) { return s > 0; })) {
        std::vector<int64_t> shape(grid.getShape().begin(),
                                   grid.getShape().end());
        if (!names.count(shape)) {
          names[shape] = grid.getSymName().str();
          userShapes.push_back(shape);
        }
      }
  }

  /// The source's grids, in order: tried before ein's own.
  const std::vector<std::vector<int64_t>> &preferred() const {
    return userShapes;
  }

  StringRef nameOf(const std::vector<int64_t> &shape) {
    auto it = names.find(shape);
    if (it != names.end())
      return it->second;
    std::string name = "ein_grid_";
    for (size_t i = 0; i < shape.size(); ++i)
      name += (i ? "x" : "") + std::to_string(shape[i]);
    OpBuilder builder(module.getContext());
    builder.setInsertionPointToStart(module.getBody());
    // After the grids already made, so they read in the order first used.
    for (auto grid : module.getOps<shard::GridOp>())
      builder.setInsertionPointAfter(grid);
    shard::GridOp::create(builder, module.getLoc(), name, shape);
    return names[shape] = name;
  }

private:
  ModuleOp module;
  std::map<std::vector<int64_t>, std::string> names;
  std::vector<std::vector<int64_t>> userShapes;
};

/// A `shard.sharding` op for `s` at the builder's insertion point.
Value buildSharding(OpBuilder &builder, Location loc, Grids &grids,
                    const planner::GridSharding &s) {
  SmallVector<shard::GridAxesAttr> axes;
  for (const std::vector<int64_t> &dim : s.splitAxes) {
    SmallVector<int16_t> a(dim.begin(), dim.end());
    axes.push_back(builder.getDenseI16ArrayAttr(a));
  }
  auto op = shard::ShardingOp::create(
      builder, loc,
      FlatSymbolRefAttr::get(builder.getContext(), grids.nameOf(s.grid)), axes);
  // Set by name: LLVM 22's builder taking both arrays passes the offsets as
  // halo sizes.
  op.setStaticShardedDimsOffsets(s.offsets);
  return op.getResult();
}

/// A use's value with result-style `shard.shard`s peeled off; null where an
/// annotate_for_users one already says how this user reads it.
Value peelShards(Value v) {
  while (auto s = v.getDefiningOp<shard::ShardOp>()) {
    if (s.getAnnotateForUsers())
      return Value();
    v = s.getSrc();
  }
  return v;
}

/// Whether `v` already carries a result-style annotation.
bool annotatedResult(Value v) {
  return llvm::any_of(v.getUsers(), [](Operation *user) {
    auto s = dyn_cast<shard::ShardOp>(user);
    return s && !s.getAnnotateForUsers();
  });
}

} // namespace

LogicalResult
mlir::ein::annotateWithPlan(ModuleOp source, ModuleOp planned,
                            const planner::SearchOptions &options) {
  auto target =
      planned->getAttrOfType<TargetAttr>(EinDialect::getTargetAttrName());
  if (!target)
    return planned.emitError() << "ein-export-shard: the planned module has "
                                  "no #ein.target";
  auto info = planner::getTargetInfo(target.getChip().str());
  Grids grids(source);
  OpBuilder builder(source.getContext());

  for (auto func : planned.getOps<func::FuncOp>()) {
    if (func.isExternal())
      continue;
    auto src = source.lookupSymbol<func::FuncOp>(func.getSymName());
    if (!src || src.getNumArguments() != func.getNumArguments())
      return func.emitOpError()
             << "has no counterpart of its signature in the source";
    FailureOr<PlannerGraph> graph = buildPlannerGraph(func, *info);
    if (failed(graph))
      return failure();
    std::vector<planner::Spec> specs;
    for (Operation *op : graph->ops) {
      auto spec = op->getAttrOfType<SpecAttr>("spec");
      if (!spec)
        return op->emitOpError() << "has no spec: ein-export-shard exports a "
                                    "planned program (run ein-decompose)";
      specs.emplace_back(spec.getParts().begin(), spec.getParts().end());
    }

    // Source ops by tag, and each value's place in source order.
    std::map<int64_t, Operation *> byTag;
    src.getBody().walk([&](Operation *op) {
      if (int64_t t = tagOf(op->getLoc()); t >= 0)
        byTag[t] = op;
    });

    // Planned values to source values: arguments by position; an op's
    // result to the result of one of the source ops it stands for (its
    // tags) that leaves that group, of its type, the last such.
    DenseMap<Value, Value> toSource;
    for (auto [p, s] : llvm::zip(func.getArguments(), src.getArguments()))
      toSource[p] = s;
    std::vector<SmallVector<Operation *>> groups(graph->ops.size());
    for (size_t i = 0; i < graph->ops.size(); ++i) {
      Operation *op = graph->ops[i];
      llvm::SmallSetVector<int64_t, 4> tags;
      collectTags(op->getLoc(), tags);
      llvm::SmallPtrSet<Operation *, 8> members;
      for (int64_t t : tags)
        if (auto it = byTag.find(t); it != byTag.end()) {
          groups[i].push_back(it->second);
          members.insert(it->second);
        }
      Value best;
      for (Operation *member : groups[i])
        for (Value r : member->getResults()) {
          if (r.getType() != op->getResult(0).getType())
            continue;
          bool leaves = llvm::any_of(r.getUsers(), [&](Operation *user) {
            return !members.contains(user);
          });
          if (leaves &&
              (!best || best.getDefiningOp()->isBeforeInBlock(member)))
            best = r;
        }
      if (best)
        toSource[op->getResult(0)] = best;
    }

    // What each annotation says, collected before any IR changes.
    std::vector<std::pair<Value, planner::GridSharding>> results;
    std::vector<std::pair<OpOperand *, planner::GridSharding>> reads;
    std::vector<std::pair<BlockArgument, planner::DimParts>> arrivals;
    planner::Plan plan = planner::evaluate(graph->graph, specs, options);
    for (BlockArgument arg : src.getArguments()) {
      if (!plan.feasible || arg.use_empty() || annotatedResult(arg))
        continue;
      const std::vector<planner::Placed> &layout =
          plan.layouts[arg.getArgNumber()];
      const std::vector<int64_t> &shape =
          graph->graph.values[arg.getArgNumber()].shape;
      if (std::optional<planner::DimParts> parts =
              planner::layoutParts(layout, shape))
        arrivals.push_back({arg, *parts});
    }
    for (size_t i = 0; i < graph->ops.size(); ++i) {
      Operation *op = graph->ops[i];
      planner::OpSharding s =
          planner::opSharding(graph->graph, graph->graph.ops[i], specs[i],
                              options.devices, grids.preferred());
      Value out = toSource.lookup(op->getResult(0));
      if (out && s.output && !annotatedResult(out))
        results.push_back({out, *s.output});
      for (auto [k, operand] : llvm::enumerate(op->getOperands())) {
        Value read = toSource.lookup(operand);
        if (!read || !s.inputs[k])
          continue;
        for (Operation *member : groups[i])
          for (OpOperand &use : member->getOpOperands())
            if (peelShards(use.get()) == read)
              reads.push_back({&use, *s.inputs[k]});
      }
    }

    // An argument arrives as the first op reading it in its parts reads
    // it (the search's arrival is some reader's layout): the same axes, so
    // no reshard stands between them.
    for (auto &[arg, parts] : llvm::reverse(arrivals)) {
      const std::vector<int64_t> &shape =
          graph->graph.values[arg.getArgNumber()].shape;
      std::optional<planner::GridSharding> chosen;
      for (auto &[use, sharding] : reads) {
        std::string why;
        if (peelShards(use->get()) == Value(arg) &&
            planner::shardingParts(sharding, shape, why) == parts) {
          chosen = sharding;
          break;
        }
      }
      results.push_back(
          {arg, chosen ? *chosen
                       : planner::valueSharding(parts, shape, options.devices,
                                                grids.preferred())});
    }
    // Results first: each value's uses then read the annotated one. (The
    // arguments' go to the block's start, last first, so they read in
    // order.)
    for (auto &[value, sharding] : results) {
      if (auto arg = dyn_cast<BlockArgument>(value))
        builder.setInsertionPointToStart(arg.getOwner());
      else
        builder.setInsertionPointAfter(value.getDefiningOp());
      Location loc = value.getLoc();
      Value s = buildSharding(builder, loc, grids, sharding);
      auto annotated = shard::ShardOp::create(builder, loc, value, s, false);
      value.replaceAllUsesExcept(annotated.getResult(), annotated);
    }
    for (auto &[use, sharding] : reads) {
      builder.setInsertionPoint(use->getOwner());
      Location loc = use->getOwner()->getLoc();
      Value s = buildSharding(builder, loc, grids, sharding);
      use->set(shard::ShardOp::create(builder, loc, use->get(), s, true)
                   .getResult());
    }
  }
  return success();
}
