//===- StagedPlan.h - A pipeline-staged plan in IR ---------------*- C++
//-*-===//
//
// The IR form of a staged plan (physical::StagedPlan, docs/distributed.md):
// the batch of every activation argument cut into micro-batches by
// `ein.slice`, each op that reads a batched value copied once per
// micro-batch (micro-batch-major, so that stage s works on micro-batch i
// while stage s + 1 works on i - 1), each batched result put back together
// by `ein.concat`; every op carries its `spec` (the stage's cut, the same
// for every copy) and, in `ein.place`, the GPUs of its stage that run its
// join blocks. ein-synthesize-exchanges honours `ein.place`, so the
// activations crossing a stage boundary become the exchange program's
// transfers between node groups.
//
//===----------------------------------------------------------------------===//

#ifndef EINSUMMABLE_PLAN_STAGEDPLAN_H
#define EINSUMMABLE_PLAN_STAGEDPLAN_H

#include "Einsummable/Physical/Pipeline.h"
#include "Einsummable/Plan/BuildGraph.h"
#include "Einsummable/Planner/Search.h"
#include "Einsummable/Planner/TargetInfo.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::ein {

/// Rewrites `func`, whose planner graph is `graph`, into `staged`'s IR form
/// (see the file comment), planned: `spec` and `ein.place` on every op. The
/// slices and concats get the specs the search finds cheapest for a stage's
/// devices around the copies' fixed ones. `options` gives the state cap and
/// the weights' replicability. Emits an error naming the op and fails where
/// the program cannot be staged (an op reading the batch's position through
/// `ein.index`).
LogicalResult applyStagedPlan(func::FuncOp func, const PlannerGraph &graph,
                              const ::ein::physical::StagedPlan &staged,
                              const ::ein::planner::TargetInfo &info,
                              const ::ein::planner::SearchOptions &options);

} // namespace mlir::ein

#endif // EINSUMMABLE_PLAN_STAGEDPLAN_H
