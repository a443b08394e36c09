//===- EinAttrs.cpp - ein attributes ------------------------------------===//

#include "Einsummable/Dialect/Ein/IR/EinAttrs.h"
#include "Einsummable/Dialect/Ein/IR/EinDialect.h"
#include "Einsummable/Physical/Topology.h"

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

/// Parses a positive decimal number that fills all of `text`.
static bool parsePositive(StringRef text, int64_t &value) {
  return !text.empty() && llvm::all_of(text, llvm::isDigit) &&
         !text.getAsInteger(10, value) && value > 0;
}

LogicalResult TargetAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 int64_t devices, StringRef topology,
                                 StringRef chip) {
  if (devices < 1 || devices > 64)
    return emitError() << "#ein.target needs 1 to 64 devices, got " << devices;

  // The topology library knows the presets and their device counts; a JSON
  // file is read by the passes that need it, not by the verifier.
  ::ein::physical::Topology unused;
  std::string error;
  if (!::ein::physical::makeTopology(topology.str(), devices, unused, error,
                                     /*readFiles=*/false))
    return emitError() << error;

  int64_t smVersion;
  if (chip != "host" && !(chip.starts_with("sm_") &&
                          parsePositive(chip.drop_front(3), smVersion)))
    return emitError() << "unknown chip '" << chip
                       << "'; expected 'sm_<N>' (e.g. sm_90) or 'host'";
  return success();
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
