//===- PlanReport.h - Plans and exchanges as JSON and tables ----*- C++ -*-===//
//
// What ein-decompose's `explain` and ein-synthesize-exchanges' `report`
// write: per op the chosen spec, its cost terms and what the alternatives
// would cost; per exchange its bytes and the links it crosses; the
// simulated step (docs/explain.md documents the format); and ein-decompose's
// remarks.
//
//===----------------------------------------------------------------------===//

#ifndef EINSUMMABLE_PLAN_PLANREPORT_H
#define EINSUMMABLE_PLAN_PLANREPORT_H

#include "Einsummable/Physical/Exchange.h"
#include "Einsummable/Physical/Pipeline.h"
#include "Einsummable/Planner/Search.h"

#include "Einsummable/Dialect/Ein/IR/EinAttrs.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Operation.h"
#include "llvm/Support/JSON.h"

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace mlir::ein {

/// Bytes in a short human form: 1.5 MiB.
std::string humanBytes(double bytes);

/// Where `op` stands in its source, as text.
std::string locationText(Operation *op);

/// "ein.join_agg at mlp.mlir:7": the op's name and its source file and line
/// where its location has them.
std::string opAtSource(Operation *op);

/// The program's exchanges (op, kind, value, region, devices, bytes, links),
/// their byte totals per kind and the simulated step on `topology`:
/// {"simulated_ms", "bytes": {...}, "exchanges": [...]}.
/// `sim`, when given, is the program's simulation on `topology` (else it
/// is simulated here). `copyOrder`, when given (a lowered program), is per
/// movement its transfer's place among those its receiving GPU's copy
/// stream runs (-1: none), each exchange's "copy_order".
llvm::json::Object
exchangeReport(const ::ein::planner::Graph &graph,
               const std::vector<std::string> &locations,
               const ::ein::physical::DeviceProgram &program,
               const ::ein::Topology &topology,
               const ::ein::physical::SimResult *sim = nullptr,
               const std::vector<int64_t> *copyOrder = nullptr);

/// One op of an explained plan: its spec, cost terms and alternatives.
struct ExplainedOp {
  std::string op, loc;
  std::vector<std::string> loops;
  ::ein::planner::Spec spec;
  ::ein::planner::OpCost cost;
  /// Bytes of halos: what a convolution's or pooling's blocks read beyond
  /// their own part of a windowed input (part of `cost.repartition`).
  double haloBytes = 0;
  /// Every other spec the strategy allows, with the whole plan's cost were
  /// this op alone cut that way (the rest as chosen).
  std::vector<std::pair<::ein::planner::Spec, double>> alternatives;
};

/// Per op of `plan`, its explanation; alternatives are costed as
/// planner::evaluate costs them (planner::alternativeTotals).
std::vector<ExplainedOp>
explainOps(const ::ein::planner::Graph &graph, const ::ein::planner::Plan &plan,
           const ::ein::planner::SearchOptions &options,
           const std::vector<std::string> &locations);

/// The explain JSON's "ops" entries.
llvm::json::Array explainJson(const std::vector<ExplainedOp> &ops);

/// The same as a table for people: op, loops, spec, cost terms, the best
/// alternative and how much dearer it is.
void printExplainTable(llvm::raw_ostream &os,
                       const std::vector<ExplainedOp> &ops);

/// One function's planned graph for Graphviz, as a cluster named `name`:
/// arguments as ellipses, ops as boxes with their cut and cost terms, an
/// edge per value read (its name and shape).
void printPlanDot(llvm::raw_ostream &os, llvm::StringRef name,
                  const ::ein::planner::Graph &graph,
                  const std::vector<ExplainedOp> &ops);

/// A simulated step's tasks as Chrome trace events (a .trace.json file, to
/// sit beside ein-run --profile=FILE.json's measured step): one process per
/// GPU (`device N (simulated)`), its kernels on thread 0 (`stream 0`) and,
/// in a dataflow program, the transfers it receives on thread 1 (a
/// one-stream program runs them on its stream 0); one complete event per
/// task, named by the
/// task, its op and source line, with its bytes or FLOPs in `args`;
/// functions one after another.
class SimulatedTrace {
public:
  /// Adds one function's program, `sim` its simulation on a topology of
  /// `devices` GPUs.
  void add(llvm::StringRef function, const ::ein::planner::Graph &graph,
           const std::vector<std::string> &locations,
           const ::ein::physical::DeviceProgram &program,
           const ::ein::physical::SimResult &sim, int64_t devices);

  /// Writes the trace to `to`; a diagnostic at `where` (cannot write
  /// `what`) if it cannot. `to`'s directory is made where missing.
  LogicalResult write(llvm::StringRef to, Operation *where,
                      llvm::StringRef what) const;

private:
  std::vector<llvm::json::Value> events;
  std::set<std::pair<int64_t, int64_t>> lanes;
  double endMs = 0;
};

/// What ein-decompose explains: every planned function's ops, exchanges,
/// memory and simulated step, gathered function by function and written
/// once at the end as a table ("-", to stdout), Graphviz (a `.dot` path) or
/// JSON (any other path).
class PlanExplanation {
public:
  /// The run as a whole: what the header line and the JSON's top keys say.
  struct Header {
    int64_t devices = 1;
    std::string topology, strategy, exchange;
    std::optional<uint64_t> seed; // random strategy only
    int64_t memoryLimit = 0;      // 0: none
  };

  /// Adds one planned function, its device program (naive or synthesized,
  /// as `Header::exchange` says) simulated on `topology`.
  void add(llvm::StringRef function, const ::ein::planner::Graph &graph,
           const ::ein::planner::Plan &plan,
           const ::ein::planner::SearchOptions &options,
           const std::vector<std::string> &locations,
           const ::ein::physical::DeviceProgram &program,
           const ::ein::Topology &topology);

  /// Adds the staged plans priced for one function (a topology of several
  /// nodes), next to its intra-op plan added before, and which of them is
  /// lowered (`lowered`: null for the intra-op plan).
  void addPipeline(llvm::StringRef function,
                   const std::vector<::ein::physical::StagedPlan> &plans,
                   const ::ein::physical::StagedPlan *lowered = nullptr);

  /// One candidate plan the simulator arbitrated: its name, the step it
  /// simulates (seconds) and its proxy cost under the search's pricing.
  struct Candidate {
    std::string plan;
    double seconds = 0;
    double costBytes = 0;
  };

  /// Adds the simulator's arbitration for one function: each candidate
  /// (the search's first) and the one kept (empty: the search's).
  void addArbitration(llvm::StringRef function,
                      const std::vector<Candidate> &candidates,
                      llvm::StringRef kept);

  /// Writes the explanation to `to`; a diagnostic at `where` if it cannot.
  LogicalResult write(llvm::StringRef to, const Header &header,
                      Operation *where) const;

private:
  SimulatedTrace trace;
  std::vector<ExplainedOp> explained;
  std::string dot;
  llvm::json::Array exchanges;
  double total = 0, simulatedMs = 0, bytesBetweenNodes = 0;
  int64_t nodes = 1;
  /// What the proxy counted a byte between nodes for (1: every byte alike).
  double nodeByteWeight = 1;
  std::vector<double> memoryBytes;
  /// Per function whose plan the simulator chose among candidates: its
  /// name, the candidates and the one kept.
  struct Arbitration {
    std::string function;
    std::vector<Candidate> candidates;
    std::string kept;
  };
  std::vector<Arbitration> arbitrations;
  /// Per function with staged plans: its name, the plans and the one
  /// lowered ("SxM", or empty for the intra-op plan).
  struct Pipelines {
    std::string function;
    std::vector<::ein::physical::StagedPlan> plans;
    std::string lowered;
  };
  std::vector<Pipelines> pipelines;
};

/// ein-decompose's remarks on one planned function: each op's spec and cost
/// terms, the plan's total, and the step the simulator predicts on the
/// target's topology with naive, synthesized and placed exchanges.
LogicalResult emitPlanRemarks(func::FuncOp func, TargetAttr target,
                              llvm::ArrayRef<Operation *> ops,
                              const ::ein::planner::Graph &graph,
                              const ::ein::planner::Plan &plan,
                              const ::ein::planner::Options &options,
                              bool batch);

/// The ops whose placement stays canonical: those fixing tied layouts.
std::vector<bool> keptForTies(const ::ein::planner::Graph &graph,
                              const ::ein::planner::Options &options);

} // namespace mlir::ein

#endif // EINSUMMABLE_PLAN_PLANREPORT_H
