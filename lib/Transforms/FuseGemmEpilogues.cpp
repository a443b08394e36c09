//===- FuseGemmEpilogues.cpp - ein-fuse-gemm-epilogues --------------------===//
//
// Folds the elementwise block that alone reads a library gemm's result (a
// bias add, a residual add, an activation; matchGemmEpilogue) into one
// ein.gemm, which the bundle runs as one gemm step with an epilogue.
//
//===----------------------------------------------------------------------===//

#include "Einsummable/Conversion/BlockKernels/BlockKernels.h"
#include "Einsummable/Conversion/BlockKernels/GemmEpilogue.h"
#include "Einsummable/Program/ExportProgram.h"
#include "Einsummable/Transforms/Passes.h"

namespace mlir::ein {
#define GEN_PASS_DEF_EINFUSEGEMMEPILOGUES
#include "Einsummable/Transforms/Passes.h.inc"
} // namespace mlir::ein

using namespace mlir;
using namespace mlir::ein;

namespace {

/// Whether a gemm of `operands` can write `result` elements: cuBLASLt
/// writes f32 or the operands' own type.
bool writable(Type operands, Type result) {
  return result == operands || result.isF32();
}

/// `block` and the gemm it reads through input `i` as one ein.gemm, or
/// null where they are not one.
GemmOp fuse(JoinAggOp block, unsigned i) {
  auto gemm = block.getInputs()[i].getDefiningOp<JoinAggOp>();
  if (!gemm || gemm.getDevice() != block.getDevice() ||
      !gemm.getResult().hasOneUse() ||
      gemm->hasAttr(EinDialect::getKernelAttrName()) ||
      block->hasAttr(EinDialect::getKernelAttrName()))
    return nullptr;
  FailureOr<LibraryGemm> library = matchLibraryGemm(gemm);
  if (failed(library))
    return nullptr;
  FailureOr<GemmEpilogue> epilogue = matchGemmEpilogue(block, i);
  if (failed(epilogue))
    return nullptr;
  auto type = cast<RankedTensorType>(block.getType());
  Value a = gemm.getInputs()[0], b = gemm.getInputs()[1];
  Value bias = epilogue->bias ? block.getInputs()[*epilogue->bias] : Value();
  Value addend =
      epilogue->addend ? block.getInputs()[*epilogue->addend] : Value();
  Type element = type.getElementType();
  if (!writable(cast<ShapedType>(a.getType()).getElementType(), element))
    return nullptr;
  for (Value v : {bias, addend})
    if (v && cast<ShapedType>(v.getType()).getElementType() != element)
      return nullptr;
  OpBuilder builder(block);
  Location loc =
      FusedLoc::get(builder.getContext(), {gemm.getLoc(), block.getLoc()});
  auto fused = GemmOp::create(builder, loc, type, epilogue->activation, a, b,
                              bias, addend, library->transposeA,
                              library->transposeB, *block.getDevice());
  block.getResult().replaceAllUsesWith(fused.getResult());
  block.erase();
  gemm.erase();
  return fused;
}

struct EinFuseGemmEpiloguesPass
    : public mlir::ein::impl::EinFuseGemmEpiloguesBase<
          EinFuseGemmEpiloguesPass> {
  using Base::Base;

  void runOnOperation() override {
    FailureOr<func::FuncOp> func = selectProgramFunction(getOperation(), "");
    if (failed(func))
      return signalPassFailure();
    SmallVector<JoinAggOp> blocks;
    func->walk([&](JoinAggOp op) {
      if (op.getDevice() && op.getAgg() == AggKind::None)
        blocks.push_back(op);
    });
    for (JoinAggOp block : blocks)
      for (unsigned i = 0, e = block.getInputs().size(); i < e; ++i)
        if (fuse(block, i))
          break;
  }
};

} // namespace
