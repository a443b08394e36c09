//===- FoldAttentionViews.cpp - ein-fold-attention-views ------------------===//
//
// Library attention reads its query, key and value, and writes its result,
// as strided views (traceStridedView) where they are copies of one block:
// the QKV split and the head transposes around it become no steps at all.
//
//===----------------------------------------------------------------------===//

#include "Einsummable/Conversion/BlockKernels/BlockKernels.h"
#include "Einsummable/Conversion/BlockKernels/StridedView.h"
#include "Einsummable/Program/ExportProgram.h"
#include "Einsummable/Target/TargetBackend.h"
#include "Einsummable/Transforms/Passes.h"

#include "ein/target.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::ein {
#define GEN_PASS_DEF_EINFOLDATTENTIONVIEWS
#include "Einsummable/Transforms/Passes.h.inc"
} // namespace mlir::ein

using namespace mlir;
using namespace mlir::ein;

namespace {

/// Whether `op` is one of the copies a view stands for.
bool isCopy(Operation *op) {
  auto transpose = dyn_cast_or_null<JoinAggOp>(op);
  return isa_and_nonnull<tensor::ExtractSliceOp, ReshapeOp>(op) ||
         (transpose && isExactTranspose(transpose));
}

/// Erases the copies producing `values` (and what they copy) that nothing
/// reads any more. The candidates are gathered first: one chain may feed
/// another, so an op is never looked at after it is erased.
void eraseDeadCopies(ArrayRef<Value> values) {
  llvm::SetVector<Operation *> candidates;
  SmallVector<Value> worklist(values);
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val().getDefiningOp();
    if (isCopy(op) && candidates.insert(op))
      llvm::append_range(worklist, op->getOperands());
  }
  for (bool erased = true; erased;) {
    erased = false;
    for (Operation *op : candidates.takeVector()) {
      if (op->use_empty()) {
        op->erase();
        erased = true;
      } else {
        candidates.insert(op);
      }
    }
  }
}

/// `attention`'s operands read through views, and its result written
/// through one where a transpose alone reads it.
void foldViews(AttentionOp attention) {
  OpBuilder builder(attention);
  // One view of an operand read twice (k and v of one tensor).
  llvm::SmallDenseMap<Value, Value> viewed;
  for (OpOperand &operand : attention->getOpOperands()) {
    Value copy = operand.get();
    if (Value known = viewed.lookup(copy)) {
      operand.set(known);
      continue;
    }
    StridedView view = traceStridedView(copy);
    if (view.source == copy || isDenseView(view, copy))
      continue;
    Value made = ViewOp::create(builder, copy.getLoc(), copy.getType(),
                                view.source, view.offset, view.strides);
    viewed[copy] = made;
    operand.set(made);
  }
  eraseDeadCopies(llvm::to_vector(llvm::make_first_range(viewed)));
  Value result = attention.getResult();
  if (!result.hasOneUse())
    return;
  auto transpose = dyn_cast<JoinAggOp>(*result.getUsers().begin());
  if (!transpose || !isExactTranspose(transpose) ||
      transpose->getAttr("device") != attention->getAttr("device"))
    return;
  StridedView view = traceStridedView(transpose.getResult());
  builder.setInsertionPoint(transpose);
  auto written =
      ViewOp::create(builder, transpose.getLoc(), transpose.getType(), result,
                     view.offset, view.strides);
  transpose.getResult().replaceAllUsesWith(written.getResult());
  transpose.erase();
}

struct EinFoldAttentionViewsPass
    : public mlir::ein::impl::EinFoldAttentionViewsBase<
          EinFoldAttentionViewsPass> {
  using Base::Base;

  void runOnOperation() override {
    FailureOr<func::FuncOp> func = selectProgramFunction(getOperation(), "");
    if (failed(func))
      return signalPassFailure();
    FailureOr<::ein::Backend> backend =
        resolveBackend(getOperation(), target, target.hasValue(), "target: ");
    if (failed(backend))
      return signalPassFailure();
    SmallVector<AttentionOp> attentions;
    func->walk([&](AttentionOp op) {
      if (op->hasAttr("device") && isLibraryAttention(op, *backend))
        attentions.push_back(op);
    });
    for (AttentionOp attention : attentions)
      foldViews(attention);
  }
};

} // namespace
