//===- ein-compile.cpp - A tensor program to a bundle ---------------------===//
//
// The compile driver: the named pipeline ein-compile-pipeline (attach the
// target, plan, lower to device-level blocks with exchange programs, compile
// the block kernels, write the bundle), built by the same C++ builder
// ein-opt registers and printed by --print-pipeline as the ein-opt command
// that replays it, then a short summary of what the bundle does.
//
//===----------------------------------------------------------------------===//

#include "Einsummable/Dialect/Ein/IR/EinAttrs.h"
#include "Einsummable/Dialect/Ein/IR/EinDialect.h"
#include "Einsummable/InitAll.h"
#include "Einsummable/InputGuard.h"
#include "Einsummable/Pipelines/Pipelines.h"
#include "Einsummable/Planner/Strategy.h"
#include "Einsummable/Support/FileOutput.h"
#include "Einsummable/Target/Bundle/BundleWriter.h"
#include "Einsummable/Target/TargetBackend.h"
#include "Einsummable/Transforms/Passes.h"

#include "ein/bundle.h"
#include "ein/dtype.h"
#include "ein/target.h"
#include "ein/topology.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

using namespace mlir;
namespace cl = llvm::cl;

static cl::OptionCategory category("ein-compile options");
static cl::opt<std::string> input(cl::Positional, cl::desc("<input.mlir>"),
                                  cl::Required, cl::cat(category));
static cl::opt<std::string> output("o", cl::desc("The bundle directory"),
                                   cl::value_desc("DIR"), cl::cat(category));
// The pipeline's options (CompileOptions.def) are ein-compile's flags, but
// for those it spells its own way: a memory limit with a unit, compute=auto,
// an explanation drawn as a picture.
#define EIN_COMPILE_OPTION(TYPE, FIELD, FLAG, DEFAULT, DESCRIPTION)            \
  static cl::opt<TYPE> FIELD(FLAG, cl::desc(DESCRIPTION), cl::init(DEFAULT),   \
                             cl::cat(category));
#define EIN_PLANNER_OPTION EIN_COMPILE_OPTION
#define EIN_COMPILE_LIST_OPTION(TYPE, FIELD, FLAG, DESCRIPTION)                \
  static cl::list<TYPE> FIELD(FLAG, cl::desc(DESCRIPTION), cl::CommaSeparated, \
                              cl::cat(category));
#include "Einsummable/Pipelines/CompileOptions.def"
static cl::opt<std::string> compute(
    "compute",
    cl::desc("What the planner's compute term charges for each op's slowest "
             "join block: flops, kernels (its time by the chip's measured "
             "gemm and attention tables) or auto (kernels for --target=cuda, "
             "flops for cpu)"),
    cl::init("auto"), cl::cat(category));
static cl::opt<std::string> memoryLimit(
    "memory-limit",
    cl::desc("What a GPU may hold: the plan (weights plus peak live "
             "activations) and the bundle's buffer plan must fit; bytes, or "
             "with a unit: 512MiB, 80GiB, 1.5GB, 64kB"),
    cl::value_desc("SIZE"), cl::init(""), cl::cat(category));
static cl::opt<bool>
    timing("timing",
           cl::desc("Print the time each pass took (MLIR's pass timing)"),
           cl::init(false), cl::cat(category));
static cl::opt<std::string>
    explain("explain",
            cl::desc("Explain the plan: a JSON file (docs/explain.md), the "
                     "simulated step of the program the bundle runs as Chrome "
                     "trace events (FILE.trace.json), "
                     "a Graphviz .dot file, an .svg/.png/.pdf drawn by "
                     "Graphviz's dot, or - for a table on standard output"),
            cl::value_desc("FILE.json|FILE.trace.json|FILE.dot|FILE.svg|-"),
            cl::cat(category));
static cl::opt<std::string> emitShard(
    "emit-shard",
    cl::desc("Also write the input program annotated with the plan as "
             "upstream MLIR `shard` ops (shard.grid, shard.sharding, "
             "shard.shard), for mlir-opt's sharding-propagation and "
             "shard-partition (docs/interop.md); - for standard output"),
    cl::value_desc("FILE.mlir"), cl::cat(category));
static cl::opt<bool>
    printPipeline("print-pipeline",
                  cl::desc("Print the ein-opt command this compile runs, and "
                           "exit"),
                  cl::init(false), cl::cat(category));

/// --memory-limit in bytes (0: none given) and where the planner writes
/// its explanation (a .dot file when dot draws the picture afterwards).
static int64_t memoryBytes = 0;
static std::string explainTo;

/// "512MiB", "1.5GB", "64kB", "4096" as bytes; false with `why`.
static bool parseSize(StringRef text, int64_t &bytes, std::string &why) {
  StringRef number =
      text.take_while([](char c) { return llvm::isDigit(c) || c == '.'; });
  StringRef unit = text.drop_front(number.size()).trim();
  static const std::pair<const char *, double> kUnits[] = {
      {"", 1},         {"B", 1},        {"kB", 1e3},    {"KB", 1e3},
      {"MB", 1e6},     {"GB", 1e9},     {"TB", 1e12},   {"KiB", 1024.0},
      {"MiB", 0x1p20}, {"GiB", 0x1p30}, {"TiB", 0x1p40}};
  double value;
  if (number.empty() || number.getAsDouble(value)) {
    why = "'" + text.str() +
          "' is not a size (bytes, or a number with a "
          "unit: 512MiB, 80GiB, 1.5GB)";
    return false;
  }
  for (auto [name, scale] : kUnits) {
    if (unit != name)
      continue;
    double b = value * scale;
    if (b < 1 || b > 9.0e18) {
      why = "'" + text.str() +
            "' is out of range: give at least one byte "
            "(leave the option out for no limit)";
      return false;
    }
    bytes = static_cast<int64_t>(b);
    return true;
  }
  why = "'" + text.str() + "' has an unknown unit '" + unit.str() +
        "' (B, kB, MB, GB, TB, KiB, MiB, GiB, TiB)";
  return false;
}

/// The pipeline's options, from the command line.
static void fillOptions(mlir::ein::CompilePipelineOptions &options,
                        ::ein::Backend backend) {
#define EIN_COMPILE_OPTION(TYPE, FIELD, FLAG, DEFAULT, DESCRIPTION)            \
  options.FIELD = FIELD;
#define EIN_PLANNER_OPTION EIN_COMPILE_OPTION
#define EIN_COMPILE_LIST_OPTION(TYPE, FIELD, FLAG, DESCRIPTION)                \
  options.FIELD = std::vector<TYPE>(FIELD.begin(), FIELD.end());
#include "Einsummable/Pipelines/CompileOptions.def"
  options.dir = output;
  options.compute =
      compute == "auto"
          ? mlir::ein::getTargetBackend(backend).defaultCompute().str()
          : std::string(compute);
  options.memoryLimit = memoryBytes;
  options.explain = explainTo;
}

/// After a failed compile: the staging directory the bundle was being
/// assembled in goes (the output directory itself is only ever replaced
/// whole, by a complete bundle); so does an output directory the compile
/// made.
static void discardPartial(const std::string &output, bool existed) {
  llvm::sys::fs::remove_directories(mlir::ein::bundleStagingDirectory(output));
  if (!existed)
    llvm::sys::fs::remove_directories(output);
}

static std::string megabytes(int64_t bytes) {
  return llvm::formatv("{0:f2} MB", bytes / 1.0e6).str();
}

/// What the bundle does, in a few lines.
static int summarize() {
  std::string path = output + "/manifest.json";
  auto text = llvm::MemoryBuffer::getFile(path);
  ::ein::Manifest m;
  std::string why;
  if (!text || !::ein::parseManifest((*text)->getBuffer().str(), m, why)) {
    llvm::errs() << "ein-compile: error: cannot read back '" << path
                 << "': " << (text ? why : text.getError().message()) << "\n";
    return 1;
  }
  std::map<::ein::StepKind, int> count;
  int attentions = 0, convs = 0, batched = 0;
  int64_t movedBytes = 0, nodeBytes = 0;
  for (const ::ein::Step &s : m.steps) {
    ++count[s.kind];
    attentions += s.kind == ::ein::StepKind::Library && s.call == "attention";
    convs += s.kind == ::ein::StepKind::Library && s.call == "conv";
    if (s.kind != ::ein::StepKind::Transfer)
      continue;
    batched += s.copies.size() > 1;
    for (const ::ein::Step::Copy &c : s.copies) {
      int64_t elements = 1;
      for (int64_t e : c.src.extent)
        elements *= e;
      const ::ein::Buffer &from = m.buffers[c.src.buffer];
      const ::ein::Buffer &to = m.buffers[c.dst.buffer];
      if (from.device != to.device)
        movedBytes += elements * ::ein::dtypeBytes(from.type.dtype);
      if (m.nodeOf(from.device) != m.nodeOf(to.device))
        nodeBytes += elements * ::ein::dtypeBytes(from.type.dtype);
    }
  }
  int largest = 0;
  for (int d = 0; d < m.devices; ++d)
    if (m.arenaBytes[d] > m.arenaBytes[largest])
      largest = d;
  llvm::outs() << "bundle " << output << ": " << ::ein::backendName(m.backend)
               << " (" << m.chip << "), " << m.devices << " device"
               << (m.devices == 1 ? "" : "s") << ", topology " << topology
               << ", " << exchange << " exchanges\n";
  if (m.nodes > 1)
    llvm::outs() << "nodes: " << m.nodes << " of " << m.devicesPerNode()
                 << " device" << (m.devicesPerNode() == 1 ? "" : "s")
                 << ", one process each under mpirun -n " << m.nodes
                 << " (or all in one without a launcher); "
                 << megabytes(nodeBytes) << " between nodes\n";
  if (m.dataflow)
    llvm::outs() << "dataflow: each GPU's steps over several streams, a step "
                    "waiting for its dependencies only\n";
  llvm::outs() << "steps: " << count[::ein::StepKind::Kernel] << " kernel, "
               << count[::ein::StepKind::Library] - attentions - convs
               << " gemm, " << attentions << " attention, "
               << (convs ? std::to_string(convs) + " conv, " : "")
               << count[::ein::StepKind::Transfer] << " transfer ("
               << megabytes(movedBytes) << " between devices, " << batched
               << " batched), " << count[::ein::StepKind::Aggregate]
               << " aggregate\n"
               << "largest arena: " << megabytes(m.arenaBytes[largest])
               << " (device " << largest << ")\n";
  return 0;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  DialectRegistry registry;
  mlir::ein::registerAllDialects(registry);
  mlir::ein::registerAllPasses();
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "ein-compile: plan a tensor program for N GPUs and write a bundle\n");

  auto fail = [](const Twine &why) {
    llvm::errs() << "ein-compile: error: " << why << "\n";
    return 1;
  };
  std::string why;
  ::ein::Backend backend;
  if (!::ein::parseBackend(target, backend, why))
    return fail("--target: " + why);
  // A topology of a fixed size (nodes=K,gpus=G, a file) sets the device
  // count unless --devices does; the target then checks that they agree.
  if (!devices.getNumOccurrences())
    if (int64_t fixed = ::ein::topologyDevices(topology))
      devices = fixed;
  if (!::ein::checkDevices(devices, why))
    return fail("--devices " + why);
  if (exchange != "synthesized" && exchange != "naive")
    return fail("--exchange must be synthesized or naive, got '" + exchange +
                "'");
  if (!::ein::planner::parseStrategy(strategy))
    return fail("--strategy must be optimal, random, dp, megatron, spatial "
                "or megatron-dp, got '" +
                strategy + "'");
  if (remarks != "missed" && remarks != "none")
    return fail("--remarks must be missed or none, got '" + remarks + "'");
  if (!memoryLimit.empty() && !parseSize(memoryLimit, memoryBytes, why))
    return fail("--memory-limit: " + why);
  // --explain: a table, JSON, Graphviz text, or a picture dot draws.
  explainTo = explain;
  std::string picture, dotTool;
  StringRef extension = llvm::sys::path::extension(explain);
  if (!explain.empty() && explain != "-") {
    if (extension == ".svg" || extension == ".png" || extension == ".pdf") {
      llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName("dot");
      if (!found)
        return fail("--explain=" + explain +
                    " draws with Graphviz's dot, "
                    "which is not on PATH: install graphviz, or write " +
                    llvm::sys::path::stem(explain) + ".dot or .json");
      dotTool = *found;
      picture = explain;
      explainTo = explain + ".dot";
    } else if (extension != ".json" && extension != ".dot") {
      return fail("--explain=" + explain +
                  ": write a .json, .dot, .svg, "
                  ".png or .pdf file, or - for a table");
    }
  }
  if (output.empty() && !printPipeline)
    return fail("no bundle directory: pass -o DIR");
  if (output.empty())
    output = "BUNDLE";

  mlir::ein::CompilePipelineOptions options;
  fillOptions(options, backend);

  MLIRContext context(registry);
  context.printOpOnDiagnostic(false);
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> file = openInputFile(input, &error);
  if (!file)
    return fail(error);
  if (!mlir::ein::checkParserSafe(*file, input, llvm::errs()))
    return 1;
  llvm::SourceMgr sources;
  sources.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagnostics(sources, &context);
  // Parsing verifies: a hand-edited plan that breaks a rule gets the
  // verifier's message here.
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sources, &context);
  if (!module)
    return 1;
  if (mlir::ein::isPlannedProgram(*module)) {
    // Compiled as planned: its #ein.target says where, and the planner's
    // options do not apply.
    auto planned = (*module)->getAttrOfType<mlir::ein::TargetAttr>(
        mlir::ein::EinDialect::getTargetAttrName());
    if (!planned)
      return fail(input + " is a planned program (it has specs) but no "
                          "#ein.target: plan it with ein-opt "
                          "--ein-attach-target=devices=N --ein-plan");
    cl::Option *plannerOptions[] = {std::addressof(weights),
                                    &gradients,
                                    &optimizer,
                                    &strategy,
                                    &seed,
                                    &stages,
                                    &compute,
                                    &tieLayout,
                                    &stateCap,
                                    &searchBudget,
                                    &explain,
                                    &allowInexact,
                                    &exact,
                                    &topology};
    for (cl::Option *o : plannerOptions)
      if (o->getNumOccurrences())
        return fail(input +
                    " is a planned program (it has specs), compiled "
                    "as planned: --" +
                    o->ArgStr +
                    " does not apply (compile the logical program to plan "
                    "it again)");
    if (devices.getNumOccurrences() && devices != planned.getDevices())
      return fail(input + " is planned for " + Twine(planned.getDevices()) +
                  " devices, not --devices=" + Twine(int64_t(devices)));
    options.planned = true;
    options.devices = planned.getDevices();
    // The summary names the topology the program was planned for.
    topology = planned.getTopology().str();
  }
  if (!emitShard.empty() && options.planned)
    return fail("--emit-shard annotates the logical program a plan is made "
                "from; " +
                input + " is already planned");
  if (printPipeline) {
    llvm::outs() << "ein-opt " << input << " --pass-pipeline='builtin.module("
                 << mlir::ein::printCompilePipeline(options)
                 << ")' -o /dev/null\n";
    return 0;
  }
  // The plan as upstream `shard` annotations, made (on a copy) before the
  // bundle so that a program it cannot annotate leaves no bundle changed,
  // and written whole or not at all.
  if (!emitShard.empty()) {
    OwningOpRef<ModuleOp> annotated = module->clone();
    PassManager pm(&context, ModuleOp::getOperationName());
    mlir::ein::buildExportShardPipeline(pm, options);
    if (failed(pm.run(*annotated)))
      return 1;
    std::string error;
    if (!mlir::ein::writeFileAtomically(
            emitShard,
            [&](llvm::raw_ostream &os) {
              annotated->print(os);
              os << "\n";
            },
            error))
      return fail("--emit-shard: cannot write " + error);
  }
  // A compile that fails leaves no partial bundle behind.
  bool existed = llvm::sys::fs::exists(output);
  // The planner plans within --memory-limit by its model of a plan's
  // memory; the bundle's buffers (exchange buffers, scratch, alignment) can
  // need more. Then the program is planned again within a limit lowered by
  // the ratio of the two, up to kReplans times, so that a bundle that is
  // written always fits.
  constexpr int kReplans = 3;
  OwningOpRef<ModuleOp> pristine;
  if (memoryBytes > 0 && !options.planned)
    pristine = module->clone();
  int64_t planLimit = memoryBytes;
  for (int attempt = 0;; ++attempt) {
    int64_t needed = 0, modelled = 0;
    // A staged plan asked for (--stages=SxM) is the same within any limit:
    // its buffers are reported, not planned again.
    bool fixedStages = stages != "off" && stages != "auto";
    bool replan = pristine && attempt < kReplans && !fixedStages;
    ScopedDiagnosticHandler watch(&context, [&](Diagnostic &d) {
      std::string text = d.str();
      StringRef rest = text;
      if (replan && d.getSeverity() == DiagnosticSeverity::Error &&
          rest.consume_front("the bundle's buffer plan needs ") &&
          !rest.consumeInteger(10, needed)) {
        // The plan's own figure by the model, when the writer has it.
        size_t at = rest.find("model of this plan: ");
        if (at != StringRef::npos &&
            rest.drop_front(at + 20).consumeInteger(10, modelled))
          modelled = 0;
        return success(); // planned again below
      }
      // Remarks and warnings were said by the first attempt.
      if (attempt > 0 && d.getSeverity() != DiagnosticSeverity::Error)
        return success();
      return failure();
    });
    PassManager pm(&context, ModuleOp::getOperationName());
    mlir::ein::buildCompilePipeline(pm, options);
    if (timing)
      pm.enableTiming();
    if (succeeded(pm.run(*module)))
      break;
    if (needed <= 0) {
      if (attempt > 0)
        llvm::errs() << "ein-compile: (planned within " << planLimit
                     << " bytes, below --memory-limit=" << memoryBytes
                     << ", because the buffers of plans within more did not "
                        "fit)\n";
      discardPartial(output, existed);
      return 1;
    }
    // Scaled from the plan's own modelled bytes (below planLimit), so that
    // the next plan is leaner than this one, not the same plan again.
    int64_t from = modelled > 0 ? std::min(modelled, planLimit) : planLimit;
    int64_t next = std::min<int64_t>(
        planLimit - 1,
        int64_t(double(from) * double(memoryBytes) / double(needed)));
    llvm::errs() << "ein-compile: the buffers of the plan within " << planLimit
                 << " bytes (the planner's model) need " << needed
                 << " bytes on a device, over --memory-limit=" << memoryBytes
                 << "; planning again within " << next << "\n";
    planLimit = next;
    options.planMemoryLimit = next;
    module = pristine->clone();
  }
  int status = summarize();
  if (status != 0 && !existed)
    llvm::sys::fs::remove_directories(output);
  if (status == 0 && !picture.empty()) {
    std::string format = extension.drop_front().str();
    std::optional<StringRef> redirects[] = {std::nullopt, std::nullopt,
                                            std::nullopt};
    std::string formatFlag = "-T" + format, outFlag = "-o" + picture;
    StringRef argv[] = {dotTool, formatFlag, outFlag, explainTo};
    std::string message;
    int rc = llvm::sys::ExecuteAndWait(dotTool, argv, std::nullopt, redirects,
                                       0, 0, &message);
    llvm::sys::fs::remove(explainTo);
    if (rc != 0)
      return fail("dot could not draw " + picture +
                  (message.empty() ? "" : ": " + message));
  }
  return status;
}
