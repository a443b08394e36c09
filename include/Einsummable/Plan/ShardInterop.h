//===- ShardInterop.h - ein plans and upstream `shard` ----------*- C++ -*-===//
//
// The bridge between ein's plans and upstream MLIR's `shard` dialect: a
// plan written back onto the linalg program it was made from as
// `shard.grid` / `shard.sharding` / `shard.shard` (ein-export-shard,
// ein-compile --emit-shard). A user's `shard.shard` annotations are read as
// pins by buildPlannerGraph (lib/Plan/BuildGraph.cpp).
// docs/interop.md describes both.
//
//===----------------------------------------------------------------------===//

#ifndef EINSUMMABLE_PLAN_SHARDINTEROP_H
#define EINSUMMABLE_PLAN_SHARDINTEROP_H

#include "Einsummable/Planner/Search.h"
#include "Einsummable/Planner/Sharding.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir::ein {

/// Gives every op in `module`'s function bodies a location naming its
/// position (a NameLoc "ein.source#N" around its own), so that the ops
/// importing and planning a clone of `module` make still say which source
/// ops they stand for. untagSources restores the locations.
void tagSources(ModuleOp module);
void untagSources(ModuleOp module);

/// Writes the plan of `planned` (a tagged clone of `source`, imported and
/// decomposed: every op has its `spec`) onto `source` (tagged) as upstream
/// `shard` annotations: a `shard.grid` per grid used, the arrival sharding
/// of every charged argument whose plan `options` (ein-decompose's) gives
/// it one, the sharding of every value an op's plan fixes (after
/// aggregation) and, annotate_for_users, the sharding each op reads its
/// operands in. Values `source` already annotates (pins) keep their
/// annotations as written.
LogicalResult annotateWithPlan(ModuleOp source, ModuleOp planned,
                               const ::ein::planner::SearchOptions &options);

} // namespace mlir::ein

#endif // EINSUMMABLE_PLAN_SHARDINTEROP_H
