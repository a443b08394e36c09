//===- ein-compile.cpp - A tensor program to a bundle ---------------------===//
//
// The compile driver: the named pipeline ein-compile-pipeline (attach the
// target, plan, lower to device-level blocks with exchange programs, compile
// the block kernels, write the bundle), built by the same C++ builder
// ein-opt registers and printed by --print-pipeline as the ein-opt command
// that replays it, then a short summary of what the bundle does.
//
//===----------------------------------------------------------------------===//

#include "Einsummable/InitAll.h"
#include "Einsummable/Transforms/Passes.h"

#include "ein/bundle.h"
#include "ein/dtype.h"
#include "ein/target.h"

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
static cl::opt<std::string> target("target", cl::desc("cpu or cuda"),
                                   cl::init("cpu"), cl::cat(category));
static cl::opt<int64_t> devices("devices", cl::desc("Number of GPUs, 1 to 64"),
                                cl::init(1), cl::cat(category));
static cl::opt<std::string>
    topology("topology",
             cl::desc("A topology preset (nvswitch, dgx1-v100, ...) or a "
                      "topology JSON file"),
             cl::init("nvswitch"), cl::cat(category));
static cl::opt<std::string> chip("chip", cl::desc("The GPU chip (cuda)"),
                                 cl::init("sm_90"), cl::cat(category));
static cl::opt<std::string>
    toolkit("cuda-toolkit",
            cl::desc("The CUDA toolkit whose ptxas and libdevice compile "
                     "GPU kernels (cuda)"),
            cl::init("/usr/local/cuda"), cl::cat(category));
static cl::opt<std::string>
    exchange("exchange",
             cl::desc("Exchange programs: synthesized (relays, multicasts, "
                      "aggregation trees where the simulator prefers them) "
                      "or naive"),
             cl::init("synthesized"), cl::cat(category));
static cl::opt<bool> batchTransfers(
    "batch-transfers",
    cl::desc("With synthesized exchanges, batch an op's small transfers "
             "between two GPUs where the step simulates no slower (default "
             "true; false to measure what batching saves)"),
    cl::init(true), cl::cat(category));
static cl::opt<bool>
    tieLayout("tie-layout",
              cl::desc("Results leave in the layout of the first activation "
                       "argument of their type"),
              cl::init(false), cl::cat(category));
static cl::opt<bool>
    allowInexact("allow-inexact",
                 cl::desc("Keep the cheapest plan found when the search's "
                          "state cap bites"),
                 cl::init(false), cl::cat(category));
static cl::opt<int64_t>
    stateCap("state-cap",
             cl::desc("The most search states the planner keeps per step "
                      "(raise it when the cap bites)"),
             cl::init(131072), cl::cat(category));
static cl::opt<std::string>
    strategy("strategy",
             cl::desc("optimal (the search's best plan), random (a legal "
                      "plan drawn from --seed), dp (batch split) or "
                      "megatron (weights sharded, attention by heads)"),
             cl::init("optimal"), cl::cat(category));
static cl::opt<uint64_t> seed("seed", cl::desc("The seed of --strategy=random"),
                              cl::init(0), cl::cat(category));
static cl::opt<int64_t> memoryLimit(
    "memory-limit",
    cl::desc("Bytes a GPU may hold: the plan (weights plus peak live "
             "activations) and the bundle's buffer plan must fit"),
    cl::value_desc("BYTES"), cl::init(0), cl::cat(category));
static cl::opt<std::string>
    explain("explain",
            cl::desc("Explain the plan: a JSON file (docs/explain.md), or - "
                     "for a table on standard output"),
            cl::value_desc("FILE.json|-"), cl::cat(category));
static cl::opt<bool>
    printPipeline("print-pipeline",
                  cl::desc("Print the ein-opt command this compile runs, and "
                           "exit"),
                  cl::init(false), cl::cat(category));

/// The pipeline's options, from the command line.
static void fillOptions(mlir::ein::CompilePipelineOptions &options) {
  options.dir = output;
  options.target = target;
  options.devices = devices;
  options.topology = topology;
  options.chip = chip;
  options.cudaToolkit = toolkit;
  options.exchange = exchange;
  options.batchTransfers = batchTransfers;
  options.tieLayout = tieLayout;
  options.allowInexact = allowInexact;
  options.stateCap = stateCap;
  options.strategy = strategy;
  options.seed = seed;
  options.memoryLimit = memoryLimit;
  options.explain = explain;
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
  int attentions = 0, batched = 0;
  int64_t movedBytes = 0;
  for (const ::ein::Step &s : m.steps) {
    ++count[s.kind];
    attentions += s.kind == ::ein::StepKind::Library && s.call == "attention";
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
    }
  }
  int largest = 0;
  for (int d = 0; d < m.devices; ++d)
    if (m.arenaBytes[d] > m.arenaBytes[largest])
      largest = d;
  llvm::outs() << "bundle " << output << ": " << ::ein::backendName(m.backend)
               << " (" << m.chip << "), " << m.devices << " device"
               << (m.devices == 1 ? "" : "s") << ", topology " << topology
               << ", " << exchange << " exchanges\n"
               << "steps: " << count[::ein::StepKind::Kernel] << " kernel, "
               << count[::ein::StepKind::Library] - attentions << " gemm, "
               << attentions << " attention, "
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
  if (!::ein::checkDevices(devices, why))
    return fail("--devices " + why);
  if (exchange != "synthesized" && exchange != "naive")
    return fail("--exchange must be synthesized or naive, got '" + exchange +
                "'");
  if (strategy != "optimal" && strategy != "random" && strategy != "dp" &&
      strategy != "megatron")
    return fail("--strategy must be optimal, random, dp or megatron, got '" +
                strategy + "'");
  if (memoryLimit < 0)
    return fail("--memory-limit must not be negative, got " +
                Twine(memoryLimit));
  if (output.empty() && !printPipeline)
    return fail("no bundle directory: pass -o DIR");
  if (output.empty())
    output = "BUNDLE";

  mlir::ein::CompilePipelineOptions options;
  fillOptions(options);
  if (printPipeline) {
    llvm::outs() << "ein-opt " << input << " --pass-pipeline='builtin.module("
                 << mlir::ein::printCompilePipeline(options)
                 << ")' -o /dev/null\n";
    return 0;
  }

  MLIRContext context(registry);
  context.printOpOnDiagnostic(false);
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> file = openInputFile(input, &error);
  if (!file)
    return fail(error);
  llvm::SourceMgr sources;
  sources.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagnostics(sources, &context);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sources, &context);
  if (!module)
    return 1;
  PassManager pm(&context, ModuleOp::getOperationName());
  mlir::ein::buildCompilePipeline(pm, options);
  // A compile that fails leaves no partial bundle behind.
  bool existed = llvm::sys::fs::exists(output);
  if (failed(pm.run(*module))) {
    if (!existed)
      llvm::sys::fs::remove_directories(output);
    return 1;
  }
  int status = summarize();
  if (status != 0 && !existed)
    llvm::sys::fs::remove_directories(output);
  return status;
}
