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

#include "mlir/Dialect/Math/IR/Math.h"

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

/// What the fusion of one block came to.
enum class Outcome { Fused, NoGemm, Missed };

/// `block` and the gemm it reads through input `i` as one ein.gemm
/// (Fused), or left alone: it reads no library gemm it alone reads on its
/// GPU (NoGemm), or it does but computes something else (Missed).
Outcome fuse(JoinAggOp block, unsigned i) {
  auto gemm = block.getInputs()[i].getDefiningOp<JoinAggOp>();
  if (!gemm || gemm.getDevice() != block.getDevice() ||
      !gemm.getResult().hasOneUse() ||
      gemm->hasAttr(EinDialect::getKernelAttrName()) ||
      block->hasAttr(EinDialect::getKernelAttrName()))
    return Outcome::NoGemm;
  FailureOr<LibraryGemm> library = matchLibraryGemm(gemm);
  if (failed(library))
    return Outcome::NoGemm;
  FailureOr<GemmEpilogue> epilogue = matchGemmEpilogue(block, i);
  if (failed(epilogue))
    return Outcome::Missed;
  auto type = cast<RankedTensorType>(block.getType());
  Value a = gemm.getInputs()[0], b = gemm.getInputs()[1];
  Value bias = epilogue->bias ? block.getInputs()[*epilogue->bias] : Value();
  Value addend =
      epilogue->addend ? block.getInputs()[*epilogue->addend] : Value();
  Type element = type.getElementType();
  if (!writable(cast<ShapedType>(a.getType()).getElementType(), element))
    return Outcome::Missed;
  for (Value v : {bias, addend})
    if (v && cast<ShapedType>(v.getType()).getElementType() != element)
      return Outcome::Missed;
  OpBuilder builder(block);
  Location loc =
      FusedLoc::get(builder.getContext(), {gemm.getLoc(), block.getLoc()});
  auto fused = GemmOp::create(builder, loc, type, epilogue->activation, a, b,
                              bias, addend, library->transposeA,
                              library->transposeB, *block.getDevice());
  block.getResult().replaceAllUsesWith(fused.getResult());
  block.erase();
  gemm.erase();
  return Outcome::Fused;
}

/// The erf (GELU's exact form) `block`'s region takes, or null.
Operation *erfIn(JoinAggOp block) {
  for (Operation &op : block.getJoin().front())
    if (isa<math::ErfOp>(op))
      return &op;
  return nullptr;
}

struct EinFuseGemmEpiloguesPass
    : public mlir::ein::impl::EinFuseGemmEpiloguesBase<
          EinFuseGemmEpiloguesPass> {
  using Base::Base;

  void runOnOperation() override {
    FailureOr<func::FuncOp> func = selectProgramFunction(getOperation(), "");
    if (failed(func))
      return signalPassFailure();
    if (remarks != "missed" && remarks != "none") {
      getOperation()->emitError()
          << "remarks must be missed or none, got '" << remarks << "'";
      return signalPassFailure();
    }
    SmallVector<JoinAggOp> blocks;
    func->walk([&](JoinAggOp op) {
      if (op.getDevice() && op.getAgg() == AggKind::None)
        blocks.push_back(op);
    });
    // One remark per source op (its device blocks share its location).
    llvm::DenseSet<Location> told;
    for (JoinAggOp block : blocks) {
      bool missed = false;
      for (unsigned i = 0, e = block.getInputs().size(); i < e; ++i) {
        Outcome outcome = fuse(block, i);
        if (outcome == Outcome::Fused) {
          missed = false;
          break;
        }
        missed |= outcome == Outcome::Missed;
      }
      // At the erf: fused blocks take their consumer's location, the erf
      // keeps its own op's.
      Operation *erf = missed ? erfIn(block) : nullptr;
      if (erf && remarks == "missed" && told.insert(erf->getLoc()).second)
        mlir::emitRemark(erf->getLoc())
            << "this GELU after a gemm runs as a kernel: it is erf's, and a "
               "gemm's epilogue computes GELU's tanh approximation "
               "(gelu(approximate=\"tanh\"))";
    }
  }
};

} // namespace
