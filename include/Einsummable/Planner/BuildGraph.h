//===- BuildGraph.h - ein IR to the planner's graph -------------*- C++ -*-===//

#ifndef EINSUMMABLE_PLANNER_BUILDGRAPH_H
#define EINSUMMABLE_PLANNER_BUILDGRAPH_H

#include "Einsummable/Planner/Graph.h"
#include "Einsummable/Planner/TargetInfo.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <vector>

namespace mlir::ein {

/// The planner's graph of a logical function, and for each of its ops the
/// IR op it stands for.
struct PlannerGraph {
  ::ein::planner::Graph graph;
  std::vector<Operation *> ops;
};

/// Builds the graph of `func`: arguments marked ein.weight are weights, the
/// others activations; tensor constants are free like weights. Emits a
/// diagnostic on an op the planner cannot take and fails.
FailureOr<PlannerGraph>
buildPlannerGraph(func::FuncOp func, const ::ein::planner::TargetInfo &target);

} // namespace mlir::ein

#endif // EINSUMMABLE_PLANNER_BUILDGRAPH_H
