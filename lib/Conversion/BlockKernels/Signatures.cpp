//===- Signatures.cpp - Kernel signature tables, recorded and embedded ----===//
//
// What a kernel library says its kernels take (ein/signature.h): computed
// where the kernels are built, kept on the kernels module for
// ein-write-bundle, and embedded in the library for the runtime.
//
//===----------------------------------------------------------------------===//

#include "Einsummable/Conversion/BlockKernels/BlockKernels.h"
#include "Einsummable/Dialect/Ein/IR/EinProgramForm.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;
using namespace mlir::ein;

FailureOr<::ein::SignatureArg> mlir::ein::signatureArg(Type type,
                                                       ::ein::Access access) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref || !memref.hasStaticShape())
    return failure();
  std::optional<::ein::DType> dtype = programDType(memref.getElementType());
  if (!dtype)
    return failure();
  ::ein::SignatureArg arg;
  arg.dtype = *dtype;
  arg.shape.assign(memref.getShape().begin(), memref.getShape().end());
  arg.access = access;
  return arg;
}

void mlir::ein::embedKernelSignatures(ModuleOp kernels,
                                      const ::ein::KernelSignatures &signatures,
                                      Block *body, unsigned addressSpace) {
  MLIRContext *ctx = kernels.getContext();
  std::string text = ::ein::writeKernelSignatures(signatures);
  kernels->setAttr(EinDialect::getKernelSignaturesAttrName(),
                   StringAttr::get(ctx, text));
  text.push_back('\0');
  OpBuilder b = OpBuilder::atBlockEnd(body);
  auto type = LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8), text.size());
  LLVM::GlobalOp::create(b, kernels.getLoc(), type, /*isConstant=*/true,
                         LLVM::Linkage::External, ::ein::kSignatureSymbol,
                         StringAttr::get(ctx, text), /*alignment=*/0,
                         addressSpace);
}
