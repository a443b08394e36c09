//===- LowerPlan.h - A placed plan as device-level ein ----------*- C++ -*-===//
//
// What ein-synthesize-exchanges runs on each planned function: the plan the
// IR carries (each op's `spec`, a staged plan's `ein.place`) read back onto
// the planner's graph, the exchange program the physical optimizer builds
// for it (synthesized for `topology` where that simulates faster, or
// naive), and the function rewritten into device-level ein: per-GPU block
// kernels, transfers, aggregations and the assemblies of its results.
//
//===----------------------------------------------------------------------===//

#ifndef EINSUMMABLE_PLAN_LOWERPLAN_H
#define EINSUMMABLE_PLAN_LOWERPLAN_H

#include "Einsummable/Physical/Exchange.h"
#include "Einsummable/Physical/Placement.h"
#include "Einsummable/Plan/BuildGraph.h"

#include <vector>

namespace mlir::ein {

/// What lowering one function produced, for its report and trace.
struct LoweredPlan {
  /// The device program the lowered function runs.
  ::ein::physical::DeviceProgram program;
  /// Which ops' exchanges were lowered synthesized (all false: naive).
  std::vector<bool> synthesized;
  /// Where the lowered program runs each op's join blocks.
  ::ein::physical::Placement placement;
  /// Per movement, its transfer's place among the ein.transfer ops that
  /// land on its receiving GPU, in the lowered function's order (which its
  /// copy stream follows); -1 where no transfer carries it (its bytes
  /// forwarded from a part already there).
  std::vector<int64_t> copyOrder;
};

/// Lowers `func`, in the planned form, whose planner graph (built with
/// planned=true) is `graph`: with `topology`, the synthesized exchange
/// program for it (its blocks placed for the machine where `placeBlocks`,
/// its small transfers batched where `batch`), else the naive one. A
/// dataflow plan (`options.dataflow`) has its ops ordered as the simulated
/// step runs them. Emits a diagnostic and fails on a plan it cannot lower
/// (an op without a legal spec, a placement outside the target).
FailureOr<LoweredPlan> lowerPlan(func::FuncOp func, const PlannerGraph &graph,
                                 const ::ein::planner::Options &options,
                                 const ::ein::Topology *topology,
                                 bool placeBlocks, bool batch);

/// `choice`, made for inputs whose physical::choiceKey is `key`, as the
/// function attribute ein-synthesize-exchanges reads
/// (EinDialect::getExchangeChoiceAttrName()): lowerPlan with the same key
/// builds its program from it instead of choosing again.
DictionaryAttr exchangeChoiceAttr(MLIRContext *context, uint64_t key,
                                  const ::ein::physical::ProgramChoice &choice);

} // namespace mlir::ein

#endif // EINSUMMABLE_PLAN_LOWERPLAN_H
