//===- CpuTargetBackend.cpp - The CPU runtime, as the compiler sees it ---===//
//
// N virtual GPUs on the host: every composite but convolution runs as the
// runtime's library call (its fused attention takes any shape and dtype),
// block kernels compile to a shared library (ein-lower-to-cpu), and the
// planner charges FLOPs (the chip table's kernel times are a GPU's).
//
//===----------------------------------------------------------------------===//

#include "Einsummable/Conversion/EinToCPU/EinToCPU.h"
#include "Einsummable/Conversion/Passes.h"
#include "Einsummable/Target/TargetBackend.h"

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

  StringRef defaultCompute() const override { return "flops"; }
};
} // namespace

void mlir::ein::registerCpuTargetBackend() {
  registerTargetBackend(std::make_unique<CpuTargetBackend>());
}
