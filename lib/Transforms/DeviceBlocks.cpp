//===- DeviceBlocks.cpp - ein-device-blocks -------------------------------===//
//
// A thin shell over the planner's boxes and kernel times
// (Einsummable/Planner/Cost.h) and the block kernels of
// Einsummable/Plan/BlockKernel.h: one GPU's share of a plan written
// as a one-device program.
//
//===----------------------------------------------------------------------===//

#include "Einsummable/Dialect/Ein/IR/EinOps.h"
#include "Einsummable/Plan/BlockKernel.h"
#include "Einsummable/Plan/BuildGraph.h"
#include "Einsummable/Transforms/Passes.h"

#include "ein/partition.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <map>

namespace mlir::ein {
#define GEN_PASS_DEF_EINDEVICEBLOCKS
#include "Einsummable/Transforms/Passes.h.inc"
} // namespace mlir::ein

using namespace mlir;
using namespace mlir::ein;
namespace planner = ::ein::planner;

namespace {

using BoxKey = std::pair<std::vector<int64_t>, std::vector<int64_t>>;

/// Rewrites `func` into the blocks of `device` (-1: each op's slowest).
LogicalResult rewrite(func::FuncOp func, const PlannerGraph &pg,
                      int64_t devices, int64_t device) {
  const planner::Graph &g = pg.graph;
  std::vector<planner::Spec> specs;
  for (size_t o = 0; o < g.ops.size(); ++o) {
    Operation *op = pg.ops[o];
    auto spec = op->getAttrOfType<SpecAttr>("spec");
    if (!spec)
      return op->emitOpError() << "has no spec; ein-device-blocks takes a "
                                  "planned program (run ein-decompose first)";
    planner::Spec parts(spec.getParts().begin(), spec.getParts().end());
    if (!planner::isLegalSpec(g.ops[o], parts, devices))
      return op->emitOpError()
             << "spec " << spec << " is not legal on " << devices << " devices";
    specs.push_back(parts);
  }

  OpBuilder builder(func);
  auto blocks = func::FuncOp::create(builder, func.getLoc(), func.getName(),
                                     builder.getFunctionType({}, {}));
  Block *body = blocks.addEntryBlock();
  builder.setInsertionPointToStart(body);
  auto elementOf = [&](int value) {
    return cast<ShapedType>(pg.values[value].getType()).getElementType();
  };
  auto typeOf = [](const planner::Box &box, Type element) {
    std::vector<int64_t> sizes;
    for (size_t d = 0; d < box.begin.size(); ++d)
      sizes.push_back(box.end[d] - box.begin[d]);
    return RankedTensorType::get(sizes, element);
  };
  // Each op's whole (not partial) block result, by value and box.
  std::map<std::pair<int, BoxKey>, Value> produced;
  SmallVector<Value> results;
  double flops = 0, seconds = 0;
  for (size_t o = 0; o < g.ops.size(); ++o) {
    Operation *op = pg.ops[o];
    const planner::Op &node = g.ops[o];
    const planner::Spec &spec = specs[o];
    if (isa<SliceOp, ConcatOp>(op))
      continue;
    int64_t count = ::ein::numBlocks(spec), block = device;
    if (device < 0) {
      // The slowest block; of blocks predicted alike (launch-bound ones),
      // the one of most work.
      std::pair<double, double> slowest = {-1, -1};
      for (int64_t j = 0; j < count; ++j) {
        std::vector<int64_t> at = ::ein::delinearize(j, spec);
        std::pair<double, double> t = {planner::blockSeconds(g, node, spec, at),
                                       planner::blockFlops(node, spec, at)};
        if (t > slowest) {
          slowest = t;
          block = j;
        }
      }
    }
    if (block >= count)
      continue; // this GPU sits the op out
    std::vector<int64_t> coords = ::ein::delinearize(block, spec);
    flops += planner::blockFlops(node, spec, coords);
    seconds += planner::blockSeconds(g, node, spec, coords);
    SmallVector<Value> operands;
    planner::Box region;
    for (auto [i, access] : llvm::enumerate(node.inputs)) {
      planner::Box box = planner::accessBox(access, g, node, spec, coords);
      if (i == 0)
        region = box;
      if (box.volume() == 0) {
        operands.push_back(Value());
        continue;
      }
      auto it = produced.find({access.value, {box.begin, box.end}});
      operands.push_back(
          it != produced.end()
              ? it->second
              : body->addArgument(typeOf(box, elementOf(access.value)),
                                  op->getLoc()));
    }
    bool partial = planner::partialBlocks(node, spec);
    Type element = partial ? cast<SpecOpInterface>(op).getAccesses().accumulator
                           : elementOf(node.output.value);
    planner::Box out = planner::accessBox(node.output, g, node, spec, coords);
    Operation *kernel =
        cloneBlockKernel(builder, op, node, spec, coords, operands,
                         typeOf(out, element), region);
    // A logical join-agg has no loop offsets: one that reads its position
    // (`ein.index`) computes as if its block sat at the origin, the same
    // work.
    kernel->removeAttr(EinDialect::getLoopOffsetsAttrName());
    if (!partial)
      produced[{node.output.value, {out.begin, out.end}}] =
          kernel->getResult(0);
    results.push_back(kernel->getResult(0));
  }
  SmallVector<Value> leaves;
  for (Value v : results)
    if (v.use_empty())
      leaves.push_back(v);
  func::ReturnOp::create(builder, func.getLoc(), leaves);
  blocks.setFunctionType(builder.getFunctionType(
      body->getArgumentTypes(), ValueRange(leaves).getTypes()));
  blocks->setAttr(EinDialect::getBlockFlopsAttrName(),
                  builder.getF64FloatAttr(flops));
  blocks->setAttr(EinDialect::getBlockSecondsAttrName(),
                  builder.getF64FloatAttr(seconds));
  func.erase();
  return success();
}

struct EinDeviceBlocksPass
    : public mlir::ein::impl::EinDeviceBlocksBase<EinDeviceBlocksPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    TargetAttr target = requireTarget(module, "ein-device-blocks");
    if (!target)
      return signalPassFailure();
    if (device < -1 || device >= target.getDevices()) {
      module.emitError() << "device=" << int64_t(device)
                         << " is not a GPU of the target's "
                         << target.getDevices() << " (0 to "
                         << target.getDevices() - 1
                         << ", or -1 for each op's slowest block)";
      return signalPassFailure();
    }
    auto info = planner::getTargetInfo(target.getChip().str());
    SmallVector<func::FuncOp> funcs;
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal())
        funcs.push_back(func);
    for (func::FuncOp func : funcs) {
      FailureOr<PlannerGraph> graph = buildPlannerGraph(func, *info);
      if (failed(graph) ||
          failed(rewrite(func, *graph, target.getDevices(), device)))
        return signalPassFailure();
    }
    module->removeAttr(EinDialect::getTargetAttrName());
  }
};

} // namespace
