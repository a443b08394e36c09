//===- KernelLowering.cpp - Kernels module to the LLVM dialect ------------===//

#include "Einsummable/Conversion/EinToCPU/EinToCPU.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::ein;

LogicalResult mlir::ein::expandMathWithoutIntrinsics(ModuleOp kernels) {
  RewritePatternSet patterns(kernels.getContext());
  populatePolynomialApproximateErfPattern(patterns);
  populatePolynomialApproximateErfcPattern(patterns);
  return applyPatternsGreedily(kernels, std::move(patterns));
}

void mlir::ein::buildCpuKernelLoweringPipeline(OpPassManager &pm) {
  pm.addPass(createConvertLinalgToLoopsPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  // bf16 and f16 arithmetic in f32, then the bf16 conversions as integer
  // ops (a generic x86-64 has no bf16 instructions, and older C runtimes no
  // bf16 conversion helpers).
  math::MathExtendToSupportedTypesOptions extend;
  pm.addPass(math::createMathExtendToSupportedTypes(extend));
  arith::ArithEmulateUnsupportedFloatsOptions emulate;
  emulate.sourceTypeStrs = {"bf16", "f16"};
  emulate.targetTypeStr = "f32";
  pm.addPass(arith::createArithEmulateUnsupportedFloats(emulate));
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expand));
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  ConvertFuncToLLVMPassOptions func;
  func.useBarePtrCallConv = true;
  pm.addPass(createConvertFuncToLLVMPass(func));
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
}

LogicalResult mlir::ein::addKernelEntryPoints(ModuleOp kernels) {
  MLIRContext *ctx = kernels.getContext();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  SymbolTable symbols(kernels);
  SmallVector<LLVM::LLVMFuncOp> bodies;
  for (auto fn : kernels.getOps<LLVM::LLVMFuncOp>())
    if (!fn.isExternal())
      bodies.push_back(fn);
  for (LLVM::LLVMFuncOp body : bodies) {
    std::string name = body.getSymName().str();
    for (Type arg : body.getArgumentTypes())
      if (arg != ptr)
        return body.emitOpError()
               << "kernel takes a " << arg
               << " argument; the runtime passes buffer pointers only";
    if (failed(symbols.rename(body, StringAttr::get(ctx, name + ".body"))))
      return failure();
    body.setLinkage(LLVM::Linkage::Internal);
    OpBuilder b = OpBuilder::atBlockEnd(kernels.getBody());
    Location loc = body.getLoc();
    auto entry = LLVM::LLVMFuncOp::create(
        b, loc, name,
        LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), {ptr, ptr}));
    Block *block = entry.addEntryBlock(b);
    b.setInsertionPointToStart(block);
    SmallVector<Value> args;
    for (unsigned i = 0, e = body.getNumArguments(); i < e; ++i) {
      Value slot = LLVM::GEPOp::create(b, loc, ptr, ptr, block->getArgument(0),
                                       ArrayRef<LLVM::GEPArg>{int32_t(i)});
      args.push_back(LLVM::LoadOp::create(b, loc, ptr, slot));
    }
    LLVM::CallOp::create(b, loc, body, args);
    LLVM::ReturnOp::create(b, loc, ValueRange());
  }
  return success();
}
