//===- LowerToCpu.cpp - ein-lower-to-cpu ----------------------------------===//
//
// Outlines each device-level block that needs a kernel into the nested
// `@ein_kernels` module and lowers that module to the LLVM dialect with the
// runtime's kernel ABI. The device-level function itself is left as it is,
// its blocks naming their kernels, for ein-write-bundle.
//
//===----------------------------------------------------------------------===//

#include "Einsummable/Conversion/BlockKernels/BlockKernels.h"
#include "Einsummable/Conversion/EinToCPU/EinToCPU.h"
#include "Einsummable/Conversion/Passes.h"

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
    if (remarks != "missed" && remarks != "none") {
      getOperation().emitError()
          << "remarks must be missed or none, got '" << remarks << "'";
      return signalPassFailure();
    }
    FailureOr<ModuleOp> kernels = outlineBlockKernels(
        getOperation(), ::ein::Backend::Cpu, remarks == "missed");
    if (failed(kernels))
      return signalPassFailure();
    if (!lowerToLLVM)
      return;
    OpPassManager pm(ModuleOp::getOperationName());
    buildCpuKernelLoweringPipeline(pm);
    if (failed(expandMathWithoutIntrinsics(*kernels)) ||
        failed(runPipeline(pm, *kernels)) ||
        failed(addKernelEntryPoints(*kernels)))
      return signalPassFailure();
    // The table outlining recorded, into the library.
    ::ein::KernelSignatures signatures;
    std::string why;
    auto table = (*kernels)->getAttrOfType<StringAttr>(
        EinDialect::getKernelSignaturesAttrName());
    if (!table || !::ein::parseKernelSignatures(table.str(), signatures, why)) {
      kernels->emitError() << "has no valid kernel signature table: " << why;
      return signalPassFailure();
    }
    embedKernelSignatures(*kernels, signatures, kernels->getBody(),
                          /*addressSpace=*/0);
  }
};

} // namespace
