//===- AttachTarget.cpp - ein-attach-target -----------------------------===//

#include "Einsummable/Dialect/Ein/IR/EinAttrs.h"
#include "Einsummable/Transforms/Passes.h"

#include "ein/target.h"
#include "ein/topology.h"

namespace mlir::ein {
#define GEN_PASS_DEF_EINATTACHTARGET
#include "Einsummable/Transforms/Passes.h.inc"
} // namespace mlir::ein

using namespace mlir;
using namespace mlir::ein;

namespace {
struct EinAttachTargetPass
    : public mlir::ein::impl::EinAttachTargetBase<EinAttachTargetPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto emitError = [&] { return module.emitError(); };
    // The target carries the topology resolved: a preset's name, or a
    // file's JSON text, so no later stage reads a file.
    std::string spec, error;
    if (!::ein::checkDevices(devices, error)) {
      emitError() << "#ein.target devices " << error;
      return signalPassFailure();
    }
    if (!::ein::resolveTopology(topology, devices, spec, error)) {
      emitError() << error;
      return signalPassFailure();
    }
    TargetAttr target = TargetAttr::getChecked(
        emitError, &getContext(), int64_t(devices), StringRef(spec),
        StringRef(chip), StringRef(partials));
    if (!target)
      return signalPassFailure();
    StringRef name = EinDialect::getTargetAttrName();
    if (Attribute existing = module->getAttr(name);
        existing && existing != target) {
      module.emitError() << "module already targets " << existing
                         << "; refusing to retarget it to " << target;
      return signalPassFailure();
    }
    module->setAttr(name, target);
  }
};
} // namespace
