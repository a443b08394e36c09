//===- EinInterfaces.cpp - ein op interfaces ----------------------------===//

#include "Einsummable/Dialect/Ein/IR/EinInterfaces.h"

using namespace mlir;
using namespace mlir::ein;

#include "Einsummable/Dialect/Ein/IR/EinInterfaces.cpp.inc"

LogicalResult mlir::ein::verifySpec(SpecOpInterface op) {
  SpecAttr spec = op.getSpecAttr();
  if (!spec)
    return success();
  SmallVector<int64_t> sizes = op.getLoopSizes();
  SmallVector<std::string> names = op.getLoopNames();
  ArrayRef<int64_t> parts = spec.getParts();
  if (parts.size() != sizes.size())
    return op->emitOpError()
           << "spec has " << parts.size() << " parts but the op has "
           << sizes.size() << " loops";
  for (auto [i, size] : llvm::enumerate(sizes))
    if (parts[i] > size)
      return op->emitOpError() << "spec cuts loop '" << names[i] << "' of size "
                               << size << " into " << parts[i] << " parts";
  for (int64_t l : op.getWholeLoops())
    if (parts[l] > 1)
      return op->emitOpError()
             << "spec " << spec << " cuts loop '" << names[l]
             << "', which its kernel keeps whole (it reduces or normalises "
                "along it)";
  if (TargetAttr target = getTarget(op);
      target && spec.getNumJoinBlocks() > target.getDevices())
    return op->emitOpError()
           << "spec makes " << spec.getNumJoinBlocks()
           << " join blocks but the target has " << target.getDevices()
           << " devices; a spec places at most one join block per device";
  return success();
}
