//===- PlanModule.h - Plan a module for its target --------------*- C++ -*-===//
//
// The planning driver ein-decompose is a thin shell over: per function of a
// logical module, the whole-graph search for one join-agg spec per op under
// `config` (its strategy, memory limit, stages), the simulator's arbitration
// between candidate plans, the explanation, and the plan written onto the
// IR (a `spec` on every op; a staged or chunked plan's rewrite).
//
//===----------------------------------------------------------------------===//

#ifndef EINSUMMABLE_PLAN_PLANMODULE_H
#define EINSUMMABLE_PLAN_PLANMODULE_H

#include "Einsummable/Plan/PlanConfig.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir::ein {

/// Plans every function of `module` as `config` says: sets `spec` on each
/// op (and the function attributes later passes read: ein.tie_layout,
/// ein.weights_move, ein.dataflow, ein.planned_memory), rewrites it where a
/// staged or chunked plan is chosen, and writes the explanation asked for.
/// Emits a diagnostic at the op or function concerned and fails where no
/// plan exists (or none within the memory limit).
LogicalResult planModule(ModuleOp module, const PlanConfig &config);

} // namespace mlir::ein

#endif // EINSUMMABLE_PLAN_PLANMODULE_H
