//===- Pipelines.cpp - The named ein pipelines --------------------------===//

#include "Einsummable/Pipelines/Pipelines.h"

#include "Einsummable/Dialect/Ein/IR/EinTypes.h"
#include "Einsummable/Target/Bundle/BundleWriter.h"
#include "Einsummable/Target/TargetBackend.h"
#include "Einsummable/Transforms/Passes.h"

#include "ein/target.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mlir::ein;

/// The planner's options of one pipeline given to another pipeline's or to
/// ein-decompose's (whose generated options struct has the same fields).
template <typename To>
static void copyPlannerOptions(const PlannerOptionFields &from, To &to) {
  to.tieLayout = from.tieLayout;
  to.allowInexact = from.allowInexact;
  to.stateCap = from.stateCap;
  to.strategy = from.strategy;
  to.seed = from.seed;
  to.memoryLimit = from.memoryLimit;
  to.explain = from.explain;
  to.stages = from.stages;
  to.compute = from.compute;
}

void mlir::ein::buildPlanPipeline(OpPassManager &pm,
                                  const PlanPipelineOptions &options) {
  pm.addPass(createEinEnumerateSpecs());
  EinDecomposeOptions decompose;
  copyPlannerOptions(options, decompose);
  decompose.weightsReplicable = options.weightsReplicable;
  decompose.explainExchange = options.explainExchange;
  decompose.batchTransfers = options.batchTransfers;
  pm.addPass(createEinDecompose(decompose));
  pm.addPass(createEinInsertExchanges());
}

void mlir::ein::buildCompilePipeline(OpPassManager &pm,
                                     const CompilePipelineOptions &options) {
  // The reference is exported into the directory the writer assembles the
  // bundle in, which then takes the bundle's place: a compile that fails
  // leaves an existing bundle as it was.
  std::string dir = options.dir,
              reference = bundleStagingDirectory(dir) + "/program.json";
  // linalg input is imported first (ein input passes through unchanged),
  // and the patterns fused kernels serve become composites. A planned
  // program (ein-plan's output) has all that done, and its #ein.target.
  if (!options.planned) {
    if (!options.weights.empty()) {
      EinMarkWeightsOptions weights;
      weights.args = llvm::to_vector(options.weights);
      pm.addPass(createEinMarkWeights(weights));
    }
    pm.addPass(createEinImport());
    EinFuseCompositesOptions composites;
    composites.remarks = options.remarks;
    pm.addPass(createEinFuseComposites(composites));
    EinAttachTargetOptions target;
    target.devices = options.devices;
    target.topology = options.topology;
    target.chip = options.chip;
    target.partials = options.partials;
    target.backend = options.target;
    pm.addPass(createEinAttachTarget(target));
  }
  // The logical program, the reference the bundle is checked against (of a
  // planned program: the logical program its relations stand for).
  EinExportProgramOptions program;
  program.file = reference;
  pm.addPass(createEinExportProgram(program));
  // A trace shows the step of the program the bundle runs (a chunked or
  // dataflow plan's copies and streams): ein-synthesize-exchanges writes it
  // from the lowered program, ein-decompose the other explanations.
  bool traced = StringRef(options.explain).ends_with(".trace.json");
  if (!options.planned) {
    PlanPipelineOptions plan;
    copyPlannerOptions(options, plan);
    if (traced)
      plan.explain = "";
    if (options.planMemoryLimit > 0)
      plan.memoryLimit = options.planMemoryLimit;
    plan.explainExchange = options.exchange;
    plan.batchTransfers = options.batchTransfers;
    plan.weightsReplicable = options.weightsReplicable;
    buildPlanPipeline(pm, plan);
  }
  EinSynthesizeExchangesOptions synthesize;
  synthesize.exchange = options.exchange;
  synthesize.weightsReplicable = options.weightsReplicable;
  synthesize.batchTransfers = options.batchTransfers;
  synthesize.compute = options.compute;
  if (traced)
    synthesize.trace = options.explain;
  pm.addPass(createEinSynthesizeExchanges(synthesize));
  pm.addPass(createEinFuseBlocks());
  if (options.gemmEpilogues) {
    EinFuseGemmEpiloguesOptions epilogues;
    epilogues.remarks = options.remarks;
    pm.addPass(createEinFuseGemmEpilogues(epilogues));
  }
  ::ein::Backend backend = ::ein::Backend::Cpu;
  std::string unused;
  ::ein::parseBackend(options.target, backend, unused);
  if (options.attentionViews) {
    EinFoldAttentionViewsOptions views;
    views.target = options.target;
    pm.addPass(createEinFoldAttentionViews(views));
  }
  BackendLoweringOptions lowering;
  lowering.cudaToolkit = options.cudaToolkit;
  lowering.remarks = options.remarks;
  lowering.approxMath = options.approxMath;
  getTargetBackend(backend).addLoweringPasses(pm, lowering);
  EinWriteBundleOptions bundle;
  bundle.dir = dir;
  bundle.target = options.target;
  bundle.reference = reference;
  bundle.memoryLimit = options.memoryLimit;
  pm.addPass(createEinWriteBundle(bundle));
}

bool mlir::ein::isPlannedProgram(ModuleOp module) {
  WalkResult found = module.walk([](Operation *op) {
    if (op->hasAttr("spec") || llvm::any_of(op->getResultTypes(), [](Type t) {
          return isa<RelationType>(t);
        }))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return found.wasInterrupted();
}

/// A pass option value, quoted where the pipeline parser needs it.
static std::string optionValue(StringRef value) {
  if (value.find_first_of(" ,{}'\"=") == StringRef::npos && !value.empty())
    return value.str();
  return "\"" + value.str() + "\"";
}

std::string
mlir::ein::printCompilePipeline(const CompilePipelineOptions &options) {
  CompilePipelineOptions defaults;
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "ein-compile-pipeline{dir=" << optionValue(options.dir)
     << " target=" << optionValue(options.target)
     << " devices=" << options.devices;
  auto string = [&](const std::string &value, const std::string &initial,
                    StringRef name) {
    if (value != initial)
      os << " " << name << "=" << optionValue(value);
  };
  auto flag = [&](bool value, bool initial, StringRef name) {
    if (value != initial)
      os << " " << name << "=" << (value ? "true" : "false");
  };
  if (!options.weights.empty()) {
    os << " weights=";
    llvm::interleave(
        options.weights, os,
        [&](const std::string &w) { os << optionValue(w); }, ",");
  }
  flag(options.planned, defaults.planned, "planned");
  string(options.remarks, defaults.remarks, "remarks");
  string(options.topology, defaults.topology, "topology");
  string(options.chip, defaults.chip, "chip");
  string(options.partials, defaults.partials, "partials");
  string(options.cudaToolkit, defaults.cudaToolkit, "cuda-toolkit");
  string(options.exchange, defaults.exchange, "exchange");
  flag(options.batchTransfers, defaults.batchTransfers, "batch-transfers");
  flag(options.weightsReplicable, defaults.weightsReplicable,
       "weights-replicable");
  flag(options.gemmEpilogues, defaults.gemmEpilogues, "gemm-epilogues");
  flag(options.attentionViews, defaults.attentionViews, "attention-views");
  flag(options.approxMath, defaults.approxMath, "approx-math");
  flag(options.tieLayout, defaults.tieLayout, "tie-layout");
  flag(options.allowInexact, defaults.allowInexact, "allow-inexact");
  if (options.stateCap != defaults.stateCap)
    os << " state-cap=" << options.stateCap;
  string(options.strategy, defaults.strategy, "strategy");
  string(options.stages, defaults.stages, "stages");
  if (options.seed != defaults.seed)
    os << " seed=" << options.seed;
  if (options.memoryLimit != defaults.memoryLimit)
    os << " memory-limit=" << options.memoryLimit;
  if (options.planMemoryLimit != defaults.planMemoryLimit)
    os << " plan-memory-limit=" << options.planMemoryLimit;
  string(options.explain, defaults.explain, "explain");
  os << "}";
  return text;
}

void mlir::ein::registerEinPipelines() {
  PassPipelineRegistration<CompilePipelineOptions>(
      "ein-compile-pipeline",
      "What ein-compile runs: import, attach the target, export the "
      "reference program, plan, synthesize exchanges, fuse, lower for the "
      "target and write the bundle (dir=DIR), with ein-compile's options",
      buildCompilePipeline);
  PassPipelineRegistration<PlanPipelineOptions>(
      "ein-plan",
      "Plan a logical program for the module's #ein.target: enumerate specs, "
      "choose one per op by whole-graph search, and rewrite onto relations "
      "with explicit exchanges",
      buildPlanPipeline);
}
