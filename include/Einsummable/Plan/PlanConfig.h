//===- PlanConfig.h - What a planning run is asked for ----------*- C++ -*-===//
//
// The options of a planning run, parsed once into enums and numbers and
// checked against the module's #ein.target: what ein-decompose hands to
// planModule. Spellings are parsed here (and in the planner's own parsers
// it calls), so the passes and drivers that build a config cannot disagree
// on them.
//
//===----------------------------------------------------------------------===//

#ifndef EINSUMMABLE_PLAN_PLANCONFIG_H
#define EINSUMMABLE_PLAN_PLANCONFIG_H

#include "Einsummable/Dialect/Ein/IR/EinAttrs.h"
#include "Einsummable/Planner/Search.h"
#include "Einsummable/Planner/Strategy.h"
#include "Einsummable/Planner/TargetInfo.h"

#include "ein/topology.h"

#include "mlir/IR/BuiltinOps.h"

#include <memory>
#include <string>

namespace mlir::ein {

/// The exchange programs an explanation simulates (and a lowering builds).
enum class ExchangeForm { Synthesized, Naive };

/// "synthesized" or "naive"; false where `name` is neither.
bool parseExchangeForm(llvm::StringRef name, ExchangeForm &form);
const char *exchangeFormName(ExchangeForm form);

/// What `stages` asks for: intra-op plans (off), whatever the simulator
/// finds fastest (auto), or S stages over M micro-batches (SxM; 1xM chunks
/// the batch, 1x1 is the intra-op plan as a dataflow program).
struct StagesChoice {
  enum class Kind { Off, Auto, Fixed };
  Kind kind = Kind::Off;
  int64_t stages = 0, microBatches = 0;

  /// Parses off, auto or SxM (S, M >= 1); false where `text` is none.
  static bool parse(llvm::StringRef text, StagesChoice &choice);
  /// 1x1: the intra-op plan, whatever its strategy, as a dataflow program.
  bool asWhole() const {
    return kind == Kind::Fixed && stages == 1 && microBatches == 1;
  }
  /// A staged or chunked plan is asked for or may be chosen.
  bool staging() const {
    return kind == Kind::Auto || (kind == Kind::Fixed && !asWhole());
  }
};

/// The raw option values of a planning run, as a pass or a driver holds
/// them (ein-decompose's options: Passes.td).
struct PlanOptions {
  bool weightsReplicable = true;
  int64_t stateCap = 131072;
  int64_t searchBudget = 10000000;
  bool hierarchical = true;
  bool weighNodes = true;
  double bytesPerFlop = -1;
  std::string compute = "flops";
  bool remarks = false;
  bool exact = false;
  bool tieLayout = false;
  std::string strategy = "optimal";
  uint64_t seed = 0;
  int64_t memoryLimit = 0;
  std::string explain;
  std::string explainExchange = "synthesized";
  bool batchTransfers = true;
  bool pipeline = true;
  int64_t maxMicroBatches = 16;
  std::string stages = "off";
  double progressSeconds = 3;
};

/// A planning run's options parsed and checked, with the target they plan
/// for.
struct PlanConfig {
  TargetAttr target;
  ::ein::Topology topology;
  /// What the target's kernels can run (from its chip).
  std::shared_ptr<const ::ein::planner::TargetInfo> info;
  /// The search's options: devices, weight replicas, the state cap, the
  /// compute term and, on several nodes, how bytes across them weigh.
  ::ein::planner::SearchOptions search;
  ::ein::planner::Strategy strategy = ::ein::planner::Strategy::Optimal;
  uint64_t seed = 0;
  bool tieLayout = false;
  /// Refuse, rather than keep, a plan the state cap made inexact.
  bool exact = false;
  bool hierarchical = true;
  bool remarks = false;
  bool batchTransfers = true;
  /// Price pipeline stages for the explanation on several nodes.
  bool pipeline = true;
  int64_t memoryLimit = 0;
  int64_t maxMicroBatches = 16;
  double progressSeconds = 3;
  /// Where the explanation goes ("" for none) and the exchanges it
  /// simulates.
  std::string explain;
  ExchangeForm explainExchange = ExchangeForm::Synthesized;
  StagesChoice stages;

  /// Parses and checks `options` for `module`'s #ein.target; emits a
  /// diagnostic on the module (naming the option) and fails where one is
  /// out of range or misspelled, or the module has no target.
  static FailureOr<PlanConfig> build(ModuleOp module,
                                     const PlanOptions &options);
};

} // namespace mlir::ein

#endif // EINSUMMABLE_PLAN_PLANCONFIG_H
