//===- CudaTargetBackend.cpp - The CUDA runtime, as the compiler sees it --===//
//
// CUDA GPUs: attention of f16 or bf16 with a head dimension of 64 or 128 runs
// as the runtime's fused attention (cuDNN's SDPA or its own kernel), bf16 and
// f16 convolutions as cuDNN's; block kernels become GPU kernels in one cubin
// (ein-lower-to-cuda; the bundle ships it as kernels/device.cubin), and the
// planner prices kernels by the chip table's measured times.
//
//===----------------------------------------------------------------------===//

#include "Einsummable/Conversion/EinToCUDA/EinToCUDA.h"
#include "Einsummable/Conversion/Passes.h"
#include "Einsummable/Target/TargetBackend.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::ein;

namespace {
class CudaTargetBackend : public TargetBackend {
public:
  ::ein::Backend kind() const override { return ::ein::Backend::Cuda; }

  std::string whyNotLibraryAttention(AttentionOp attention) const override {
    auto type = [](Value v) { return cast<ShapedType>(v.getType()); };
    ShapedType q = type(attention.getQuery()), k = type(attention.getKey()),
               v = type(attention.getValue()), o = type(attention.getResult());
    Type element = q.getElementType();
    std::string text;
    llvm::raw_string_ostream os(text);
    if (!element.isBF16() && !element.isF16()) {
      os << "it is in " << element
         << " (the fused attention takes bf16 or f16)";
      return text;
    }
    for (ShapedType t : {k, v, o})
      if (t.getElementType() != element || t.getRank() != 4 || q.getRank() != 4)
        return "its query, key, value and result are not all rank-4 tensors "
               "of one element type";
    int64_t headDim = q.getShape().back();
    if (headDim != 64 && headDim != 128)
      os << "its head dimension is " << headDim
         << " (the fused attention takes 64 or 128)";
    else if (k.getShape().back() != headDim || v.getShape().back() != headDim)
      os << "its key and value head dimensions (" << k.getShape().back() << ", "
         << v.getShape().back() << ") differ from the query's (" << headDim
         << ")";
    return text;
  }

  bool hasLibraryConv() const override { return true; }

  std::string whyNotLibraryConv(ConvOp conv) const override {
    Type element = cast<ShapedType>(conv.getInput().getType()).getElementType();
    Type result = cast<ShapedType>(conv.getType()).getElementType();
    if (!element.isBF16() && !element.isF16())
      return "it is in " + llvm::formatv("{0}", element).str() +
             " (the cuDNN convolution step takes bf16 or f16)";
    if (result != element)
      return "its block holds partial sums in " +
             llvm::formatv("{0}", result).str() +
             " (its input channels are cut; the cuDNN step writes " +
             llvm::formatv("{0}", element).str() + ")";
    return "";
  }

  StringRef loweringPassName() const override { return "ein-lower-to-cuda"; }

  void addLoweringPasses(OpPassManager &pm,
                         const BackendLoweringOptions &options) const override {
    EinLowerToCudaOptions cuda;
    cuda.toolkit = options.cudaToolkit;
    cuda.remarks = options.remarks;
    cuda.approxMath = options.approxMath;
    pm.addPass(createEinLowerToCuda(cuda));
  }

  bool launchesGpuKernels() const override { return true; }

  StringRef kernelLibraryFile() const override {
    return "kernels/device.cubin";
  }

  LogicalResult checkKernelsLowered(ModuleOp kernels,
                                    Operation *caller) const override {
    if (failed(cubinOf(kernels)))
      return caller->emitOpError() << "calls GPU kernels that are not compiled "
                                      "to one cubin (run ein-lower-to-cuda)";
    return success();
  }

  FailureOr<std::string> buildKernelLibrary(ModuleOp kernels, StringRef,
                                            ModuleOp) const override {
    return cubinOf(kernels);
  }

  StringRef defaultCompute() const override { return "kernels"; }

private:
  /// The one cubin ein-lower-to-cuda compiled `kernels`' GPU module to.
  static FailureOr<std::string> cubinOf(ModuleOp kernels) {
    auto cubin = kernels.lookupSymbol<gpu::BinaryOp>(kDeviceModuleName);
    if (!cubin || cubin.getObjects().size() != 1)
      return failure();
    return cast<gpu::ObjectAttr>(cubin.getObjects()[0])
        .getObject()
        .getValue()
        .str();
  }
};
} // namespace

void mlir::ein::registerCudaTargetBackend() {
  registerTargetBackend(std::make_unique<CudaTargetBackend>());
}
