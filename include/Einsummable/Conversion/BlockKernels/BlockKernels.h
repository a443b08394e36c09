//===- BlockKernels.h - Device-level ein blocks as kernels ------*- C++ -*-===//
//
// The per-GPU block kernels of device-level ein as functions on memrefs
// whose bodies are linalg, shared by both lowerings: what ein-lower-to-cpu
// compiles to host code and what ein-lower-to-cuda tiles into GPU kernels.
// Block matmuls are not kernels: they become library gemm steps
// (matchLibraryGemm); attention blocks become the runtime's fused attention
// steps where it runs them (isLibraryAttention).
//
//===----------------------------------------------------------------------===//

#ifndef EINSUMMABLE_CONVERSION_BLOCKKERNELS_BLOCKKERNELS_H
#define EINSUMMABLE_CONVERSION_BLOCKKERNELS_BLOCKKERNELS_H

#include "Einsummable/Dialect/Ein/IR/EinGemm.h"
#include "Einsummable/Dialect/Ein/IR/EinOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include "ein/signature.h"
#include "ein/target.h"

namespace mlir::ein {

/// Whether the runtime's fused `attention` library call runs `attention`'s
/// block on `target` ("cpu" or "cuda"): always on the CPU; on CUDA when
/// query, key, value and result are all f16 or all bf16 with one head
/// dimension of 64 or 128 for keys and values (what both cuDNN's fused SDPA
/// and the runtime's own kernel run).
bool isLibraryAttention(AttentionOp attention, ::ein::Backend backend);

/// Why `attention`'s blocks do not run as the fused attention on `backend`
/// (its dtype, its head dimension, ...); empty when they do.
std::string whyNotLibraryAttention(AttentionOp attention,
                                   ::ein::Backend backend);

/// Why `conv`'s blocks do not run as the runtime's `conv` library call
/// (cuDNN's convolution) on `backend`: the CPU convolves in generated
/// kernels, and on CUDA the call takes bf16 or f16 blocks whose result is in
/// their own type (not partial sums in f32, of a cut of the input
/// channels); empty when they do.
std::string whyNotLibraryConv(ConvOp conv, ::ein::Backend backend);

/// Why `join`, a sum of products of its two inputs, is not a library gemm
/// (the loops it sums, its layout); empty when it is one or is no such
/// product.
std::string whyNotLibraryGemm(JoinAggOp join);

/// Whether `op` is a device-level block that needs a generated kernel for
/// `target`: a join-agg other than a library gemm, or a composite other than
/// a library attention or convolution.
bool needsBlockKernel(Operation *op, ::ein::Backend backend);

/// The float constant `value` of `type`.
Value floatConstant(OpBuilder &b, Location loc, Type type, double value);

/// `v` converted to the float type `to` (itself, extf, truncf, or through
/// f32 between the 16-bit formats).
Value castFloat(OpBuilder &b, Location loc, Value v, Type to);

/// The identity of aggregation `kind` (not `none`) in float `type`: 0, 1,
/// -inf for max, +inf for min.
Value aggregationIdentity(OpBuilder &b, Location loc, AggKind kind, Type type);

/// `acc` combined with `v` by aggregation `kind` (not `none`).
Value aggregationCombine(OpBuilder &b, Location loc, AggKind kind, Value acc,
                         Value v);

/// Builds `func.func @name(inputs..., result)` on static, row-major memrefs
/// at `builder`'s insertion point: the block computed with linalg ops,
/// reading its inputs and writing its result buffer. Accumulates in the
/// op's accumulator type (f32 for bf16 and f16) and rounds once at the end.
/// Fails with a diagnostic on `op` for what it cannot express.
FailureOr<func::FuncOp> buildBlockKernel(Operation *op, StringRef name,
                                         OpBuilder &builder);

/// The nested module that holds a program's block kernels.
inline constexpr llvm::StringLiteral kKernelsModuleName = "ein_kernels";

/// The kernels module nested in `module`, or null.
ModuleOp findKernelsModule(ModuleOp module);

/// Builds the kernel of every device-level block of `module`'s program
/// that needs one (needsBlockKernel) into a new nested module
/// `@ein_kernels` marked with `ein.kernel_target = target`, and names it in
/// the block's `ein.kernel`; records their signatures (the block's
/// operands read, its results written) in ein.kernel_signatures. Fails with a
/// diagnostic, also when the module already has kernels. With `remarks`, an
/// attention that misses the fused attention or a product that misses the
/// library gemm gets a remark saying why (once per source location).
FailureOr<ModuleOp> outlineBlockKernels(ModuleOp module, ::ein::Backend backend,
                                        bool remarks = false);

/// The signature table entry of a kernel argument of memref type `type`
/// with `access`; fails (no diagnostic) for an element type bundles lack.
FailureOr<::ein::SignatureArg> signatureArg(Type type, ::ein::Access access);

/// Records `signatures` on the kernels module (ein.kernel_signatures) and
/// embeds them as the NUL-terminated constant `ein_kernel_signatures` (an
/// LLVM global in address space `addressSpace`, external, so the runtime
/// finds it) at the end of `body`: the kernels module itself on the CPU,
/// the GPU module on CUDA.
void embedKernelSignatures(ModuleOp kernels,
                           const ::ein::KernelSignatures &signatures,
                           Block *body, unsigned addressSpace);

} // namespace mlir::ein

#endif // EINSUMMABLE_CONVERSION_BLOCKKERNELS_BLOCKKERNELS_H
