//===- MarkWeights.cpp - ein-mark-weights -------------------------------===//

#include "Einsummable/Dialect/Ein/IR/EinDialect.h"
#include "Einsummable/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::ein {
#define GEN_PASS_DEF_EINMARKWEIGHTS
#include "Einsummable/Transforms/Passes.h.inc"
} // namespace mlir::ein

using namespace mlir;
using namespace mlir::ein;

namespace {

/// The argument `item` names in `func` (a position or a loc name), or -1.
int64_t argumentOf(func::FuncOp func, StringRef item) {
  int64_t position;
  if (!item.getAsInteger(10, position))
    return position >= 0 && position < func.getNumArguments() ? position : -1;
  for (BlockArgument arg : func.getArguments())
    if (auto name = dyn_cast<NameLoc>(arg.getLoc()))
      if (name.getName() == item)
        return arg.getArgNumber();
  return -1;
}

struct EinMarkWeightsPass
    : public mlir::ein::impl::EinMarkWeightsBase<EinMarkWeightsPass> {
  using Base::Base;

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      for (const std::string &item : args) {
        int64_t arg = argumentOf(func, item);
        if (arg < 0) {
          func.emitOpError()
              << "has no argument '" << item
              << "' to mark as a weight: it takes " << func.getNumArguments()
              << " arguments (give 0-based positions, or names "
                 "given by an argument's loc(\"name\"))";
          return signalPassFailure();
        }
        func.setArgAttr(arg, EinDialect::getWeightAttrName(),
                        UnitAttr::get(&getContext()));
      }
    }
  }
};

} // namespace
