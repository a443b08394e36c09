//===- WriteBundle.cpp - ein-write-bundle ---------------------------------===//
//
// A thin shell over the bundle writer (lib/Target/Bundle).
//
//===----------------------------------------------------------------------===//

#include "Einsummable/Target/Bundle/BundleWriter.h"
#include "Einsummable/Transforms/Passes.h"

namespace mlir::ein {
#define GEN_PASS_DEF_EINWRITEBUNDLE
#include "Einsummable/Transforms/Passes.h.inc"
} // namespace mlir::ein

using namespace mlir;
using namespace mlir::ein;

namespace {
struct EinWriteBundlePass
    : public mlir::ein::impl::EinWriteBundleBase<EinWriteBundlePass> {
  using Base::Base;

  void runOnOperation() override {
    BundleOptions options;
    options.dir = dir;
    options.target = target;
    options.targetGiven = target.hasValue();
    options.reference = reference;
    options.memoryLimit = memoryLimit;
    if (failed(writeBundle(getOperation(), options)))
      return signalPassFailure();
    markAllAnalysesPreserved();
  }
};
} // namespace
