//===- EinDialect.cpp - The ein dialect ---------------------------------===//

#include "Einsummable/Dialect/Ein/IR/EinDialect.h"
#include "Einsummable/Dialect/Ein/IR/EinOps.h"

#include "ein/partition.h"
#include "ein/signature.h"
#include "ein/target.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace mlir::ein;

#include "Einsummable/Dialect/Ein/IR/EinDialect.cpp.inc"

void EinDialect::initialize() {
  registerAttributes();
  registerTypes();
  addOperations<
#define GET_OP_LIST
#include "Einsummable/Dialect/Ein/IR/EinOps.cpp.inc"
      >();
}

LogicalResult EinDialect::verifyOperationAttribute(Operation *op,
                                                   NamedAttribute attr) {
  if (attr.getName() == getTargetAttrName()) {
    if (!isa<TargetAttr>(attr.getValue()))
      return op->emitError()
             << "'" << getTargetAttrName() << "' must be a #ein.target, got "
             << attr.getValue();
    if (!isa<ModuleOp>(op))
      return op->emitError() << "'" << getTargetAttrName()
                             << "' belongs on a builtin.module, not on '"
                             << op->getName() << "'";
    return success();
  }
  if (attr.getName() == getCandidatesAttrName()) {
    auto candidates = dyn_cast<ArrayAttr>(attr.getValue());
    if (!candidates ||
        !llvm::all_of(candidates, [](Attribute a) { return isa<SpecAttr>(a); }))
      return op->emitError()
             << "'" << getCandidatesAttrName()
             << "' must be an array of #ein.spec, got " << attr.getValue();
    if (!isa<SpecOpInterface>(op))
      return op->emitError() << "'" << getCandidatesAttrName()
                             << "' belongs on an op a spec can cut, not on '"
                             << op->getName() << "'";
    return success();
  }
  if (attr.getName() == getWeightAttrName())
    return op->emitError() << "'" << getWeightAttrName()
                           << "' marks a function argument, not an operation";
  if (attr.getName() == getLoopOffsetsAttrName()) {
    auto offsets = dyn_cast<DenseI64ArrayAttr>(attr.getValue());
    if (!offsets)
      return op->emitError()
             << "'" << getLoopOffsetsAttrName()
             << "' must be an array<i64>, got " << attr.getValue();
    auto join = dyn_cast<JoinAggOp>(op);
    if (!join || !join.getDevice())
      return op->emitError() << "'" << getLoopOffsetsAttrName()
                             << "' belongs on a device-level ein.join_agg "
                                "(one with 'device')";
    if (int64_t(offsets.size()) != join.getNumLoops())
      return op->emitError()
             << "'" << getLoopOffsetsAttrName() << "' has " << offsets.size()
             << " offsets for " << join.getNumLoops() << " loops";
    if (llvm::any_of(offsets.asArrayRef(), [](int64_t o) { return o < 0; }))
      return op->emitError() << "'" << getLoopOffsetsAttrName()
                             << "' offsets must not be negative";
    return success();
  }
  if (attr.getName() == getKernelAttrName()) {
    if (!isa<StringAttr>(attr.getValue()))
      return op->emitError()
             << "'" << getKernelAttrName()
             << "' must be a kernel name string, got " << attr.getValue();
    if (!op->hasTrait<BlockKernel>() || !op->hasAttr("device"))
      return op->emitError() << "'" << getKernelAttrName()
                             << "' belongs on a device-level block (a "
                                "join_agg or composite with 'device')";
    return success();
  }
  if (attr.getName() == getKernelTargetAttrName()) {
    auto target = dyn_cast<StringAttr>(attr.getValue());
    ::ein::Backend backend;
    std::string unused;
    if (!target || !::ein::parseBackend(target.str(), backend, unused))
      return op->emitError()
             << "'" << getKernelTargetAttrName()
             << "' must be \"cpu\" or \"cuda\", got " << attr.getValue();
    if (!isa<ModuleOp>(op))
      return op->emitError() << "'" << getKernelTargetAttrName()
                             << "' belongs on a builtin.module, not on '"
                             << op->getName() << "'";
    return success();
  }
  if (attr.getName() == getKernelSignaturesAttrName()) {
    auto text = dyn_cast<StringAttr>(attr.getValue());
    ::ein::KernelSignatures table;
    std::string why;
    if (!text)
      return op->emitError() << "'" << getKernelSignaturesAttrName()
                             << "' must be a string, got " << attr.getValue();
    if (!::ein::parseKernelSignatures(text.str(), table, why))
      return op->emitError() << "'" << getKernelSignaturesAttrName()
                             << "' is not a kernel signature table: " << why;
    if (!isa<ModuleOp>(op))
      return op->emitError() << "'" << getKernelSignaturesAttrName()
                             << "' belongs on a builtin.module, not on '"
                             << op->getName() << "'";
    return success();
  }
  if (attr.getName() == getPlaceAttrName()) {
    auto devices = dyn_cast<DenseI64ArrayAttr>(attr.getValue());
    if (!devices || devices.empty())
      return op->emitError() << "'" << getPlaceAttrName()
                             << "' must be a non-empty array<i64> of GPUs, got "
                             << attr.getValue();
    auto cut = dyn_cast<SpecOpInterface>(op);
    if (!cut)
      return op->emitError() << "'" << getPlaceAttrName()
                             << "' belongs on an op a spec can cut, not on '"
                             << op->getName() << "'";
    llvm::SmallDenseSet<int64_t> seen;
    for (int64_t device : devices.asArrayRef()) {
      if (device < 0)
        return op->emitError() << "'" << getPlaceAttrName() << "' names GPU "
                               << device << "; GPUs are numbered from 0";
      if (!seen.insert(device).second)
        return op->emitError()
               << "'" << getPlaceAttrName() << "' names GPU " << device
               << " twice; each join block runs on its own GPU";
    }
    auto spec = op->getAttrOfType<SpecAttr>("spec");
    if (!spec)
      return op->emitError() << "'" << getPlaceAttrName()
                             << "' places the blocks of a spec; the op has "
                                "no 'spec'";
    int64_t blocks = ::ein::numBlocks(spec.getParts());
    if (blocks != int64_t(devices.size()))
      return op->emitError() << "'" << getPlaceAttrName() << "' names "
                             << devices.size() << " GPUs for the " << blocks
                             << " join blocks of its spec " << spec;
    return success();
  }
  if (attr.getName() == getTieLayoutAttrName() ||
      attr.getName() == getDataflowAttrName() ||
      attr.getName() == getWeightsMoveAttrName()) {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitError()
             << "'" << attr.getName().getValue()
             << "' is a unit attribute, got " << attr.getValue();
    if (!isa<FunctionOpInterface>(op))
      return op->emitError()
             << "'" << attr.getName().getValue()
             << "' belongs on a function, not on '" << op->getName() << "'";
    return success();
  }
  if (attr.getName() == getExchangeChoiceAttrName()) {
    auto dict = dyn_cast<DictionaryAttr>(attr.getValue());
    auto bad = [&](StringRef what) {
      return op->emitError()
             << "'" << getExchangeChoiceAttrName() << "' " << what;
    };
    if (!dict)
      return bad("must be a dictionary, got ") << attr.getValue();
    if (!isa<FunctionOpInterface>(op))
      return bad("belongs on a function, not on '") << op->getName() << "'";
    auto key = dict.getAs<IntegerAttr>("key");
    auto rotate = dict.getAs<BoolAttr>("rotate");
    auto split = dict.getAs<BoolAttr>("split_weights");
    auto synthesized = dict.getAs<DenseBoolArrayAttr>("synthesized");
    auto place = dict.getAs<ArrayAttr>("place");
    if (dict.size() != 5 || !key || !key.getType().isSignlessInteger(64) ||
        !rotate || !split || !synthesized || !place)
      return bad("must hold exactly key (i64), rotate and split_weights "
                 "(bool), synthesized (array<i1>) and place (an array of "
                 "array<i64>), got ")
             << attr.getValue();
    if (place.size() != size_t(synthesized.size()))
      return bad("has ") << synthesized.size() << " ops' forms but "
                         << place.size() << " ops' places";
    for (auto [i, each] : llvm::enumerate(place)) {
      auto devices = dyn_cast<DenseI64ArrayAttr>(each);
      if (!devices)
        return bad("places op ")
               << i << " with " << each << ", not an array<i64>";
      llvm::SmallDenseSet<int64_t> seen;
      for (int64_t device : devices.asArrayRef())
        if (device < 0 || !seen.insert(device).second)
          return bad("places op ")
                 << i << " on " << devices
                 << "; each block runs on its own GPU, numbered from 0";
    }
    return success();
  }
  if (attr.getName() == getPlannedMemoryAttrName()) {
    auto bytes = dyn_cast<IntegerAttr>(attr.getValue());
    if (!bytes || !bytes.getType().isSignlessInteger(64) || bytes.getInt() < 0)
      return op->emitError()
             << "'" << getPlannedMemoryAttrName()
             << "' is a non-negative i64 byte count, got " << attr.getValue();
    if (!isa<FunctionOpInterface>(op))
      return op->emitError()
             << "'" << getPlannedMemoryAttrName()
             << "' belongs on a function, not on '" << op->getName() << "'";
    return success();
  }
  if (attr.getName() == getBlockFlopsAttrName() ||
      attr.getName() == getBlockSecondsAttrName()) {
    auto value = dyn_cast<FloatAttr>(attr.getValue());
    if (!value || !value.getType().isF64() || !(value.getValueAsDouble() >= 0))
      return op->emitError()
             << "'" << attr.getName().getValue()
             << "' is a non-negative f64, got " << attr.getValue();
    if (!isa<FunctionOpInterface>(op))
      return op->emitError()
             << "'" << attr.getName().getValue()
             << "' belongs on a function, not on '" << op->getName() << "'";
    return success();
  }
  return op->emitError() << "unknown ein attribute '"
                         << attr.getName().getValue() << "'; expected '"
                         << getTargetAttrName() << "', '"
                         << getCandidatesAttrName() << "', '"
                         << getLoopOffsetsAttrName() << "', '"
                         << getKernelAttrName() << "', '"
                         << getKernelTargetAttrName() << "', '"
                         << getKernelSignaturesAttrName() << "', '"
                         << getTieLayoutAttrName() << "', '"
                         << getExchangeChoiceAttrName() << "', '"
                         << getPlannedMemoryAttrName() << "', '"
                         << getBlockFlopsAttrName() << "' or '"
                         << getBlockSecondsAttrName() << "'";
}

LogicalResult EinDialect::verifyRegionArgAttribute(Operation *op,
                                                   unsigned regionIndex,
                                                   unsigned argIndex,
                                                   NamedAttribute attr) {
  if (attr.getName() != getWeightAttrName() &&
      attr.getName() != getGradAttrName())
    return op->emitError() << "unknown ein argument attribute '"
                           << attr.getName().getValue() << "' on argument "
                           << argIndex << "; expected '" << getWeightAttrName()
                           << "' or '" << getGradAttrName() << "'";
  if (!isa<UnitAttr>(attr.getValue()))
    return op->emitError() << "'" << attr.getName().getValue()
                           << "' is a unit attribute, got " << attr.getValue();
  return success();
}

LogicalResult EinDialect::verifyRegionResultAttribute(Operation *op,
                                                      unsigned regionIndex,
                                                      unsigned resultIndex,
                                                      NamedAttribute attr) {
  if (attr.getName() == getWeightAttrName())
    return op->emitError() << "'" << getWeightAttrName()
                           << "' marks function arguments, not result "
                           << resultIndex;
  if (attr.getName() == getUpdatesAttrName()) {
    auto index = dyn_cast<IntegerAttr>(attr.getValue());
    auto func = dyn_cast<FunctionOpInterface>(op);
    if (!index || !func)
      return op->emitError()
             << "'" << getUpdatesAttrName() << "' on result " << resultIndex
             << " is the index of a function argument, got " << attr.getValue();
    int64_t arg = index.getInt();
    if (arg < 0 || arg >= int64_t(func.getNumArguments()))
      return op->emitError()
             << "result " << resultIndex << " updates argument " << arg
             << ", but the function has " << func.getNumArguments();
    if (func.getArgumentTypes()[arg] != func.getResultTypes()[resultIndex])
      return op->emitError()
             << "result " << resultIndex << " updates argument " << arg
             << " but its type " << func.getResultTypes()[resultIndex]
             << " is not the argument's " << func.getArgumentTypes()[arg];
    return success();
  }
  return op->emitError() << "unknown ein result attribute '"
                         << attr.getName().getValue() << "' on result "
                         << resultIndex;
}
