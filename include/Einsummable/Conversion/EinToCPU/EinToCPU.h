//===- EinToCPU.h - Block kernels to host code ------------------*- C++ -*-===//
//
// The pieces of ein-lower-to-cpu and of the CPU bundle writer: the kernels
// module's name and marker, its lowering to the LLVM dialect, the runtime's
// kernel ABI, and its compilation to a shared library.
//
//===----------------------------------------------------------------------===//

#ifndef EINSUMMABLE_CONVERSION_EINTOCPU_EINTOCPU_H
#define EINSUMMABLE_CONVERSION_EINTOCPU_EINTOCPU_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

namespace mlir::ein {

/// Rewrites the math ops LLVM has no intrinsic for (erf, erfc) in the
/// kernels into the polynomial approximations upstream MLIR provides, so
/// the pipeline below lowers every op join regions may hold.
LogicalResult expandMathWithoutIntrinsics(ModuleOp kernels);

/// Kernels on memrefs (linalg, arith, math) to the LLVM dialect with the
/// bare-pointer calling convention; bf16 and f16 arithmetic in f32.
void buildCpuKernelLoweringPipeline(OpPassManager &pm);

/// Gives every kernel of a lowered kernels module the runtime's ABI,
/// `void NAME(void *const *args, const int64_t *scalars)`, around its
/// body (renamed `NAME.body`, internal).
LogicalResult addKernelEntryPoints(ModuleOp kernels);

/// Compiles a lowered kernels module to generic x86-64 object code and links
/// it into the shared library `path` with the system's C compiler driver
/// (`cc`, or $EIN_HOST_CC). Errors are reported on `kernels`.
LogicalResult writeHostLibrary(ModuleOp kernels, StringRef path);

/// Registers the CPU backend's TargetBackend (Target/TargetBackend.h);
/// registerAllDialects calls it.
void registerCpuTargetBackend();

} // namespace mlir::ein

#endif // EINSUMMABLE_CONVERSION_EINTOCPU_EINTOCPU_H
