//===- EinAttrs.cpp - ein attributes ------------------------------------===//

#include "Einsummable/Dialect/Ein/IR/EinAttrs.h"
#include "Einsummable/Dialect/Ein/IR/EinDialect.h"
#include "ein/target.h"
#include "ein/topology.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::ein;

#include "Einsummable/Dialect/Ein/IR/EinEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "Einsummable/Dialect/Ein/IR/EinAttrs.cpp.inc"

void EinDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "Einsummable/Dialect/Ein/IR/EinAttrs.cpp.inc"
      >();
}

LogicalResult TargetAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 int64_t devices, StringRef topology,
                                 StringRef chip, StringRef partials,
                                 StringRef backend) {
  // The format library's validators: the compiler and the runtime share
  // them, so they cannot disagree.
  std::string error;
  if (!::ein::checkDevices(devices, error))
    return emitError() << "#ein.target devices " << error;
  ::ein::Topology unused;
  if (!::ein::makeTopology(topology.str(), devices, unused, error))
    return emitError() << error;
  if (!::ein::checkChipName(chip.str(), error))
    return emitError() << error;
  if (partials != "acc" && partials != "out")
    return emitError() << "#ein.target partials must be acc or out, got '"
                       << partials << "'";
  if (!backend.empty()) {
    ::ein::Backend kind;
    if (!::ein::parseBackend(backend.str(), kind, error))
      return emitError() << "#ein.target backend " << error;
    // A cpu target may carry any chip (the one its plan is costed for); a
    // cuda bundle runs on the chip it names.
    if (kind == ::ein::Backend::Cuda &&
        !::ein::checkChipForBackend(kind, chip.str(), error))
      return emitError() << "#ein.target backend cuda: " << error;
  }
  return success();
}

std::optional<::ein::Backend> TargetAttr::getBackendKind() const {
  ::ein::Backend kind;
  std::string unused;
  if (getBackend().empty() ||
      !::ein::parseBackend(getBackend().str(), kind, unused))
    return std::nullopt;
  return kind;
}

LogicalResult SpecAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               ArrayRef<int64_t> parts) {
  for (auto [i, p] : llvm::enumerate(parts))
    if (p < 1)
      return emitError() << "#ein.spec part " << i << " is " << p
                         << "; every loop needs at least 1 part";
  return success();
}

int64_t SpecAttr::getNumJoinBlocks() const {
  int64_t n = 1;
  for (int64_t p : getParts())
    n *= p;
  return n;
}

TargetAttr mlir::ein::getTarget(Operation *op) {
  for (Operation *it = op; it; it = it->getParentOp())
    if (auto module = dyn_cast<ModuleOp>(it))
      if (auto target = module->getAttrOfType<TargetAttr>(
              EinDialect::getTargetAttrName()))
        return target;
  return {};
}

TargetAttr mlir::ein::requireTarget(ModuleOp module, StringRef pass) {
  TargetAttr target = getTarget(module);
  if (!target)
    module.emitError() << pass
                       << " needs the module's #ein.target; run "
                          "ein-attach-target first";
  return target;
}

LogicalResult mlir::ein::verifyDevice(Operation *op, int64_t device,
                                      StringRef what) {
  if (device < 0)
    return op->emitOpError() << what << " " << device << " is negative";
  if (TargetAttr target = getTarget(op);
      target && device >= target.getDevices())
    return op->emitOpError()
           << what << " " << device << " does not exist: the target has "
           << target.getDevices() << " devices";
  return success();
}
