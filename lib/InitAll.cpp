//===- InitAll.cpp - Register everything ein-opt knows ------------------===//

#include "Einsummable/InitAll.h"

#include "Einsummable/Conversion/EinToCPU/EinToCPU.h"
#include "Einsummable/Conversion/EinToCUDA/EinToCUDA.h"
#include "Einsummable/Conversion/Passes.h"
#include "Einsummable/Dialect/Ein/IR/EinDialect.h"
#include "Einsummable/Pipelines/Pipelines.h"
#include "Einsummable/Transforms/Passes.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVM.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

void mlir::ein::registerAllDialects(DialectRegistry &registry) {
  registry
      .insert<ein::EinDialect, arith::ArithDialect, func::FuncDialect,
              gpu::GPUDialect, LLVM::LLVMDialect, NVVM::NVVMDialect,
              linalg::LinalgDialect, math::MathDialect, memref::MemRefDialect,
              scf::SCFDialect, shard::ShardDialect, tensor::TensorDialect>();
  // ein-write-bundle translates CPU kernels to LLVM IR.
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  // ein-lower-to-cuda lowers GPU modules to NVVM and compiles them to cubins.
  registerGPUDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  registerConvertFuncToLLVMInterface(registry);
  index::registerConvertIndexToLLVMInterface(registry);
  registerConvertMathToLLVMInterface(registry);
  registerConvertMemRefToLLVMInterface(registry);
  registerConvertNVVMToLLVMInterface(registry);
  vector::registerConvertVectorToLLVMInterface(registry);
  // The compiler's per-backend choices (Target/TargetBackend.h).
  registerCpuTargetBackend();
  registerCudaTargetBackend();
}

void mlir::ein::registerAllPasses() {
  ein::registerEinPasses();
  ein::registerEinConversionPasses();
  ein::registerEinPipelines();
  // Upstream cleanups that pipelines and tests use.
  registerCanonicalizerPass();
  registerCSEPass();
  registerSymbolDCEPass();
}
