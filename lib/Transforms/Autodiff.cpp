//===- Autodiff.cpp - ein-autodiff ----------------------------------------===//

#include "Autodiff/Autodiff.h"
#include "Einsummable/Transforms/Passes.h"

namespace mlir::ein {
#define GEN_PASS_DEF_EINAUTODIFF
#include "Einsummable/Transforms/Passes.h.inc"
} // namespace mlir::ein

using namespace mlir;
using namespace mlir::ein;

namespace {
struct EinAutodiffPass
    : public mlir::ein::impl::EinAutodiffBase<EinAutodiffPass> {
  using Base::Base;

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal() && failed(autodiff_detail::appendGradients(func)))
        return signalPassFailure();
  }
};
} // namespace
