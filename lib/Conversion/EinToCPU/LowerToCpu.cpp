//===- LowerToCpu.cpp - ein-lower-to-cpu ----------------------------------===//
//
// Outlines each device-level block that needs a kernel into the nested
// `@ein_kernels` module and lowers that module to the LLVM dialect with the
// runtime's kernel ABI. The device-level function itself is left as it is,
// its blocks naming their kernels, for ein-write-bundle.
//
//===----------------------------------------------------------------------===//

#include "Einsummable/Conversion/EinToCPU/BlockKernels.h"
#include "Einsummable/Conversion/EinToCPU/EinToCPU.h"
#include "Einsummable/Conversion/Passes.h"
#include "Einsummable/Program/ExportProgram.h"

namespace mlir::ein {
#define GEN_PASS_DEF_EINLOWERTOCPU
#include "Einsummable/Conversion/Passes.h.inc"
} // namespace mlir::ein

using namespace mlir;
using namespace mlir::ein;

namespace {

struct EinLowerToCpuPass
    : public mlir::ein::impl::EinLowerToCpuBase<EinLowerToCpuPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (findKernelsModule(module)) {
      module.emitError() << "already has an @" << kKernelsModuleName
                         << " module; ein-lower-to-cpu runs once";
      return signalPassFailure();
    }
    FailureOr<func::FuncOp> func = selectProgramFunction(module, "");
    if (failed(func))
      return signalPassFailure();
    OpBuilder builder(module.getContext());
    builder.setInsertionPointToEnd(module.getBody());
    auto kernels = ModuleOp::create(builder, module.getLoc(),
                                    StringRef(kKernelsModuleName));
    kernels->setAttr(EinDialect::getKernelTargetAttrName(),
                     builder.getStringAttr("cpu"));
    builder.setInsertionPointToEnd(kernels.getBody());
    int count = 0;
    WalkResult walked = func->walk([&](Operation *op) {
      if (!needsBlockKernel(op))
        return WalkResult::advance();
      std::string name = "ein_kernel_" + std::to_string(count++);
      if (failed(buildBlockKernel(op, name, builder)))
        return WalkResult::interrupt();
      op->setAttr(EinDialect::getKernelAttrName(), builder.getStringAttr(name));
      return WalkResult::advance();
    });
    if (walked.wasInterrupted())
      return signalPassFailure();
    if (!lowerToLLVM)
      return;
    OpPassManager pm(ModuleOp::getOperationName());
    buildCpuKernelLoweringPipeline(pm);
    if (failed(runPipeline(pm, kernels)) ||
        failed(addKernelEntryPoints(kernels)))
      return signalPassFailure();
  }
};

} // namespace
