//===- BuildGraph.h - ein IR to the planner's graph -------------*- C++ -*-===//

#ifndef EINSUMMABLE_PLAN_BUILDGRAPH_H
#define EINSUMMABLE_PLAN_BUILDGRAPH_H

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
  /// Per graph value, the IR value it stands for (an argument, a tensor
  /// constant, an op's result).
  std::vector<Value> values;
};

/// Builds the graph of `func`: arguments marked ein.weight are weights, the
/// others activations; tensor constants are free like weights. With
/// `tieLayout`, each result is tied to the first activation argument of its
/// type (it must leave in the layout that argument arrived in). With
/// `planned`, `func` is in the planned form (ops on relations, with
/// partitions, repartitions and assembles, which stand for the values they
/// move) and the graph is that of its logical program. A user's
/// `shard.shard` annotations become pins (Graph.h) on the value they
/// annotate, checked against `devices` where it is not 0. Emits a
/// diagnostic on an op the planner cannot take (or an annotation it cannot
/// honour) and fails.
FailureOr<PlannerGraph>
buildPlannerGraph(func::FuncOp func, const ::ein::planner::TargetInfo &target,
                  bool tieLayout = false, bool planned = false,
                  int64_t devices = 0);

} // namespace mlir::ein

#endif // EINSUMMABLE_PLAN_BUILDGRAPH_H
