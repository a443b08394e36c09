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
    std::string error;
    FailureOr<autodiff_detail::OptimizerConfig> config =
        autodiff_detail::parseOptimizer(optimizer, error);
    if (failed(config)) {
      getOperation().emitError() << "ein-autodiff: " << error;
      return signalPassFailure();
    }
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal() &&
          failed(autodiff_detail::appendGradients(func, *config)))
        return signalPassFailure();
  }
};
} // namespace
