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
    and softmax as a reduction then a map, LayerNorm as two reductions (the
    sum, the squared deviations) then a map, attention as masked scores in f32,
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
    Option<"remarks", "remarks", "std::string", "\"missed\"",
           "missed: a remark at each product that runs as a generated "
           "kernel instead of a library gemm, saying why; none: silent">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
    "::mlir::linalg::LinalgDialect", "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect", "::mlir::LLVM::LLVMDialect",
    "::mlir::scf::SCFDialect", "::mlir::cf::ControlFlowDialect",
    "::mlir::affine::AffineDialect",
  ];
}

def EinLowerToCuda : Pass<"ein-lower-to-cuda", "::mlir::ModuleOp"> {
  let summary = "Compile the block kernels of device-level ein to a cubin";
  let description = [{
    The generic CUDA path. Every per-GPU block that is not a library gemm
    (block matmuls stay cuBLASLt `gemm` steps) gets the kernel function
    `ein-lower-to-cpu` would build (linalg on memrefs), in the nested module
    `@ein_kernels`, named by the block's `ein.kernel`. Its scratch buffers
    become trailing arguments (the bundle allocates them in the arena), and
    each of its linalg ops becomes a GPU kernel in `gpu.module @ein_device`
    with one thread per point of the op's parallel loops (256 a block,
    delinearised with the innermost loop fastest, so contiguous rows are
    read coalesced) running the op's reduction loops itself, launched by a
    `gpu.launch_func` in the kernel function. The GPU module is lowered to
    NVVM with bare-pointer arguments (a kernel's parameters are its buffers'
    addresses, the runtime's CUDA kernel ABI) and compiled to a cubin with
    the toolkit's `ptxas` and libdevice; `ein-write-bundle target=cuda`
    writes it as `kernels/device.cubin` and one kernel step per launch.

    The chip (`chip`, else the `#ein.target`'s) is checked before any code
    generation: LLVM's fatal errors would abort the process. Correct for any
    static shape; long reductions (one thread a row) are slow, which the
    fused kernels of the CUDA issues are for.

    ```
    ein-opt examples/mlp.mlir --ein-attach-target="devices=2 chip=sm_90" \
      --ein-plan --ein-synthesize-exchanges --ein-lower-to-cuda
    ```
  }];
  let options = [
    Option<"chip", "chip", "std::string", "\"\"",
           "The GPU chip, sm_NN (default: the #ein.target's)">,
    Option<"toolkit", "toolkit", "std::string", "\"/usr/local/cuda\"",
           "The CUDA toolkit whose ptxas and libdevice compile the kernels">,
    Option<"compile", "compile", "bool", "true",
           "Compile the GPU module to a cubin (false stops at the GPU "
           "dialect, to read the kernels)">,
    Option<"approxMath", "approx-math", "bool", "true",
           "In kernels whose results are all f16 or bf16, compute f32 "
           "division, exp and log with the GPU's approximate instructions "
           "(false: IEEE division and libdevice's accurate functions "
           "everywhere)">,
    Option<"remarks", "remarks", "std::string", "\"missed\"",
           "missed: a remark at each attention that misses the fused "
           "attention (its dtype, its head dimension) and each product that "
           "misses the library gemm, saying why; none: silent">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
    "::mlir::gpu::GPUDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::memref::MemRefDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::scf::SCFDialect", "::mlir::cf::ControlFlowDialect",
    "::mlir::affine::AffineDialect", "::mlir::vector::VectorDialect",
  ];
}

#endif // EINSUMMABLE_CONVERSION_PASSES_TD
