//===- CpuTargetBackend.cpp - The CPU runtime, as the compiler sees it ---===//
//
// N virtual GPUs on the host: every composite but convolution runs as the
// runtime's library call (its fused attention takes any shape and dtype),
// block kernels compile to a shared library (ein-lower-to-cpu; the bundle
// ships it as kernels/host.so), and the
// planner charges FLOPs (the chip table's kernel times are a GPU's).
//
//===----------------------------------------------------------------------===//

#include "Einsummable/Conversion/EinToCPU/EinToCPU.h"
#include "Einsummable/Conversion/Passes.h"
#include "Einsummable/Target/TargetBackend.h"

#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;
using namespace mlir::ein;

namespace {
class CpuTargetBackend : public TargetBackend {
public:
  ::ein::Backend kind() const override { return ::ein::Backend::Cpu; }

  std::string whyNotLibraryAttention(AttentionOp) const override { return ""; }

  bool hasLibraryConv() const override { return false; }

  std::string whyNotLibraryConv(ConvOp) const override {
    return "the cpu target convolves in generated kernels";
  }

  StringRef loweringPassName() const override { return "ein-lower-to-cpu"; }

  void addLoweringPasses(OpPassManager &pm,
                         const BackendLoweringOptions &options) const override {
    EinLowerToCpuOptions cpu;
    cpu.remarks = options.remarks;
    pm.addPass(createEinLowerToCpu(cpu));
  }

  bool launchesGpuKernels() const override { return false; }

  StringRef kernelLibraryFile() const override { return "kernels/host.so"; }

  LogicalResult checkKernelsLowered(ModuleOp kernels,
                                    Operation *caller) const override {
    if (kernels.getOps<func::FuncOp>().empty())
      return success();
    return caller->emitOpError() << "calls kernels that are not lowered to the "
                                    "LLVM dialect (run ein-lower-to-cpu with "
                                    "lower-to-llvm=true)";
  }

  FailureOr<std::string> buildKernelLibrary(ModuleOp kernels, StringRef path,
                                            ModuleOp module) const override {
    if (failed(writeHostLibrary(kernels, path)))
      return failure();
    auto built = llvm::MemoryBuffer::getFile(path);
    if (!built)
      return module.emitError() << "cannot read back '" << path
                                << "': " << built.getError().message();
    return (*built)->getBuffer().str();
  }

  StringRef defaultCompute() const override { return "flops"; }
};
} // namespace

void mlir::ein::registerCpuTargetBackend() {
  registerTargetBackend(std::make_unique<CpuTargetBackend>());
}
