//===- EinToCUDA.h - Block kernels to GPU kernels ---------------*- C++ -*-===//
//
// The pieces of ein-lower-to-cuda: validating the chip before any code
// generation (LLVM's fatal errors abort), turning each linalg op of a block
// kernel into a GPU kernel and its launch, and compiling the GPU module to a
// cubin.
//
//===----------------------------------------------------------------------===//

#ifndef EINSUMMABLE_CONVERSION_EINTOCUDA_EINTOCUDA_H
#define EINSUMMABLE_CONVERSION_EINTOCUDA_EINTOCUDA_H

#include "Einsummable/Dialect/Ein/IR/EinOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Pass/PassManager.h"

#include "ein/signature.h"

namespace mlir::ein {

/// Threads per block of the generated kernels.
inline constexpr int64_t kGpuThreadsPerBlock = 256;
/// The GPU module of a kernels module, and the cubin it becomes.
inline constexpr llvm::StringLiteral kDeviceModuleName = "ein_device";

/// The PTX features code generation for `chip` (sm_NN) needs, or failure
/// with the reason in `why`: chips below sm_70 and malformed names are
/// refused.
FailureOr<std::string> cudaFeaturesFor(StringRef chip, std::string &why);

/// Turns the block kernel `kernel` (linalg on memrefs, from
/// buildBlockKernel) into launches of GPU kernels built into `device`: its
/// scratch allocations become trailing function arguments (the bundle
/// allocates them), and each linalg op a `gpu.func` with one thread per
/// point of its parallel loops (the reduction loops run in the thread) and
/// a `gpu.launch_func` in its place. Fails with a diagnostic.
LogicalResult launchOnGpu(func::FuncOp kernel, gpu::GPUModuleOp device);

/// The block kernel of a row normalisation, `ein.rms_norm` (x, w, out) or
/// `ein.layer_norm` (x, [w, [b,]] out), as one GPU kernel, a warp a row:
/// the row's statistics with 16-byte loads and xor-shuffle all-reduces
/// (LayerNorm: the mean, then the squared deviations from it), then the
/// row normalised, scaled, shifted and stored. A row of up to 16 vectors a
/// lane stays in registers; a longer one is read again (from cache) for
/// each pass. Replaces the kernel function's body by its launch. False
/// (nothing changed) when the row length is not a multiple of the vector
/// width or the type is not a float of 32 bits or fewer.
FailureOr<bool> launchRowNormOnGpu(func::FuncOp kernel, Operation *norm,
                                   gpu::GPUModuleOp device);

/// Removes from every kernel of `device` the arguments its body never uses,
/// and from every launch of it in `kernels` their operands (a pooling's
/// window operand only gives its loops their bounds): what a kernel is
/// passed, it reads or writes, as its signature says.
void dropUnusedKernelArguments(ModuleOp kernels, gpu::GPUModuleOp device);

/// The signature table of the kernels of `device` (before its lowering to
/// NVVM): each memref argument's type, and its access from the memory
/// effects of the ops that use it (an op without declared effects counts as
/// reading and writing). Fails with a diagnostic for an argument a
/// signature cannot describe.
FailureOr<::ein::KernelSignatures> gpuKernelSignatures(gpu::GPUModuleOp device);

/// Lets the kernels of `device` whose every written argument is f16 or bf16
/// (by `signatures`) compute f32 division, exp, exp2, log, log2 and log10
/// with the GPU's approximate instructions: marks those ops `afn`, which
/// the NVVM lowering turns into div.approx.f32 and libdevice's __nv_fast_*
/// functions (relative errors near 2^-22, under the 2^-9 or 2^-12 the
/// result's rounding adds). Kernels that write anything wider (f32 results,
/// scratch or partials) keep IEEE division and the accurate functions, as do
/// sines, cosines, tangents and powers everywhere.
void approximateHalfResultMath(gpu::GPUModuleOp device,
                               const ::ein::KernelSignatures &signatures);

/// nvvm-attach-target, the GPU module to NVVM (bare-pointer memref
/// arguments: a kernel's parameters are the buffers' addresses) and to a
/// cubin with the toolkit's ptxas and libdevice.
void buildCudaDeviceLoweringPipeline(OpPassManager &pm, StringRef chip,
                                     StringRef features, StringRef toolkit);

/// Registers the CUDA backend's TargetBackend (Target/TargetBackend.h);
/// registerAllDialects calls it.
void registerCudaTargetBackend();

} // namespace mlir::ein

#endif // EINSUMMABLE_CONVERSION_EINTOCUDA_EINTOCUDA_H
