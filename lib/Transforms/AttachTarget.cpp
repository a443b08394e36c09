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
        StringRef(chip), StringRef(partials), StringRef(backend));
    if (!target)
      return signalPassFailure();
    StringRef name = EinDialect::getTargetAttrName();
    // A target that names no backend yet may take one, and a target asked
    // for without one leaves the module's backend as it is: each side is
    // compared with the backend the other names filled in.
    Attribute existing = module->getAttr(name);
    auto withBackend = [&](TargetAttr t, StringRef backend) {
      if (!t || !t.getBackend().empty() || backend.empty())
        return t;
      return TargetAttr::get(&getContext(), t.getDevices(), t.getTopology(),
                             t.getChip(), t.getPartials(), backend);
    };
    if (auto old = dyn_cast_or_null<TargetAttr>(existing)) {
      TargetAttr grown = withBackend(old, target.getBackend());
      target = withBackend(target, old.getBackend());
      existing = grown;
    }
    if (existing && existing != target) {
      module.emitError() << "module already targets " << module->getAttr(name)
                         << "; refusing to retarget it to " << target;
      return signalPassFailure();
    }
    module->setAttr(name, target);
  }
};
} // namespace
