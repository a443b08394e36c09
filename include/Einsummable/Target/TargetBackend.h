//===- TargetBackend.h - What the compiler asks of a backend ----*- C++ -*-===//
//
// Every choice the compiler makes per backend (cpu, cuda) sits behind this
// interface, as the runtime's choices sit behind its DeviceBackend: which
// composites run as library calls there, which passes lower device-level
// ein to its kernels, how the planner prices its kernels. Each backend
// implements it in its own folder (lib/Conversion/EinToCPU,
// lib/Conversion/EinToCUDA) and registers it with registerAllDialects
// (InitAll.h); a new backend adds an implementation instead of editing
// branches (docs/adding-a-backend.md).
//
//===----------------------------------------------------------------------===//

#ifndef EINSUMMABLE_TARGET_TARGETBACKEND_H
#define EINSUMMABLE_TARGET_TARGETBACKEND_H

#include "Einsummable/Dialect/Ein/IR/EinOps.h"

#include "ein/target.h"

#include "mlir/Pass/PassManager.h"

#include <memory>
#include <string>

namespace mlir::ein {

/// The options of a backend's lowering passes that ein-compile exposes.
struct BackendLoweringOptions {
  /// The CUDA toolkit whose ptxas and libdevice compile GPU kernels.
  std::string cudaToolkit = "/usr/local/cuda";
  /// "missed": remark where a library step falls back to generated code.
  std::string remarks = "missed";
  /// Approximate f32 division, exp and log in kernels of f16/bf16 results.
  bool approxMath = true;
};

class TargetBackend {
public:
  virtual ~TargetBackend();

  virtual ::ein::Backend kind() const = 0;

  /// Why the runtime's fused `attention` library call does not run
  /// `attention`'s blocks here (its dtype, its head dimension, ...); empty
  /// when it does.
  virtual std::string whyNotLibraryAttention(AttentionOp attention) const = 0;

  /// Whether the runtime runs some convolutions as a library call (cuDNN)
  /// here; where it runs none, no remark says why a convolution missed it.
  virtual bool hasLibraryConv() const = 0;

  /// Why `conv`'s blocks do not run as the runtime's `conv` library call
  /// here; empty when they do.
  virtual std::string whyNotLibraryConv(ConvOp conv) const = 0;

  /// The pass that compiles device-level ein's block kernels for this
  /// backend (what must run before ein-write-bundle).
  virtual llvm::StringRef loweringPassName() const = 0;

  /// Adds the passes that compile device-level ein's block kernels for
  /// this backend to `pm`.
  virtual void
  addLoweringPasses(OpPassManager &pm,
                    const BackendLoweringOptions &options) const = 0;

  /// Whether a block with a generated kernel runs as the launches of GPU
  /// kernels its kernel function makes (gpu.launch_func), rather than one
  /// call of a host function.
  virtual bool launchesGpuKernels() const = 0;

  /// The bundle's kernel library, inside the bundle (kernels/host.so,
  /// kernels/device.cubin).
  virtual llvm::StringRef kernelLibraryFile() const = 0;

  /// Checks that `kernels` (the module of outlined block kernels that
  /// `caller` calls) is lowered as this backend's bundle needs; emits on
  /// `caller` and fails.
  virtual LogicalResult checkKernelsLowered(ModuleOp kernels,
                                            Operation *caller) const = 0;

  /// The bytes of the kernel library of `kernels` (checked lowered), which
  /// the bundle writer writes at `path` (a backend may build it there
  /// first: the CPU's C compiler links it in place); emits on `module` and
  /// fails.
  virtual FailureOr<std::string> buildKernelLibrary(ModuleOp kernels,
                                                    llvm::StringRef path,
                                                    ModuleOp module) const = 0;

  /// The planner's compute term when not asked for: "kernels" (measured
  /// kernel times, where the backend's kernels are the chip table's) or
  /// "flops".
  virtual llvm::StringRef defaultCompute() const = 0;
};

/// Makes `backend` the implementation of its kind (replacing an earlier
/// one). registerAllDialects registers the CPU and CUDA backends.
void registerTargetBackend(std::unique_ptr<TargetBackend> backend);

/// The registered implementation of `kind`. A kind no one registered is a
/// programming error (a tool that skipped registerAllDialects): reported as
/// a fatal error naming the kind.
const TargetBackend &getTargetBackend(::ein::Backend kind);

/// The backend a pass lowers `module` for: its `target` option where given
/// (which must agree with the backend `#ein.target` names, if it names
/// one), else the target's, else the option's default. A misspelled option
/// or a disagreement is an error on the module whose text starts with
/// `prefix` (the pass's own wording, e.g. "target: ").
FailureOr<::ein::Backend> resolveBackend(ModuleOp module,
                                         llvm::StringRef option,
                                         bool optionGiven,
                                         llvm::StringRef prefix);

} // namespace mlir::ein

#endif // EINSUMMABLE_TARGET_TARGETBACKEND_H
