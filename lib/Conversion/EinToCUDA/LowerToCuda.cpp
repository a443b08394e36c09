//===- LowerToCuda.cpp - ein-lower-to-cuda --------------------------------===//
//
// Outlines each device-level block that needs a kernel (as ein-lower-to-cpu
// does), turns every linalg op of it into a GPU kernel and its launch, and
// compiles the GPU module to a cubin for the chip, checked first.
//
//===----------------------------------------------------------------------===//

#include "Einsummable/Conversion/BlockKernels/BlockKernels.h"
#include "Einsummable/Conversion/EinToCUDA/EinToCUDA.h"
#include "Einsummable/Conversion/Passes.h"

#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

namespace mlir::ein {
#define GEN_PASS_DEF_EINLOWERTOCUDA
#include "Einsummable/Conversion/Passes.h.inc"
} // namespace mlir::ein

using namespace mlir;
using namespace mlir::ein;

namespace {

struct EinLowerToCudaPass
    : public mlir::ein::impl::EinLowerToCudaBase<EinLowerToCudaPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    TargetAttr machine = requireTarget(module, "ein-lower-to-cuda");
    if (!machine)
      return signalPassFailure();
    std::string sm = StringRef(chip).empty() ? machine.getChip().str()
                                             : StringRef(chip).str();
    if (sm != machine.getChip()) {
      module.emitError() << "ein-lower-to-cuda chip=" << sm
                         << " differs from the #ein.target's chip "
                         << machine.getChip()
                         << "; the bundle would name one and hold the other";
      return signalPassFailure();
    }
    if (remarks != "missed" && remarks != "none") {
      module.emitError() << "remarks must be missed or none, got '" << remarks
                         << "'";
      return signalPassFailure();
    }
    std::string why;
    FailureOr<std::string> features = cudaFeaturesFor(sm, why);
    if (failed(features)) {
      module.emitError() << "cannot generate code for chip '" << sm
                         << "': " << why;
      return signalPassFailure();
    }
    llvm::SmallString<128> ptxas = StringRef(toolkit);
    llvm::sys::path::append(ptxas, "bin", "ptxas");
    if (compile && !llvm::sys::fs::can_execute(ptxas)) {
      module.emitError() << "no CUDA toolkit at '" << StringRef(toolkit)
                         << "' (" << ptxas
                         << " is missing): ein-lower-to-cuda compiles "
                            "kernels with its ptxas and libdevice";
      return signalPassFailure();
    }

    FailureOr<ModuleOp> kernels =
        outlineBlockKernels(module, ::ein::Backend::Cuda, remarks == "missed");
    if (failed(kernels))
      return signalPassFailure();
    (*kernels)->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                        UnitAttr::get(&getContext()));
    OpBuilder builder(&getContext());
    builder.setInsertionPointToEnd(kernels->getBody());
    auto device =
        gpu::GPUModuleOp::create(builder, module.getLoc(), kDeviceModuleName);
    // RMSNorm and LayerNorm blocks get their fused kernel, the rest the
    // generic path.
    llvm::StringMap<Operation *> norms;
    module.walk([&](Operation *norm) {
      if (!isa<RmsNormOp, LayerNormOp>(norm))
        return;
      if (auto name =
              norm->getAttrOfType<StringAttr>(EinDialect::getKernelAttrName()))
        norms[name.getValue()] = norm;
    });
    for (auto kernel :
         llvm::to_vector(kernels->getBody()->getOps<func::FuncOp>())) {
      if (Operation *norm = norms.lookup(kernel.getSymName())) {
        FailureOr<bool> fused = launchRowNormOnGpu(kernel, norm, device);
        if (failed(fused))
          return signalPassFailure();
        if (*fused)
          continue;
      }
      if (failed(launchOnGpu(kernel, device)))
        return signalPassFailure();
    }
    // Simplified first, so that what a kernel's signature says it reads is
    // what its code reads (a dead load's argument is no argument).
    OpPassManager simplify(ModuleOp::getOperationName());
    simplify.addPass(createCanonicalizerPass());
    simplify.addPass(createCSEPass());
    if (failed(runPipeline(simplify, *kernels)))
      return signalPassFailure();
    dropUnusedKernelArguments(*kernels, device);
    FailureOr<::ein::KernelSignatures> signatures = gpuKernelSignatures(device);
    if (failed(signatures))
      return signalPassFailure();
    embedKernelSignatures(*kernels, *signatures, device.getBody(),
                          /*addressSpace=*/1);
    if (approxMath)
      approximateHalfResultMath(device, *signatures);
    if (!compile)
      return;
    OpPassManager pm(ModuleOp::getOperationName());
    buildCudaDeviceLoweringPipeline(pm, sm, *features, toolkit);
    if (failed(runPipeline(pm, *kernels)))
      return signalPassFailure();
  }
};

} // namespace
