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
#define EIN_PLANNER_OPTION(TYPE, FIELD, FLAG, DEFAULT, DESCRIPTION)            \
  to.FIELD = from.FIELD;
#define EIN_PLANNER_OPTION_OWN EIN_PLANNER_OPTION
#include "Einsummable/Pipelines/CompileOptions.def"
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
    if (options.gradients || !options.optimizer.empty()) {
      EinAutodiffOptions autodiff;
      autodiff.optimizer = options.optimizer;
      pm.addPass(createEinAutodiff(autodiff));
    }
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

/// ` FLAG=VALUE` where `value` is not the option's default.
static void printChanged(llvm::raw_ostream &os, StringRef flag, bool value,
                         bool initial) {
  if (value != initial)
    os << " " << flag << "=" << (value ? "true" : "false");
}
static void printChanged(llvm::raw_ostream &os, StringRef flag, int64_t value,
                         int64_t initial) {
  if (value != initial)
    os << " " << flag << "=" << value;
}
static void printChanged(llvm::raw_ostream &os, StringRef flag, uint64_t value,
                         uint64_t initial) {
  if (value != initial)
    os << " " << flag << "=" << value;
}
static void printChanged(llvm::raw_ostream &os, StringRef flag,
                         const std::string &value, const std::string &initial) {
  if (value != initial)
    os << " " << flag << "=" << optionValue(value);
}

std::string
mlir::ein::printCompilePipeline(const CompilePipelineOptions &options) {
  CompilePipelineOptions defaults;
  std::string text;
  llvm::raw_string_ostream os(text);
  // The bundle, the backend and the device count always; then every option
  // that differs from its default, in CompileOptions.def's order.
  os << "ein-compile-pipeline{dir=" << optionValue(options.dir)
     << " target=" << optionValue(options.target)
     << " devices=" << options.devices;
  auto always = [](StringRef flag) {
    return flag == "dir" || flag == "target" || flag == "devices";
  };
#define EIN_PLANNER_OPTION(TYPE, FIELD, FLAG, DEFAULT, DESCRIPTION)            \
  if (!always(FLAG))                                                           \
    printChanged(os, FLAG, static_cast<TYPE>(options.FIELD),                   \
                 static_cast<TYPE>(defaults.FIELD));
#define EIN_PLANNER_OPTION_OWN EIN_PLANNER_OPTION
#define EIN_COMPILE_OPTION EIN_PLANNER_OPTION
#define EIN_PIPELINE_OPTION EIN_PLANNER_OPTION
#define EIN_COMPILE_LIST_OPTION(TYPE, FIELD, FLAG, DESCRIPTION)                \
  if (!options.FIELD.empty()) {                                                \
    os << " " FLAG "=";                                                        \
    llvm::interleave(                                                          \
        options.FIELD, os, [&](const TYPE &v) { os << optionValue(v); }, ","); \
  }
#include "Einsummable/Pipelines/CompileOptions.def"
  os << "}";
  return text;
}

void mlir::ein::buildExportShardPipeline(
    OpPassManager &pm, const CompilePipelineOptions &options) {
  if (!options.weights.empty()) {
    EinMarkWeightsOptions marks;
    marks.args = llvm::to_vector(options.weights);
    pm.addPass(createEinMarkWeights(marks));
  }
  EinAttachTargetOptions where;
  where.devices = options.devices;
  where.topology = options.topology;
  where.chip = options.chip;
  pm.addPass(createEinAttachTarget(where));
  EinExportShardOptions shard;
  shard.stateCap = options.stateCap;
  shard.searchBudget = options.searchBudget;
  shard.allowInexact = options.allowInexact;
  shard.exact = options.exact;
  shard.tieLayout = options.tieLayout;
  shard.strategy = options.strategy;
  shard.seed = options.seed;
  shard.memoryLimit = options.memoryLimit;
  pm.addPass(createEinExportShard(shard));
}

void mlir::ein::registerEinPipelines() {
  PassPipelineRegistration<CompilePipelineOptions>(
      "ein-compile-pipeline",
      "What ein-compile runs: import, attach the target, export the "
      "reference program, plan, synthesize exchanges, fuse, lower for the "
      "target and write the bundle (dir=DIR), with ein-compile's options",
      buildCompilePipeline);
  PassPipelineRegistration<CompilePipelineOptions>(
      "ein-export-shard-pipeline",
      "What ein-compile --emit-shard runs: mark the weights, attach the "
      "target and annotate the input program with the plan as upstream "
      "`shard` ops (ein-export-shard), with ein-compile's options",
      buildExportShardPipeline);
  PassPipelineRegistration<PlanPipelineOptions>(
      "ein-plan",
      "Plan a logical program for the module's #ein.target: enumerate specs, "
      "choose one per op by whole-graph search, and rewrite onto relations "
      "with explicit exchanges",
      buildPlanPipeline);
}
