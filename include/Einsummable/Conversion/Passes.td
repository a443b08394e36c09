//===- Passes.td - Conversions out of ein -------------------*- tablegen -*-===//

#ifndef EINSUMMABLE_CONVERSION_PASSES_TD
#define EINSUMMABLE_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def EinLowerToCpu : Pass<"ein-lower-to-cpu", "::mlir::ModuleOp"> {
  let summary = "Compile the block kernels of device-level ein for the CPU runtime";
  let description = [{
    Every per-GPU block of the device-level function (`ein-synthesize-exchanges`)
    that is not a library gemm (block matmuls stay `gemm` library steps) gets
    a kernel: a function in the nested module `@ein_kernels` named by the
    block's `ein.kernel` attribute. A kernel reads its inputs and writes its
    result buffer. Join-aggs become `linalg.generic` on memrefs (aggregations
    reduce into their identity; bf16 and f16 blocks accumulate in f32 and
    round once; `ein.index` reads whole-tensor coordinates through the
    block's `ein.loop_offsets`). Composites spell out their stages: RMSNorm
    and softmax as a reduction then a map, attention as masked scores in f32,
    a softmax along the keys and the weighted values, GQA read through
    `h floordiv group`.

    The kernels module is then lowered to the LLVM dialect (linalg to loops,
    bf16/f16 arithmetic emulated in f32 with bf16 conversions expanded to
    integer ops, the bare-pointer calling convention) and each kernel gets
    the runtime's ABI, `void NAME(void *const *args, const int64_t *scalars)`
    (docs/bundle-format.md). `ein-write-bundle` compiles that module to
    `kernels/host.so`. `lower-to-llvm=false` stops at the linalg form.

    ```
    ein-opt examples/mlp.mlir --ein-attach-target=devices=2 --ein-plan \
      --ein-synthesize-exchanges --ein-lower-to-cpu
    ```
  }];
  let options = [
    Option<"lowerToLLVM", "lower-to-llvm", "bool", "true",
           "Lower the kernels to the LLVM dialect with the runtime's ABI">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
    "::mlir::linalg::LinalgDialect", "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect", "::mlir::LLVM::LLVMDialect",
    "::mlir::scf::SCFDialect", "::mlir::cf::ControlFlowDialect",
    "::mlir::affine::AffineDialect",
  ];
}

#endif // EINSUMMABLE_CONVERSION_PASSES_TD
