//===- EinTypes.cpp - ein types -----------------------------------------===//

#include "Einsummable/Dialect/Ein/IR/EinTypes.h"
#include "Einsummable/Dialect/Ein/IR/EinDialect.h"

#include "ein/partition.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::ein;

#define GET_TYPEDEF_CLASSES
#include "Einsummable/Dialect/Ein/IR/EinTypes.cpp.inc"

void EinDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "Einsummable/Dialect/Ein/IR/EinTypes.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// RelationType
//===----------------------------------------------------------------------===//

static ParseResult parseIntegerList(AsmParser &parser,
                                    SmallVectorImpl<int64_t> &values) {
  return parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
    return parser.parseInteger(values.emplace_back());
  });
}

Type RelationType::parse(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  SmallVector<int64_t> shape, parts, devices;
  Type elementType;
  int64_t replicas = 1;
  AggKind partial = AggKind::None;
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/false,
                                /*withTrailingX=*/true) ||
      parser.parseType(elementType))
    return {};

  llvm::SmallSet<StringRef, 4> seen;
  while (succeeded(parser.parseOptionalComma())) {
    SMLoc keyLoc = parser.getCurrentLocation();
    StringRef key;
    if (parser.parseKeyword(&key) || parser.parseEqual())
      return {};
    if (!seen.insert(key).second) {
      parser.emitError(keyLoc) << "relation field '" << key << "' given twice";
      return {};
    }
    ParseResult parsed = success();
    if (key == "parts") {
      parsed = parseIntegerList(parser, parts);
    } else if (key == "devices") {
      parsed = parseIntegerList(parser, devices);
    } else if (key == "replicas") {
      parsed = parser.parseInteger(replicas);
    } else if (key == "partial") {
      SMLoc kindLoc = parser.getCurrentLocation();
      StringRef kind;
      if (parser.parseKeyword(&kind))
        return {};
      std::optional<AggKind> parsedKind = symbolizeAggKind(kind);
      if (!parsedKind || *parsedKind == AggKind::None) {
        parser.emitError(kindLoc)
            << "unknown partial kind '" << kind
            << "'; expected add, max, min, mul or online_softmax";
        return {};
      }
      partial = *parsedKind;
    } else {
      parser.emitError(keyLoc)
          << "unknown relation field '" << key
          << "'; expected parts, replicas, partial or devices";
      return {};
    }
    if (failed(parsed))
      return {};
  }
  if (parser.parseGreater())
    return {};
  if (!seen.contains("parts")) {
    parser.emitError(loc) << "relation needs 'parts', one count per dimension";
    return {};
  }
  return parser.getChecked<RelationType>(loc, parser.getContext(), shape,
                                         elementType, parts, replicas, partial,
                                         devices);
}

void RelationType::print(AsmPrinter &printer) const {
  printer << "<";
  for (int64_t size : getShape())
    printer << size << "x";
  printer << getElementType() << ", parts = [";
  llvm::interleaveComma(getParts(), printer);
  printer << "]";
  if (getReplicas() != 1)
    printer << ", replicas = " << getReplicas();
  if (isPartial())
    printer << ", partial = " << stringifyAggKind(getPartial());
  if (isPlaced()) {
    printer << ", devices = [";
    llvm::interleaveComma(getDevices(), printer);
    printer << "]";
  }
  printer << ">";
}

LogicalResult RelationType::verify(function_ref<InFlightDiagnostic()> emitError,
                                   ArrayRef<int64_t> shape, Type elementType,
                                   ArrayRef<int64_t> parts, int64_t replicas,
                                   AggKind partial, ArrayRef<int64_t> devices) {
  if (!isa<FloatType, IntegerType>(elementType))
    return emitError() << "relation element type must be a float or integer "
                          "type, got "
                       << elementType;
  if (parts.size() != shape.size())
    return emitError() << "relation of rank " << shape.size() << " has "
                       << parts.size() << " part counts";
  for (auto [d, size] : llvm::enumerate(shape)) {
    if (size < 1)
      return emitError() << "relation dimension " << d << " has size " << size
                         << "; relations need non-empty dimensions";
    if (parts[d] < 1 || parts[d] > size)
      return emitError() << "relation dimension " << d << " of size " << size
                         << " cannot be cut into " << parts[d] << " parts";
  }
  if (replicas < 1)
    return emitError() << "relation needs at least 1 replica, got " << replicas;
  if (partial != AggKind::None && replicas < 2)
    return emitError() << "a partial relation needs at least 2 replicas to "
                          "aggregate, got "
                       << replicas;
  if (devices.empty())
    return success();

  int64_t copies = ::ein::numBlocks(parts) * replicas;
  if (static_cast<int64_t>(devices.size()) != copies)
    return emitError() << "relation places " << devices.size()
                       << " copies but has " << copies << " ("
                       << ::ein::numBlocks(parts) << " blocks x " << replicas
                       << " replicas)";
  for (int64_t block = 0; block < ::ein::numBlocks(parts); ++block) {
    llvm::SmallSet<int64_t, 8> used;
    for (int64_t r = 0; r < replicas; ++r) {
      int64_t device = devices[block * replicas + r];
      if (device < 0)
        return emitError() << "relation places block " << block
                           << " on negative device " << device;
      if (!used.insert(device).second)
        return emitError() << "relation places two copies of block " << block
                           << " on device " << device;
    }
  }
  return success();
}

ShapedType RelationType::cloneWith(std::optional<ArrayRef<int64_t>> shape,
                                   Type elementType) const {
  ArrayRef<int64_t> newShape = shape ? *shape : getShape();
  // The cut carries over when the rank does; otherwise the clone is whole.
  if (newShape.size() == getShape().size())
    return RelationType::get(getContext(), newShape, elementType, getParts(),
                             getReplicas(), getPartial(), getDevices());
  return RelationType::get(getContext(), newShape, elementType,
                           SmallVector<int64_t>(newShape.size(), 1), 1,
                           AggKind::None, {});
}

int64_t RelationType::getNumBlocks() const {
  return ::ein::numBlocks(getParts());
}

SmallVector<int64_t> RelationType::getBlockShape(int64_t block) const {
  std::vector<int64_t> shape = ::ein::blockShape(getShape(), getParts(), block);
  return SmallVector<int64_t>(shape.begin(), shape.end());
}
