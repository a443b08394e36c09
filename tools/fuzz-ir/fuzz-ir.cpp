//===- fuzz-ir.cpp - libFuzzer: the IR parser and the planning pipeline ---===//
//
// Any bytes as MLIR (after the input guard ein-opt and ein-compile run
// first, docs/testing.md): a module that parses is imported, given a
// 2-device target and planned (ein-plan's pipeline), every diagnostic
// swallowed. A crash, a UBSan report or a hang is a finding. Built only
// with EIN_FUZZ_IR (clang); scripts/fuzz.sh --ir runs it.
//
//===----------------------------------------------------------------------===//

#include "Einsummable/InitAll.h"
#include "Einsummable/InputGuard.h"
#include "Einsummable/Pipelines/Pipelines.h"
#include "Einsummable/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/SourceMgr.h"

#include <cstdint>

using namespace mlir;

namespace {

MLIRContext &context() {
  static MLIRContext *ctx = [] {
    DialectRegistry registry;
    ein::registerAllDialects(registry);
    auto *c = new MLIRContext(registry);
    c->loadAllAvailableDialects();
    c->disableMultithreading();
    return c;
  }();
  return *ctx;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  MLIRContext &ctx = context();
  ScopedDiagnosticHandler quiet(&ctx, [](Diagnostic &) { return success(); });
  std::unique_ptr<llvm::MemoryBuffer> buffer = llvm::MemoryBuffer::getMemBuffer(
      StringRef(reinterpret_cast<const char *>(data), size), "fuzz",
      /*RequiresNullTerminator=*/false);
  if (!ein::checkParserSafe(*buffer, "fuzz", llvm::nulls()))
    return 0;
  llvm::SourceMgr sources;
  sources.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sources, &ctx);
  if (!module)
    return 0;
  PassManager pm(&ctx);
  pm.addPass(ein::createEinImport());
  ein::EinAttachTargetOptions target;
  target.devices = 2;
  pm.addPass(ein::createEinAttachTarget(target));
  ein::PlanPipelineOptions plan;
  plan.stateCap = 20000;
  ein::buildPlanPipeline(pm, plan);
  (void)pm.run(*module);
  return 0;
}
