//===- EinOps.cpp - ein operations --------------------------------------===//

#include "Einsummable/Dialect/Ein/IR/EinOps.h"

#include "mlir/Interfaces/CastInterfaces.h"

#include "ein/partition.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"

#include <array>
#include <cmath>
#include <tuple>

using namespace mlir;
using namespace mlir::ein;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

static ArrayRef<int64_t> shapeOf(Type type) {
  if (auto relation = dyn_cast<RelationType>(type))
    return relation.getShape();
  return cast<RankedTensorType>(type).getShape();
}

static Type elementTypeOf(Type type) {
  if (auto relation = dyn_cast<RelationType>(type))
    return relation.getElementType();
  return cast<RankedTensorType>(type).getElementType();
}

static std::string loopName(int64_t index) {
  return "d" + std::to_string(index);
}

static SmallVector<std::string> defaultLoopNames(size_t count) {
  SmallVector<std::string> names;
  for (size_t i = 0; i < count; ++i)
    names.push_back(loopName(i));
  return names;
}

static std::string shapeString(ArrayRef<int64_t> shape) {
  return "[" +
         llvm::join(llvm::map_range(
                        shape, [](int64_t v) { return std::to_string(v); }),
                    ", ") +
         "]";
}

/// Checks that an op's operands and result are all tensors or all
/// relations.
static LogicalResult verifySameLevel(Operation *op) {
  bool onRelations = isa<RelationType>(op->getResult(0).getType());
  for (auto [i, operand] : llvm::enumerate(op->getOperands()))
    if (isa<RelationType>(operand.getType()) != onRelations)
      return op->emitOpError()
             << "mixes tensors and relations: input " << i << " is "
             << operand.getType() << " but the result is "
             << op->getResult(0).getType();
  return success();
}

/// Checks a static, unit-stride hyper-rectangle of `source` (`noun` names it,
/// `container` the tensor it lies in) and that `result` is exactly that
/// region.
/// Checks that `result` holds `shape` elements of `element`: exactly that
/// tensor type, or a relation (cut any way) of that shape.
static LogicalResult verifyResultShape(Operation *op, Type result,
                                       ArrayRef<int64_t> shape, Type element) {
  if (isa<RelationType>(result)) {
    auto relation = cast<RelationType>(result);
    if (relation.getShape() != shape || relation.getElementType() != element)
      return op->emitOpError() << "result must hold " << shapeString(shape)
                               << " of " << element << ", got " << result;
    return success();
  }
  auto expected = RankedTensorType::get(shape, element);
  if (result != expected)
    return op->emitOpError()
           << "result must be " << expected << ", got " << result;
  return success();
}

static LogicalResult verifyStaticRegion(Operation *op, Type sourceType,
                                        ArrayRef<int64_t> offsets,
                                        ArrayRef<int64_t> sizes, Type result,
                                        StringRef noun, StringRef container) {
  auto source = cast<ShapedType>(sourceType);
  if (static_cast<int64_t>(offsets.size()) != source.getRank() ||
      static_cast<int64_t>(sizes.size()) != source.getRank())
    return op->emitOpError()
           << noun << " has " << offsets.size() << " offsets and "
           << sizes.size() << " sizes for a " << container << " of rank "
           << source.getRank();
  for (int64_t d = 0; d < source.getRank(); ++d)
    if (offsets[d] < 0 || sizes[d] < 1 || sizes[d] > source.getDimSize(d) ||
        offsets[d] > source.getDimSize(d) - sizes[d])
      return op->emitOpError()
             << noun << " of size " << sizes[d] << " at offset " << offsets[d]
             << " in dimension " << d << " is empty or outside the "
             << container << "'s size " << source.getDimSize(d);
  return verifyResultShape(op, result, sizes, source.getElementType());
}

//===----------------------------------------------------------------------===//
// JoinAggOp
//===----------------------------------------------------------------------===//

static ParseResult parseLoopIndexList(OpAsmParser &parser,
                                      SmallVectorImpl<int64_t> &indices) {
  return parser.parseCommaSeparatedList(
      AsmParser::Delimiter::Square, [&]() -> ParseResult {
        SMLoc loc = parser.getCurrentLocation();
        StringRef name;
        if (parser.parseKeyword(&name))
          return failure();
        StringRef digits = name;
        int64_t value;
        if (!digits.consume_front("d") || digits.empty() ||
            !llvm::all_of(digits, llvm::isDigit) ||
            digits.getAsInteger(10, value))
          return parser.emitError(loc)
                 << "expected a loop index like 'd0', got '" << name << "'";
        indices.push_back(value);
        return success();
      });
}

static void printLoopIndexList(OpAsmPrinter &printer,
                               ArrayRef<int64_t> indices) {
  printer << "[";
  llvm::interleaveComma(indices, printer,
                        [&](int64_t index) { printer << loopName(index); });
  printer << "]";
}

ParseResult JoinAggOp::parse(OpAsmParser &parser, OperationState &result) {
  MLIRContext *ctx = parser.getContext();
  SMLoc aggLoc = parser.getCurrentLocation();
  StringRef aggName;
  if (parser.parseKeyword(&aggName))
    return failure();
  std::optional<AggKind> agg = symbolizeAggKind(aggName);
  if (!agg)
    return parser.emitError(aggLoc) << "unknown aggregation kind '" << aggName
                                    << "'; expected none, add, max, min or mul";

  SmallVector<OpAsmParser::UnresolvedOperand> operands;
  SmallVector<Attribute> inputIndices;
  SmallVector<Type> inputTypes;
  if (parser.parseKeyword("ins") || parser.parseLParen())
    return failure();
  if (failed(parser.parseOptionalRParen())) {
    auto parseIndexedOperand = [&]() -> ParseResult {
      SmallVector<int64_t> indices;
      if (parser.parseOperand(operands.emplace_back()) ||
          parseLoopIndexList(parser, indices))
        return failure();
      inputIndices.push_back(DenseI64ArrayAttr::get(ctx, indices));
      return success();
    };
    if (parser.parseCommaSeparatedList(parseIndexedOperand) ||
        parser.parseColonTypeList(inputTypes) || parser.parseRParen())
      return failure();
  }

  SmallVector<int64_t> outputIndices;
  if (parser.parseKeyword("out") || parseLoopIndexList(parser, outputIndices))
    return failure();
  if (succeeded(parser.parseOptionalKeyword("acc"))) {
    Type acc;
    if (parser.parseType(acc))
      return failure();
    result.addAttribute(getAccAttrName(result.name), TypeAttr::get(acc));
  }
  Type resultType;
  if (parser.parseOptionalAttrDictWithKeyword(result.attributes) ||
      parser.parseColonType(resultType) ||
      parser.parseRegion(*result.addRegion()) ||
      parser.resolveOperands(operands, inputTypes, parser.getNameLoc(),
                             result.operands))
    return failure();

  result.addAttribute(getInputIndicesAttrName(result.name),
                      ArrayAttr::get(ctx, inputIndices));
  result.addAttribute(getOutputIndicesAttrName(result.name),
                      DenseI64ArrayAttr::get(ctx, outputIndices));
  result.addAttribute(getAggAttrName(result.name), AggKindAttr::get(ctx, *agg));
  result.addTypes(resultType);
  return success();
}

void JoinAggOp::print(OpAsmPrinter &printer) {
  printer << " " << stringifyAggKind(getAgg()) << " ins(";
  llvm::interleaveComma(llvm::enumerate(getInputs()), printer, [&](auto it) {
    printer << it.value();
    printLoopIndexList(printer, getIndicesOfInput(it.index()));
  });
  if (!getInputs().empty())
    printer << " : " << getInputs().getTypes();
  printer << ") out";
  printLoopIndexList(printer, getOutputIndices());
  if (std::optional<Type> acc = getAcc())
    printer << " acc " << *acc;
  printer.printOptionalAttrDictWithKeyword(
      (*this)->getAttrs(),
      {getInputIndicesAttrName(), getOutputIndicesAttrName(), getAggAttrName(),
       getAccAttrName()});
  printer << " : " << getType() << " ";
  printer.printRegion(getJoin(), /*printEntryBlockArgs=*/true);
}

ArrayRef<int64_t> JoinAggOp::getIndicesOfInput(unsigned i) {
  return cast<DenseI64ArrayAttr>(getInputIndices()[i]).asArrayRef();
}

int64_t JoinAggOp::getNumLoops() {
  int64_t largest = -1;
  for (unsigned i = 0, e = getInputIndices().size(); i < e; ++i)
    for (int64_t index : getIndicesOfInput(i))
      largest = std::max(largest, index);
  for (int64_t index : getOutputIndices())
    largest = std::max(largest, index);
  return largest + 1;
}

Type JoinAggOp::getAccType() {
  if (std::optional<Type> acc = getAcc())
    return *acc;
  Type element = elementTypeOf(getType());
  if (element.isF16() || element.isBF16())
    return Float32Type::get(getContext());
  return element;
}

SmallVector<int64_t> JoinAggOp::getAggregatedLoops() {
  SmallVector<int64_t> loops;
  for (int64_t loop = 0, e = getNumLoops(); loop < e; ++loop)
    if (!llvm::is_contained(getOutputIndices(), loop))
      loops.push_back(loop);
  return loops;
}

SmallVector<int64_t> JoinAggOp::getBlockOffsets() {
  if (auto attr = (*this)->getAttrOfType<DenseI64ArrayAttr>(
          EinDialect::getLoopOffsetsAttrName()))
    return SmallVector<int64_t>(attr.asArrayRef());
  return SmallVector<int64_t>(getNumLoops(), 0);
}

SmallVector<int64_t> JoinAggOp::getLoopSizes() {
  SmallVector<int64_t> sizes(getNumLoops(), 0);
  for (auto [i, input] : llvm::enumerate(getInputs()))
    for (auto [d, index] : llvm::enumerate(getIndicesOfInput(i)))
      sizes[index] = shapeOf(input.getType())[d];
  for (auto [d, index] : llvm::enumerate(getOutputIndices()))
    sizes[index] = shapeOf(getType())[d];
  return sizes;
}

SmallVector<std::string> JoinAggOp::getLoopNames() {
  return defaultLoopNames(getNumLoops());
}

LogicalResult JoinAggOp::verify() {
  if (getInputIndices().size() != getInputs().size())
    return emitOpError() << "has " << getInputs().size() << " inputs but "
                         << getInputIndices().size() << " index lists";
  if (failed(verifySameLevel(*this)))
    return failure();

  // Every use of a loop index must agree on its size.
  llvm::DenseMap<int64_t, std::pair<int64_t, std::string>> sizes;
  auto collect = [&](ArrayRef<int64_t> indices, ArrayRef<int64_t> shape,
                     const std::string &what) -> LogicalResult {
    if (indices.size() != shape.size())
      return emitOpError() << what << " has rank " << shape.size()
                           << " but its index list has " << indices.size()
                           << " indices";
    llvm::SmallDenseSet<int64_t> seen;
    for (auto [d, index] : llvm::enumerate(indices)) {
      if (index < 0)
        return emitOpError() << what << " uses negative loop index " << index;
      if (!seen.insert(index).second)
        return emitOpError()
               << what << " uses loop index " << loopName(index) << " twice";
      auto [it, inserted] = sizes.try_emplace(index, shape[d], what);
      if (!inserted && it->second.first != shape[d])
        return emitOpError() << "loop index " << loopName(index) << " has size "
                             << it->second.first << " in " << it->second.second
                             << " but " << shape[d] << " in " << what;
    }
    return success();
  };
  for (auto [i, input] : llvm::enumerate(getInputs()))
    if (failed(collect(getIndicesOfInput(i), shapeOf(input.getType()),
                       "input " + std::to_string(i))))
      return failure();
  if (failed(collect(getOutputIndices(), shapeOf(getType()), "the result")))
    return failure();
  // With k distinct indices, one of d0..dk is missing if any index exceeds
  // d(k-1); looking that far suffices.
  int64_t numLoops = getNumLoops();
  for (int64_t loop = 0, e = std::min<int64_t>(numLoops, sizes.size() + 1);
       loop < e; ++loop)
    if (!sizes.count(loop))
      return emitOpError() << "loop index " << loopName(loop)
                           << " is never used; number loop indices densely "
                              "from d0";

  if (getAgg() == AggKind::OnlineSoftmax)
    return emitOpError() << "online_softmax combines attention partials; it "
                            "belongs to ein.attention, not ein.join_agg";
  SmallVector<int64_t> aggregated = getAggregatedLoops();
  if (getAgg() == AggKind::None && !aggregated.empty())
    return emitOpError() << "aggregation 'none' but loop index "
                         << loopName(aggregated.front())
                         << " is not in the result; name an aggregation kind";

  Type element = elementTypeOf(getType());
  if (!element.isIntOrFloat())
    return emitOpError() << "result element type must be an integer or float "
                            "type, got "
                         << element;
  if (std::optional<Type> acc = getAcc()) {
    if (!acc->isIntOrFloat() || isa<FloatType>(*acc) != isa<FloatType>(element))
      return emitOpError() << "accumulator type " << *acc
                           << " does not suit result element type " << element;
    if (acc->getIntOrFloatBitWidth() < element.getIntOrFloatBitWidth())
      return emitOpError() << "accumulator type " << *acc
                           << " is narrower than the result element type "
                           << element;
  }

  return verifyPlanned(*this);
}

LogicalResult JoinAggOp::verifyRegions() {
  Block &body = getJoin().front();
  if (body.getNumArguments() != getInputs().size())
    return emitOpError() << "join region has " << body.getNumArguments()
                         << " arguments but the op has " << getInputs().size()
                         << " inputs";
  for (auto [i, input] : llvm::enumerate(getInputs())) {
    Type expected = elementTypeOf(input.getType());
    if (body.getArgument(i).getType() != expected)
      return emitOpError() << "join region argument " << i << " is "
                           << body.getArgument(i).getType() << " but input "
                           << i << " holds " << expected;
  }
  auto yield = body.mightHaveTerminator()
                   ? dyn_cast<YieldOp>(body.getTerminator())
                   : YieldOp();
  if (!yield)
    return emitOpError() << "join region must end in ein.yield";
  if (yield.getValues().size() != 1)
    return emitOpError() << "join region must yield exactly one value, got "
                         << yield.getValues().size();
  if (yield.getValues().front().getType() != getAccType())
    return emitOpError() << "join region yields "
                         << yield.getValues().front().getType()
                         << " but the accumulator type is " << getAccType();
  return success();
}

//===----------------------------------------------------------------------===//
// IndexOp
//===----------------------------------------------------------------------===//

LogicalResult IndexOp::verify() {
  auto parent = (*this)->getParentOfType<JoinAggOp>();
  if (!parent)
    return emitOpError() << "must be inside an ein.join_agg region";
  int64_t dim = getDimAttr().getInt();
  if (dim < 0 || dim >= parent.getNumLoops())
    return emitOpError() << "reads loop index " << dim
                         << ", but the enclosing ein.join_agg has loops d0.."
                         << loopName(parent.getNumLoops() - 1);
  return success();
}

//===----------------------------------------------------------------------===//
// Composites
//===----------------------------------------------------------------------===//

static LogicalResult verifyFloatElements(Operation *op, Type element) {
  if (!isa<FloatType>(element))
    return op->emitOpError() << "needs a float element type, got " << element;
  return success();
}

LogicalResult AttentionOp::verify() {
  if (failed(verifySameLevel(*this)))
    return failure();
  auto q = cast<ShapedType>(getQuery().getType());
  auto k = cast<ShapedType>(getKey().getType());
  auto v = cast<ShapedType>(getValue().getType());
  auto out = cast<ShapedType>(getType());
  struct Operand {
    ShapedType type;
    const char *name, *layout;
  };
  for (const Operand &o :
       {Operand{q, "query", "[batch, heads, queries, head_dim]"},
        Operand{k, "key", "[batch, kv_heads, keys, head_dim]"},
        Operand{v, "value", "[batch, kv_heads, keys, value_dim]"},
        Operand{out, "result", "[batch, heads, queries, value_dim]"}}) {
    if (o.type.getRank() != 4)
      return emitOpError() << o.name << " must be " << o.layout << ", got rank "
                           << o.type.getRank();
    // A partial result holds its partials in the accumulator type, which
    // verifyPlanned checks.
    auto relation = dyn_cast<RelationType>(o.type);
    if (o.type.getElementType() != q.getElementType() &&
        !(relation && relation.isPartial()))
      return emitOpError() << o.name << " element type "
                           << o.type.getElementType()
                           << " differs from the query's "
                           << q.getElementType();
  }
  if (failed(verifyFloatElements(*this, q.getElementType())))
    return failure();

  int64_t group = getGroupAttr().getInt();
  if (group < 1)
    return emitOpError() << "group size must be at least 1, got " << group;
  if (k.getDimSize(0) != q.getDimSize(0) || v.getDimSize(0) != q.getDimSize(0))
    return emitOpError() << "query, key and value batch sizes differ: "
                         << q.getDimSize(0) << ", " << k.getDimSize(0) << ", "
                         << v.getDimSize(0);
  if (q.getDimSize(1) != k.getDimSize(1) * group)
    return emitOpError() << "query has " << q.getDimSize(1)
                         << " heads but key has " << k.getDimSize(1)
                         << " KV heads x group " << group << " = "
                         << k.getDimSize(1) * group;
  if (v.getDimSize(1) != k.getDimSize(1) || v.getDimSize(2) != k.getDimSize(2))
    return emitOpError() << "value has " << v.getDimSize(1) << " heads and "
                         << v.getDimSize(2) << " keys but key has "
                         << k.getDimSize(1) << " and " << k.getDimSize(2);
  if (k.getDimSize(3) != q.getDimSize(3))
    return emitOpError() << "key head_dim " << k.getDimSize(3)
                         << " differs from the query's " << q.getDimSize(3);
  SmallVector<int64_t> expected = {q.getDimSize(0), q.getDimSize(1),
                                   q.getDimSize(2), v.getDimSize(3)};
  if (out.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError() << "result must be [batch, heads, queries, value_dim]"
                         << " = " << shapeString(expected) << ", got "
                         << shapeString(out.getShape());

  if (std::optional<APFloat> scale = getScale()) {
    double value = scale->convertToDouble();
    if (!(value > 0) || !std::isfinite(value))
      return emitOpError() << "scale must be positive and finite, got "
                           << value;
  }
  int64_t queryOffset = getQueryOffsetAttr().getInt();
  int64_t keyOffset = getKeyOffsetAttr().getInt();
  if (queryOffset < 0 || keyOffset < 0)
    return emitOpError() << "query_offset and key_offset must be "
                            "non-negative, got "
                         << queryOffset << " and " << keyOffset;
  if (!getCausal() && (queryOffset != 0 || keyOffset != 0))
    return emitOpError() << "query_offset and key_offset place a causal mask; "
                            "without 'causal' they must be 0";
  return verifyPlanned(*this);
}

double AttentionOp::getScaleOrDefault() {
  if (std::optional<APFloat> scale = getScale())
    return scale->convertToDouble();
  int64_t headDim = cast<ShapedType>(getQuery().getType()).getDimSize(3);
  return 1.0 / std::sqrt(static_cast<double>(headDim));
}

SmallVector<int64_t> AttentionOp::getLoopSizes() {
  auto q = cast<ShapedType>(getQuery().getType());
  auto k = cast<ShapedType>(getKey().getType());
  return {q.getDimSize(0), k.getDimSize(1), getGroupAttr().getInt(),
          q.getDimSize(2), k.getDimSize(2)};
}

SmallVector<std::string> AttentionOp::getLoopNames() {
  return {"batch", "kv_head", "group", "query", "key"};
}

LogicalResult SoftmaxOp::verify() {
  if (failed(verifySameLevel(*this)))
    return failure();
  auto type = cast<ShapedType>(getType());
  int64_t dim = getDimAttr().getInt();
  if (dim < 0 || dim >= type.getRank())
    return emitOpError() << "dim " << dim << " is out of range for rank "
                         << type.getRank();
  if (failed(verifyFloatElements(*this, type.getElementType())))
    return failure();
  return verifyPlanned(*this);
}

SmallVector<int64_t> SoftmaxOp::getLoopSizes() {
  return llvm::to_vector(cast<ShapedType>(getType()).getShape());
}

SmallVector<std::string> SoftmaxOp::getLoopNames() {
  return defaultLoopNames(cast<ShapedType>(getType()).getRank());
}

LogicalResult RmsNormOp::verify() {
  if (failed(verifySameLevel(*this)))
    return failure();
  auto type = cast<ShapedType>(getInput().getType());
  auto weight = cast<ShapedType>(getWeight().getType());
  if (type.getRank() < 1)
    return emitOpError() << "needs an input of rank 1 or more";
  if (failed(verifyFloatElements(*this, type.getElementType())))
    return failure();
  int64_t width = type.getShape().back();
  if (weight.getShape() != ArrayRef<int64_t>{width} ||
      weight.getElementType() != type.getElementType())
    return emitOpError() << "weight must hold " << width << " elements of "
                         << type.getElementType()
                         << ", one scale per element of the last dimension, "
                            "got "
                         << weight;
  double eps = getEps().convertToDouble();
  if (!(eps > 0) || !std::isfinite(eps))
    return emitOpError() << "eps must be positive and finite, got " << eps;
  return verifyPlanned(*this);
}

SmallVector<int64_t> RmsNormOp::getLoopSizes() {
  return llvm::to_vector(cast<ShapedType>(getType()).getShape());
}

SmallVector<std::string> RmsNormOp::getLoopNames() {
  return defaultLoopNames(cast<ShapedType>(getType()).getRank());
}

LogicalResult LayerNormOp::verify() {
  if (failed(verifySameLevel(*this)))
    return failure();
  auto type = cast<ShapedType>(getInput().getType());
  if (type.getRank() < 1)
    return emitOpError() << "needs an input of rank 1 or more";
  if (failed(verifyFloatElements(*this, type.getElementType())))
    return failure();
  if (getBias() && !getWeight())
    return emitOpError() << "has a bias but no weight; write a weight of "
                            "ones, or fold the bias into the consumer";
  int64_t width = type.getShape().back();
  for (auto [name, param] : {std::pair<StringRef, Value>{"weight", getWeight()},
                             {"bias", getBias()}})
    if (param && (cast<ShapedType>(param.getType()).getShape() !=
                      ArrayRef<int64_t>{width} ||
                  cast<ShapedType>(param.getType()).getElementType() !=
                      type.getElementType()))
      return emitOpError() << name << " must hold " << width << " elements of "
                           << type.getElementType()
                           << ", one per element of the last dimension, got "
                           << param.getType();
  double eps = getEps().convertToDouble();
  if (!(eps > 0) || !std::isfinite(eps))
    return emitOpError() << "eps must be positive and finite, got " << eps;
  return verifyPlanned(*this);
}

SmallVector<int64_t> LayerNormOp::getLoopSizes() {
  return llvm::to_vector(cast<ShapedType>(getType()).getShape());
}

SmallVector<std::string> LayerNormOp::getLoopNames() {
  return defaultLoopNames(cast<ShapedType>(getType()).getRank());
}

LogicalResult GatherOp::verify() {
  if (failed(verifySameLevel(*this)))
    return failure();
  auto table = cast<ShapedType>(getTable().getType());
  auto indices = cast<ShapedType>(getIndices().getType());
  auto result = cast<ShapedType>(getType());
  if (table.getRank() < 1)
    return emitOpError() << "needs a table of rank 1 or more";
  if (failed(verifyFloatElements(*this, table.getElementType())))
    return failure();
  if (!indices.getElementType().isSignlessInteger(64) &&
      !indices.getElementType().isSignlessInteger(32))
    return emitOpError() << "needs i64 or i32 indices, got "
                         << indices.getElementType();
  SmallVector<int64_t> shape(indices.getShape());
  llvm::append_range(shape, table.getShape().drop_front());
  if (result.getShape() != ArrayRef<int64_t>(shape) ||
      result.getElementType() != table.getElementType())
    return emitOpError() << "result must hold " << shapeString(shape) << " of "
                         << table.getElementType()
                         << " (the indices' shape, then each row's), got "
                         << getType();
  // (I64Attr's getter reads the bits unsigned.)
  int64_t rowOffset = getRowOffsetAttr().getInt();
  if (rowOffset < 0)
    return emitOpError() << "row_offset must not be negative, got "
                         << rowOffset;
  return verifyPlanned(*this);
}

SmallVector<int64_t> GatherOp::getLoopSizes() {
  auto table = cast<ShapedType>(getTable().getType());
  SmallVector<int64_t> sizes(
      cast<ShapedType>(getIndices().getType()).getShape());
  llvm::append_range(sizes, table.getShape());
  return sizes;
}

SmallVector<std::string> GatherOp::getLoopNames() {
  return defaultLoopNames(getLoopSizes().size());
}

LogicalResult ArgReduceOp::verify() {
  if (failed(verifySameLevel(*this)))
    return failure();
  if (getKind() != AggKind::Max && getKind() != AggKind::Min)
    return emitOpError() << "finds the index of a max or min, not "
                         << stringifyAggKind(getKind());
  ArrayRef<int64_t> in = shapeOf(getInput().getType());
  if (failed(verifyFloatElements(*this, elementTypeOf(getInput().getType()))))
    return failure();
  int64_t dim = getDimAttr().getInt();
  if (dim < 0 || dim >= int64_t(in.size()))
    return emitOpError() << "dim " << dim << " is not a dimension of its rank-"
                         << in.size() << " input";
  Type index = elementTypeOf(getType());
  if (!index.isSignlessInteger(64) && !index.isSignlessInteger(32))
    return emitOpError() << "result holds i64 or i32 indices, got " << index;
  SmallVector<int64_t> shape(in);
  shape.erase(shape.begin() + dim);
  return failed(verifyResultShape(*this, getType(), shape, index))
             ? failure()
             : verifyPlanned(*this);
}

SmallVector<int64_t> ArgReduceOp::getLoopSizes() {
  return llvm::to_vector(shapeOf(getInput().getType()));
}

SmallVector<std::string> ArgReduceOp::getLoopNames() {
  return defaultLoopNames(shapeOf(getInput().getType()).size());
}

/// Where a windowed op's 4-D input and result keep their dimensions.
struct WindowLayout {
  int64_t batch, channels, rows, columns;
};

static std::optional<WindowLayout> windowLayout(StringRef layout) {
  if (layout == "nhwc")
    return WindowLayout{0, 3, 1, 2};
  if (layout == "nchw")
    return WindowLayout{0, 1, 2, 3};
  return std::nullopt;
}

/// Checks what ein.conv and ein.pool share: the layout, a 4-D float input,
/// two positive strides and dilations, two non-negative paddings before and
/// after, and that a window of `window` fits the padded input. Returns the
/// output's rows and columns.
static FailureOr<std::array<int64_t, 2>>
verifyWindow(Operation *op, StringRef layoutName, Type inputType,
             ArrayRef<int64_t> window, ArrayRef<int64_t> strides,
             ArrayRef<int64_t> dilations, ArrayRef<int64_t> padLow,
             ArrayRef<int64_t> padHigh) {
  std::optional<WindowLayout> layout = windowLayout(layoutName);
  if (!layout)
    return op->emitOpError() << "layout must be \"nhwc\" or \"nchw\", got \""
                             << layoutName << "\"";
  ArrayRef<int64_t> shape = shapeOf(inputType);
  if (shape.size() != 4)
    return op->emitOpError()
           << "needs a 4-D input (" << layoutName << "), got " << inputType;
  if (failed(verifyFloatElements(op, elementTypeOf(inputType))))
    return failure();
  for (auto [name, values, least] :
       {std::tuple<StringRef, ArrayRef<int64_t>, int64_t>{"strides", strides,
                                                          1},
        {"dilations", dilations, 1},
        {"pad_low", padLow, 0},
        {"pad_high", padHigh, 0}}) {
    if (values.size() != 2)
      return op->emitOpError()
             << name << " needs 2 values (rows, columns), got "
             << values.size();
    for (int64_t v : values)
      if (v < least || v > (int64_t(1) << 30))
        return op->emitOpError()
               << name << " must be " << (least ? "positive" : "non-negative")
               << " (and below 2^30), got " << shapeString(values);
  }
  std::array<int64_t, 2> out;
  int64_t spatial[2] = {shape[layout->rows], shape[layout->columns]};
  for (int d = 0; d < 2; ++d) {
    int64_t reach = (window[d] - 1) * dilations[d] + 1;
    int64_t padded = spatial[d] + padLow[d] + padHigh[d];
    if (reach > padded)
      return op->emitOpError()
             << "a window reaching " << reach << " elements does not fit the "
             << (d ? "columns" : "rows") << " of the padded input (" << padded
             << ")";
    if (padLow[d] >= reach || padHigh[d] >= reach)
      return op->emitOpError()
             << "padding of " << padLow[d] << " before and " << padHigh[d]
             << " after is as wide as the window's reach (" << reach
             << ") in the " << (d ? "columns" : "rows")
             << ": some outputs would read padding only";
    out[d] = (padded - reach) / strides[d] + 1;
  }
  return out;
}

LogicalResult ConvOp::verify() {
  if (failed(verifySameLevel(*this)))
    return failure();
  ArrayRef<int64_t> filter = shapeOf(getFilter().getType());
  if (filter.size() != 4)
    return emitOpError() << "needs a 4-D filter ("
                         << (getLayout() == "nchw" ? "fchw" : "hwcf")
                         << "), got " << getFilter().getType();
  bool last = getLayout() == "nhwc";
  int64_t window[2] = {filter[last ? 0 : 2], filter[last ? 1 : 3]};
  auto out =
      verifyWindow(*this, getLayout(), getInput().getType(), window,
                   getStrides(), getDilations(), getPadLow(), getPadHigh());
  if (failed(out))
    return failure();
  WindowLayout layout = *windowLayout(getLayout());
  ArrayRef<int64_t> in = shapeOf(getInput().getType());
  Type element = elementTypeOf(getInput().getType());
  int64_t channels = filter[last ? 2 : 1], features = filter[last ? 3 : 0];
  if (elementTypeOf(getFilter().getType()) != element)
    return emitOpError() << "filter must hold " << element << " as the input "
                         << "does, got " << getFilter().getType();
  int64_t groups = getGroupCount();
  if (groups < 1)
    return emitOpError() << "groups must be positive, got " << groups;
  if (in[layout.channels] % groups != 0)
    return emitOpError() << "groups (" << groups << ") must divide the input's "
                         << in[layout.channels] << " channels";
  if (features % groups != 0)
    return emitOpError() << "groups (" << groups
                         << ") must divide the filter's " << features
                         << " output channels";
  if (channels * groups != in[layout.channels]) {
    if (groups == 1)
      return emitOpError() << "filter reads " << channels
                           << " input channels but the input has "
                           << in[layout.channels]
                           << " (a grouped convolution says so in `groups`)";
    return emitOpError() << "filter reads " << channels
                         << " input channels per group but the input's "
                         << in[layout.channels] << " channels in " << groups
                         << " groups are " << in[layout.channels] / groups
                         << " per group";
  }
  SmallVector<int64_t> shape(4);
  shape[layout.batch] = in[layout.batch];
  shape[layout.channels] = features;
  shape[layout.rows] = (*out)[0];
  shape[layout.columns] = (*out)[1];
  // Partial sums (a cut of the input channels) are held in the accumulator
  // type, planned or as a device-level block.
  auto relation = dyn_cast<RelationType>(getType());
  bool partial = relation ? relation.isPartial() : bool(getDevice());
  if (partial && elementTypeOf(getType()) == getAccType())
    element = getAccType();
  return failed(verifyResultShape(*this, getType(), shape, element))
             ? failure()
             : verifyPlanned(*this);
}

Type ConvOp::getAccType() {
  Type element = elementTypeOf(getInput().getType());
  if (element.isBF16() || element.isF16())
    return Float32Type::get(getContext());
  return element;
}

SmallVector<int64_t> ConvOp::getLoopSizes() {
  WindowLayout layout = *windowLayout(getLayout());
  ArrayRef<int64_t> out = shapeOf(getType());
  int64_t groups = getGroupCount();
  int64_t features = out[layout.channels],
          channels = shapeOf(getInput().getType())[layout.channels];
  if (groups == 1)
    return {out[layout.batch], out[layout.rows], out[layout.columns], features,
            channels};
  return {out[layout.batch], out[layout.rows], out[layout.columns], groups,
          features / groups, channels / groups};
}

SmallVector<std::string> ConvOp::getLoopNames() {
  if (getGroupCount() == 1)
    return {"n", "oh", "ow", "f", "c"};
  return {"n", "oh", "ow", "g", "f", "c"};
}

LogicalResult PoolOp::verify() {
  if (failed(verifySameLevel(*this)))
    return failure();
  if (getKind() != AggKind::Max && getKind() != AggKind::Add)
    return emitOpError() << "pools by max or add, not "
                         << stringifyAggKind(getKind());
  if (getWindow().size() != 2 || getWindow()[0] < 1 || getWindow()[1] < 1)
    return emitOpError() << "window needs 2 positive sizes, got "
                         << shapeString(getWindow());
  auto out =
      verifyWindow(*this, getLayout(), getInput().getType(), getWindow(),
                   getStrides(), getDilations(), getPadLow(), getPadHigh());
  if (failed(out))
    return failure();
  WindowLayout layout = *windowLayout(getLayout());
  SmallVector<int64_t> shape(shapeOf(getInput().getType()));
  shape[layout.rows] = (*out)[0];
  shape[layout.columns] = (*out)[1];
  return failed(verifyResultShape(*this, getType(), shape,
                                  elementTypeOf(getInput().getType())))
             ? failure()
             : verifyPlanned(*this);
}

SmallVector<int64_t> PoolOp::getLoopSizes() {
  WindowLayout layout = *windowLayout(getLayout());
  ArrayRef<int64_t> out = shapeOf(getType());
  return {out[layout.batch], out[layout.rows], out[layout.columns],
          out[layout.channels]};
}

SmallVector<std::string> PoolOp::getLoopNames() {
  return {"n", "oh", "ow", "c"};
}

//===----------------------------------------------------------------------===//
// Layout ops
//===----------------------------------------------------------------------===//

/// A reshape of relations moves no data: each group's cut must be an
/// ordinary cut of the dimension it collapses into (its outermost dimension
/// cut with agreeing cut points, or inner ones only under fully cut outer
/// ones), with the same replicas, partials and devices.
static LogicalResult
verifyRelationReshape(ReshapeOp op, RelationType high, RelationType low,
                      ArrayRef<SmallVector<int64_t>> groups) {
  if (high.getReplicas() != low.getReplicas() ||
      high.getPartial() != low.getPartial() ||
      high.getDevices() != low.getDevices())
    return op.emitOpError() << "moves no data: replicas, partials and devices "
                               "of the result must match the source's";
  for (auto [g, group] : llvm::enumerate(groups)) {
    std::vector<int64_t> sizes, parts;
    for (int64_t d : group) {
      sizes.push_back(high.getShape()[d]);
      parts.push_back(high.getParts()[d]);
    }
    int64_t total = ::ein::product(parts);
    if (total != low.getParts()[g])
      return op.emitOpError()
             << "dimension " << g << " of the lower-rank side is cut into "
             << low.getParts()[g] << " parts but its group into " << total;
    if (!::ein::cutsLikeOneDimension(sizes, parts))
      return op.emitOpError()
             << "the cut of group " << g << " (" << shapeString(parts)
             << " parts of " << shapeString(sizes)
             << ") is not an ordinary cut of dimension " << g << " of size "
             << low.getShape()[g];
  }
  return success();
}

LogicalResult ReshapeOp::verify() {
  Type sourceType = getSource().getType(), resultType = getType();
  if (isa<RelationType>(sourceType) != isa<RelationType>(resultType))
    return emitOpError() << "reshapes a relation into a relation and a tensor "
                            "into a tensor, got "
                         << sourceType << " to " << resultType;
  if (elementTypeOf(sourceType) != elementTypeOf(resultType))
    return emitOpError() << "cannot change the element type ("
                         << elementTypeOf(sourceType) << " to "
                         << elementTypeOf(resultType) << ")";
  bool expand = shapeOf(resultType).size() > shapeOf(sourceType).size();
  Type highType = expand ? resultType : sourceType;
  Type lowType = expand ? sourceType : resultType;
  ArrayRef<int64_t> high = shapeOf(highType), low = shapeOf(lowType);

  SmallVector<SmallVector<int64_t>> groups;
  for (Attribute group : getReassociation())
    groups.push_back(llvm::to_vector(
        llvm::map_range(cast<ArrayAttr>(group), [](Attribute a) {
          return cast<IntegerAttr>(a).getInt();
        })));
  if (groups.size() != low.size())
    return emitOpError() << "reassociation has " << groups.size()
                         << " groups but the lower-rank side has rank "
                         << low.size();
  int64_t next = 0;
  for (auto [g, group] : llvm::enumerate(groups)) {
    if (group.empty())
      return emitOpError() << "reassociation group " << g << " is empty";
    int64_t elements = 1;
    for (int64_t d : group) {
      if (d != next || d >= static_cast<int64_t>(high.size()))
        return emitOpError()
               << "reassociation must list dimensions 0.." << high.size() - 1
               << " of the higher-rank side in order; group " << g << " has "
               << d << " where " << next << " belongs";
      elements *= high[d];
      ++next;
    }
    if (elements != low[g])
      return emitOpError() << "group " << g << " covers " << elements
                           << " elements but dimension " << g
                           << " of the lower-rank side has " << low[g];
  }
  if (next != static_cast<int64_t>(high.size()))
    return emitOpError() << "reassociation covers " << next << " of the "
                         << high.size()
                         << " dimensions of the higher-rank side";
  if (auto highRelation = dyn_cast<RelationType>(highType))
    if (failed(verifyRelationReshape(*this, highRelation,
                                     cast<RelationType>(lowType), groups)))
      return failure();
  return verifyPlanned(*this);
}

SmallVector<int64_t> ReshapeOp::getLoopSizes() {
  ArrayRef<int64_t> source = shapeOf(getSource().getType());
  ArrayRef<int64_t> result = shapeOf(getType());
  return llvm::to_vector(source.size() > result.size() ? source : result);
}

SmallVector<std::string> ReshapeOp::getLoopNames() {
  return defaultLoopNames(getLoopSizes().size());
}

OpFoldResult ReshapeOp::fold(FoldAdaptor) {
  if (getSource().getType() == getType())
    return getSource();
  if (auto producer = getSource().getDefiningOp<ReshapeOp>())
    if (producer.getSource().getType() == getType())
      return producer.getSource();
  return {};
}

LogicalResult SliceOp::verify() {
  if (failed(verifySameLevel(*this)) ||
      failed(verifyStaticRegion(*this, getSource().getType(), getOffsets(),
                                getSizes(), getType(), "slice", "source")))
    return failure();
  return verifyPlanned(*this);
}

SmallVector<int64_t> SliceOp::getLoopSizes() {
  return llvm::to_vector(shapeOf(getType()));
}

SmallVector<std::string> SliceOp::getLoopNames() {
  return defaultLoopNames(shapeOf(getType()).size());
}

OpFoldResult SliceOp::fold(FoldAdaptor) {
  if (getSource().getType() == getType())
    return getSource();
  return {};
}

LogicalResult ConcatOp::verify() {
  if (failed(verifySameLevel(*this)))
    return failure();
  if (getInputs().empty())
    return emitOpError() << "needs at least one input";
  auto first = cast<ShapedType>(getInputs().front().getType());
  int64_t dim = getDimAttr().getInt();
  if (dim < 0 || dim >= first.getRank())
    return emitOpError() << "dim " << dim << " is out of range for rank "
                         << first.getRank();
  SmallVector<int64_t> shape = llvm::to_vector(first.getShape());
  shape[dim] = 0;
  for (auto [i, input] : llvm::enumerate(getInputs())) {
    auto type = cast<ShapedType>(input.getType());
    if (type.getRank() != first.getRank() ||
        type.getElementType() != first.getElementType())
      return emitOpError() << "input " << i << " is " << type
                           << ", which does not concatenate with " << first;
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (d != dim && type.getDimSize(d) != first.getDimSize(d))
        return emitOpError() << "input " << i << " has size "
                             << type.getDimSize(d) << " in dimension " << d
                             << " but input 0 has " << first.getDimSize(d);
    shape[dim] += type.getDimSize(dim);
  }
  if (failed(
          verifyResultShape(*this, getType(), shape, first.getElementType())))
    return failure();
  return verifyPlanned(*this);
}

SmallVector<int64_t> ConcatOp::getLoopSizes() {
  return llvm::to_vector(shapeOf(getType()));
}

SmallVector<std::string> ConcatOp::getLoopNames() {
  return defaultLoopNames(shapeOf(getType()).size());
}

OpFoldResult ConcatOp::fold(FoldAdaptor) {
  if (getInputs().size() == 1 && getInputs().front().getType() == getType())
    return getInputs().front();
  return {};
}

//===----------------------------------------------------------------------===//
// Logical exchanges
//===----------------------------------------------------------------------===//

/// Checks that a tensor and a relation hold the same logical tensor.
static LogicalResult verifySameTensor(Operation *op, RankedTensorType tensor,
                                      RelationType relation) {
  if (tensor.getShape() != relation.getShape() ||
      tensor.getElementType() != relation.getElementType())
    return op->emitOpError() << "keeps shape and element type, but " << tensor
                             << " and " << relation << " differ";
  if (relation.isPartial())
    return op->emitOpError()
           << "a whole tensor holds no pending partials, but " << relation
           << " is partial; aggregate it with ein.repartition";
  return success();
}

LogicalResult PartitionOp::verify() {
  return verifySameTensor(*this, getSource().getType(), getType());
}

LogicalResult AssembleOp::verify() {
  return verifySameTensor(*this, getType(), getSource().getType());
}

LogicalResult RepartitionOp::verify() {
  RelationType source = getSource().getType(), result = getType();
  if (source.getShape() != result.getShape())
    return emitOpError() << "keeps the shape, but "
                         << shapeString(source.getShape()) << " becomes "
                         << shapeString(result.getShape());
  if (source.getElementType() != result.getElementType() &&
      !(source.isPartial() && !result.isPartial() &&
        isa<FloatType>(source.getElementType()) &&
        isa<FloatType>(result.getElementType())))
    return emitOpError() << "only aggregating float partials may change the "
                            "element type, here "
                         << source.getElementType() << " to "
                         << result.getElementType();
  if (result.isPartial() && !source.isPartial())
    return emitOpError() << "cannot create pending partials";
  if (result.isPartial() && result.getPartial() != source.getPartial())
    return emitOpError() << "pending partial<"
                         << stringifyAggKind(source.getPartial())
                         << "> results cannot become partial<"
                         << stringifyAggKind(result.getPartial()) << ">";
  return success();
}

OpFoldResult RepartitionOp::fold(FoldAdaptor) {
  if (getSource().getType() == getType())
    return getSource();
  return {};
}

//===----------------------------------------------------------------------===//
// Device level
//===----------------------------------------------------------------------===//

/// Checks every device a placed relation names against the target.
static LogicalResult verifyPlacement(Operation *op, RelationType relation) {
  if (!relation.isPlaced())
    return op->emitOpError()
           << "needs a placed relation (with devices), got " << relation;
  for (int64_t device : relation.getDevices())
    if (failed(verifyDevice(op, device, "relation device")))
      return failure();
  return success();
}

static RankedTensorType blockType(RelationType relation, int64_t block) {
  return RankedTensorType::get(relation.getBlockShape(block),
                               relation.getElementType());
}

Value mlir::ein::stripFloatCasts(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (!isa<arith::ExtFOp, arith::TruncFOp>(def))
      break;
    v = def->getOperand(0);
  }
  return v;
}

Value mlir::ein::yieldedValue(JoinAggOp op) {
  return stripFloatCasts(op.getJoin().front().getTerminator()->getOperand(0));
}

//===----------------------------------------------------------------------===//
// GemmOp
//===----------------------------------------------------------------------===//

LogicalResult GemmOp::verify() {
  auto a = cast<RankedTensorType>(getA().getType()),
       b = cast<RankedTensorType>(getB().getType()),
       out = cast<RankedTensorType>(getType());
  Type element = a.getElementType();
  if (b.getElementType() != element || !isa<FloatType>(element) ||
      !isa<FloatType>(out.getElementType()))
    return emitOpError() << "multiplies float operands of one element type "
                            "into a float result, got "
                         << a << ", " << b << " -> " << out;
  int64_t rank = out.getRank();
  if (rank < 2)
    return emitOpError() << "needs a result of rank 2 or more, got " << out;
  ArrayRef<int64_t> batch = out.getShape().drop_back(2);
  for (auto [name, t] : {std::pair{"a", a}, std::pair{"b", b}})
    if (t.getRank() != 2 &&
        (t.getRank() != rank || t.getShape().drop_back(2) != batch))
      return emitOpError() << "operand " << name
                           << " must be a matrix or carry the "
                           << "result's batch dimensions [" << batch
                           << "], got " << t;
  auto matrix = [](RankedTensorType t, bool transposed) {
    ArrayRef<int64_t> s = t.getShape().take_back(2);
    return transposed ? std::pair{s[1], s[0]} : std::pair{s[0], s[1]};
  };
  auto [m, ka] = matrix(a, getTransposeA());
  auto [kb, n] = matrix(b, getTransposeB());
  if (ka != kb || m != out.getShape()[rank - 2] ||
      n != out.getShape()[rank - 1])
    return emitOpError() << "multiplies " << m << "x" << ka << " by " << kb
                         << "x" << n << " (after transposes), which does "
                         << "not give the result's " << out.getShape()[rank - 2]
                         << "x" << out.getShape()[rank - 1];
  if (Value bias = getBias()) {
    auto t = cast<RankedTensorType>(bias.getType());
    if (t.getRank() != 1 || t.getShape()[0] != n ||
        t.getElementType() != out.getElementType())
      return emitOpError() << "bias must be a vector of " << n << " "
                           << out.getElementType() << ", got " << t;
  }
  if (Value addend = getAddend())
    if (addend.getType() != out)
      return emitOpError() << "addend must have the result's type " << out
                           << ", got " << addend.getType();
  if (getDeviceAttr().getInt() < 0)
    return emitOpError() << "device must not be negative, got "
                         << getDeviceAttr().getInt();
  return success();
}

LogicalResult ViewOp::verify() {
  auto source = cast<RankedTensorType>(getSource().getType()),
       result = cast<RankedTensorType>(getType());
  if (source.getElementType() != result.getElementType())
    return emitOpError() << "views elements of one type, got " << source
                         << " -> " << result;
  if (!source.hasStaticShape() || !result.hasStaticShape())
    return emitOpError() << "views static shapes, got " << source << " -> "
                         << result;
  ArrayRef<int64_t> strides = getStrides();
  if (static_cast<int64_t>(strides.size()) != result.getRank())
    return emitOpError() << "has " << strides.size()
                         << " strides for a result of rank "
                         << result.getRank();
  int64_t offset = getOffsetAttr().getInt();
  if (offset < 0 || llvm::any_of(strides, [](int64_t s) { return s < 0; }))
    return emitOpError() << "offset and strides must not be negative";
  // The last element the view reads must be one of the source's (summed
  // saturating: crafted strides must not wrap).
  uint64_t last = offset;
  bool overflow = false;
  for (auto [size, stride] : llvm::zip(result.getShape(), strides))
    last = llvm::SaturatingMultiplyAdd<uint64_t>(size - 1, stride, last,
                                                 &overflow);
  if (result.getNumElements() > 0 && overflow)
    return emitOpError() << "reads past the end of a source of "
                         << source.getNumElements() << " elements";
  if (result.getNumElements() > 0 && last >= uint64_t(source.getNumElements()))
    return emitOpError() << "reads element " << last << " of a source of "
                         << source.getNumElements() << " elements";
  return success();
}

LogicalResult ExtractBlockOp::verify() {
  RelationType source = getSource().getType();
  if (failed(verifyPlacement(*this, source)))
    return failure();
  ArrayRef<int64_t> block = getBlock();
  if (static_cast<int64_t>(block.size()) != source.getRank())
    return emitOpError() << "block index has " << block.size()
                         << " entries for a relation of rank "
                         << source.getRank();
  for (auto [d, b] : llvm::enumerate(block))
    if (b < 0 || b >= source.getParts()[d])
      return emitOpError() << "block index " << b << " in dimension " << d
                           << " is outside its " << source.getParts()[d]
                           << " parts";
  int64_t replica = getReplicaAttr().getInt();
  if (replica < 0 || replica >= source.getReplicas())
    return emitOpError() << "replica " << replica << " is outside the "
                         << source.getReplicas() << " replicas";
  RankedTensorType expected =
      blockType(source, ::ein::linearize(block, source.getParts()));
  if (getType() != expected)
    return emitOpError() << "block " << shapeString(block) << " is " << expected
                         << ", got " << getType();
  return success();
}

int64_t ExtractBlockOp::getDevice() {
  RelationType source = getSource().getType();
  int64_t linear = ::ein::linearize(getBlock(), source.getParts());
  return source
      .getDevices()[linear * source.getReplicas() + getReplicaAttr().getInt()];
}

LogicalResult FromBlocksOp::verify() {
  RelationType result = getType();
  if (failed(verifyPlacement(*this, result)))
    return failure();
  int64_t copies = result.getNumBlocks() * result.getReplicas();
  if (static_cast<int64_t>(getBlocks().size()) != copies)
    return emitOpError() << "the relation has " << copies << " copies ("
                         << result.getNumBlocks() << " blocks x "
                         << result.getReplicas() << " replicas) but "
                         << getBlocks().size() << " are given";
  for (auto [i, block] : llvm::enumerate(getBlocks())) {
    RankedTensorType expected = blockType(result, i / result.getReplicas());
    if (block.getType() != expected)
      return emitOpError() << "operand " << i << " is block "
                           << i / result.getReplicas() << ", which is "
                           << expected << ", got " << block.getType();
  }
  return success();
}

/// `%x [0, 0] [16, 64], %y [16, 0] [16, 64]`: each source with its region.
static ParseResult
parseTransferRegions(OpAsmParser &parser,
                     SmallVectorImpl<OpAsmParser::UnresolvedOperand> &sources,
                     ArrayAttr &offsets, ArrayAttr &sizes) {
  SmallVector<Attribute> offsetList, sizeList;
  auto region = [&]() -> ParseResult {
    OpAsmParser::UnresolvedOperand source;
    Attribute offset, size;
    if (parser.parseOperand(source) ||
        !(offset = DenseI64ArrayAttr::parse(parser, Type())) ||
        !(size = DenseI64ArrayAttr::parse(parser, Type())))
      return failure();
    sources.push_back(source);
    offsetList.push_back(offset);
    sizeList.push_back(size);
    return success();
  };
  if (parser.parseCommaSeparatedList(region))
    return failure();
  offsets = parser.getBuilder().getArrayAttr(offsetList);
  sizes = parser.getBuilder().getArrayAttr(sizeList);
  return success();
}

/// List `i` of `lists` as `[0, 16]`; whatever else the generic form held
/// (the verifier names it), as it is.
static void printRegionList(OpAsmPrinter &printer, ArrayAttr lists,
                            unsigned i) {
  if (i >= lists.size())
    printer << "[]";
  else if (auto list = dyn_cast<DenseI64ArrayAttr>(lists[i]))
    printer.printStrippedAttrOrType(list);
  else
    printer.printAttribute(lists[i]);
}

static void printTransferRegions(OpAsmPrinter &printer, Operation *,
                                 OperandRange sources, ArrayAttr offsets,
                                 ArrayAttr sizes) {
  for (unsigned i = 0, e = sources.size(); i < e; ++i) {
    if (i)
      printer << ", ";
    printer << sources[i] << " ";
    printRegionList(printer, offsets, i);
    printer << " ";
    printRegionList(printer, sizes, i);
  }
}

LogicalResult TransferOp::verify() {
  unsigned regions = getSources().size();
  if (regions == 0)
    return emitOpError() << "moves no region";
  if (getOffsets().size() != regions || getSizes().size() != regions ||
      getResults().size() != regions)
    return emitOpError() << "has " << regions << " sources but "
                         << getOffsets().size() << " offset lists, "
                         << getSizes().size() << " size lists and "
                         << getResults().size() << " block results";
  for (unsigned i = 0; i < regions; ++i)
    if (failed(verifyStaticRegion(*this, getSources()[i].getType(),
                                  getRegionOffsets(i), getRegionSizes(i),
                                  getResults()[i].getType(),
                                  regions == 1 ? std::string("region")
                                               : "region " + std::to_string(i),
                                  "block")))
      return failure();
  int64_t from = getFromAttr().getInt(), to = getToAttr().getInt();
  if (failed(verifyDevice(*this, from, "source device")) ||
      failed(verifyDevice(*this, to, "destination device")))
    return failure();
  if (from == to)
    return emitOpError() << "moves a block from device " << from
                         << " to itself";
  llvm::SmallDenseSet<int64_t> visited = {from, to};
  for (int64_t hop : getVia().value_or(ArrayRef<int64_t>())) {
    if (failed(verifyDevice(*this, hop, "relay device")))
      return failure();
    if (!visited.insert(hop).second)
      return emitOpError() << "relay visits device " << hop
                           << " twice (or relays through an endpoint)";
  }
  return success();
}

LogicalResult MulticastOp::verify() {
  ArrayRef<int64_t> destinations = getTo();
  if (destinations.size() < 2)
    return emitOpError() << "multicast needs at least 2 destinations, got "
                         << destinations.size() << "; use ein.transfer";
  if (getResults().size() != destinations.size())
    return emitOpError() << "has " << destinations.size()
                         << " destinations but " << getResults().size()
                         << " block results";
  int64_t from = getFromAttr().getInt();
  if (failed(verifyDevice(*this, from, "source device")))
    return failure();
  llvm::SmallDenseSet<int64_t> seen = {from};
  for (int64_t to : destinations) {
    if (failed(verifyDevice(*this, to, "destination device")))
      return failure();
    if (!seen.insert(to).second)
      return emitOpError() << "device " << to
                           << " appears twice among the source and "
                              "destinations";
  }
  for (auto [i, result] : llvm::enumerate(getResults()))
    if (result.getType() != getSource().getType())
      return emitOpError() << "result " << i << " is " << result.getType()
                           << " but a multicast copies "
                           << getSource().getType() << " whole";
  return success();
}

LogicalResult AggregateOp::verify() {
  AggKind kind = getKind();
  if (kind == AggKind::None || kind == AggKind::OnlineSoftmax)
    return emitOpError() << "'" << stringifyAggKind(kind)
                         << "' is not an elementwise aggregation; expected "
                            "add, max, min or mul";
  if (getPartials().size() < 2)
    return emitOpError() << "needs at least 2 partials, got "
                         << getPartials().size();
  auto first = cast<RankedTensorType>(getPartials().front().getType());
  for (auto [i, partial] : llvm::enumerate(getPartials()))
    if (partial.getType() != first)
      return emitOpError() << "partial " << i << " is " << partial.getType()
                           << " but partial 0 is " << first;
  auto result = cast<RankedTensorType>(getType(0));
  Type from = first.getElementType(), to = result.getElementType();
  if (result.getShape() != first.getShape())
    return emitOpError() << "result shape " << shapeString(result.getShape())
                         << " differs from the partials' "
                         << shapeString(first.getShape());
  if (from != to &&
      !(isa<FloatType>(from) && isa<FloatType>(to) &&
        to.getIntOrFloatBitWidth() <= from.getIntOrFloatBitWidth()))
    return emitOpError() << "may only round partials to a float type no "
                            "wider, got "
                         << from << " to " << to;
  return verifyDevice(*this, getDeviceAttr().getInt(), "device");
}

//===----------------------------------------------------------------------===//
// Accesses and the planned form
//===----------------------------------------------------------------------===//

SmallVector<int64_t> OperandAccess::cut(ArrayRef<int64_t> parts) const {
  SmallVector<int64_t> result;
  for (const auto &loops : dimLoops) {
    int64_t p = 1;
    for (int64_t l : loops)
      p *= parts[l];
    result.push_back(p);
  }
  return result;
}

int64_t OperandAccess::partsOutside(ArrayRef<int64_t> parts) const {
  llvm::SmallDenseSet<int64_t> spanned;
  for (const auto &loops : dimLoops)
    spanned.insert(loops.begin(), loops.end());
  int64_t product = 1;
  for (int64_t l = 0, e = parts.size(); l < e; ++l)
    if (!spanned.contains(l))
      product *= parts[l];
  return product;
}

/// Every dimension read by the loop of the same number.
static OperandAccess identityAccess(int64_t rank) {
  OperandAccess access;
  for (int64_t d = 0; d < rank; ++d)
    access.dimLoops.push_back({d});
  return access;
}

/// Accesses with the result's element type as the accumulator.
static OpAccesses accessesOf(Operation *op) {
  OpAccesses a;
  a.accumulator = elementTypeOf(op->getResult(0).getType());
  return a;
}

/// The element type `op`'s partial sums move and combine in: its
/// accumulator, or the result's float type where the module's target asks
/// for partials in the output precision (`partials = "out"`).
static Type partialElement(Operation *op, Type accumulator) {
  Type result = elementTypeOf(op->getResult(0).getType());
  TargetAttr target = getTarget(op);
  if (target && target.getPartials() == "out" && isa<FloatType>(result) &&
      isa<FloatType>(accumulator))
    return result;
  return accumulator;
}

static int64_t resultRank(Operation *op) {
  return shapeOf(op->getResult(0).getType()).size();
}

OpAccesses JoinAggOp::getAccesses() {
  OpAccesses a = accessesOf(*this);
  for (unsigned i = 0, e = getInputs().size(); i < e; ++i) {
    OperandAccess access;
    for (int64_t l : getIndicesOfInput(i))
      access.dimLoops.push_back({l});
    a.inputs.push_back(access);
  }
  for (int64_t l : getOutputIndices())
    a.result.dimLoops.push_back({l});
  a.aggregation = getAgg();
  a.accumulator = partialElement(*this, getAccType());
  return a;
}

double JoinAggOp::getFlopsPerPoint() {
  // One operation per arithmetic op of the join, plus the aggregation's
  // combine. Constants, positions and casts (a bf16 product's operands
  // widened to f32) do no arithmetic.
  double ops = 0;
  for (Operation &scalar : getJoin().front().without_terminator())
    if (!scalar.hasTrait<OpTrait::ConstantLike>() && !isa<IndexOp>(scalar) &&
        !isa<CastOpInterface>(scalar))
      ++ops;
  return std::max<double>(1, ops) + (getAggregatedLoops().empty() ? 0 : 1);
}

OpAccesses AttentionOp::getAccesses() {
  // Loops: batch, kv_head, group, query, key; head dims stay whole.
  OpAccesses a = accessesOf(*this);
  OperandAccess heads, keys;
  heads.dimLoops = {{0}, {1, 2}, {3}, {}};
  keys.dimLoops = {{0}, {1}, {4}, {}};
  a.inputs = {heads, keys, keys};
  a.result = heads;
  a.aggregation = AggKind::OnlineSoftmax;
  a.accumulator = Float32Type::get(getContext());
  return a;
}

double AttentionOp::getFlopsPerPoint() {
  // Q.K^T and P.V: a multiply-add per head element of each.
  return 2.0 *
         (shapeOf(getQuery().getType())[3] + shapeOf(getValue().getType())[3]);
}

std::optional<CausalMask> AttentionOp::getCausalMask() {
  if (!getCausal())
    return std::nullopt;
  return CausalMask{3, 4, getQueryOffsetAttr().getInt(),
                    getKeyOffsetAttr().getInt()};
}

OpAccesses SoftmaxOp::getAccesses() {
  OpAccesses a = accessesOf(*this);
  a.inputs = {identityAccess(resultRank(*this))};
  a.result = identityAccess(resultRank(*this));
  return a;
}

double SoftmaxOp::getFlopsPerPoint() { return 4; }

SmallVector<int64_t> SoftmaxOp::getWholeLoops() {
  // Its fused kernel reduces along the softmax dimension.
  return {getDimAttr().getInt()};
}

OpAccesses RmsNormOp::getAccesses() {
  int64_t rank = resultRank(*this);
  OpAccesses a = accessesOf(*this);
  OperandAccess weight;
  weight.dimLoops = {{rank - 1}};
  a.inputs = {identityAccess(rank), weight};
  a.result = identityAccess(rank);
  return a;
}

double RmsNormOp::getFlopsPerPoint() { return 3; }

SmallVector<int64_t> RmsNormOp::getWholeLoops() {
  // The normalised (last) dimension.
  return {resultRank(*this) - 1};
}

OpAccesses LayerNormOp::getAccesses() {
  int64_t rank = resultRank(*this);
  OpAccesses a = accessesOf(*this);
  OperandAccess param;
  param.dimLoops = {{rank - 1}};
  a.inputs = {identityAccess(rank)};
  if (getWeight())
    a.inputs.push_back(param);
  if (getBias())
    a.inputs.push_back(param);
  a.result = identityAccess(rank);
  return a;
}

// The mean, the squared deviations, then the scale and shift.
double LayerNormOp::getFlopsPerPoint() { return 6; }

SmallVector<int64_t> LayerNormOp::getWholeLoops() {
  return {resultRank(*this) - 1};
}

OpAccesses GatherOp::getAccesses() {
  // Loops: the indices' dimensions (r), the table's rows, its other
  // dimensions. The rows are summed over (one contributes, the others
  // give 0), so a cut of them leaves partials that add.
  int64_t r = cast<ShapedType>(getIndices().getType()).getRank();
  int64_t tableRank = cast<ShapedType>(getTable().getType()).getRank();
  OpAccesses a = accessesOf(*this);
  OperandAccess table, indices, result;
  for (int64_t d = 0; d < tableRank; ++d)
    table.dimLoops.push_back({r + d});
  for (int64_t d = 0; d < r; ++d) {
    indices.dimLoops.push_back({d});
    result.dimLoops.push_back({d});
  }
  for (int64_t d = 1; d < tableRank; ++d)
    result.dimLoops.push_back({r + d});
  a.inputs = {table, indices};
  a.result = result;
  a.aggregation = AggKind::Add;
  return a;
}

// One load a result element: per point of the loop space (which spans the
// table's rows), one over the rows.
double GatherOp::getFlopsPerPoint() {
  return 1.0 / double(cast<ShapedType>(getTable().getType()).getShape()[0]);
}

OpAccesses ArgReduceOp::getAccesses() {
  int64_t rank = shapeOf(getInput().getType()).size();
  int64_t dim = getDimAttr().getInt();
  OpAccesses a = accessesOf(*this);
  a.inputs = {identityAccess(rank)};
  for (int64_t d = 0; d < rank; ++d)
    if (d != dim)
      a.result.dimLoops.push_back({d});
  return a;
}

// A compare and a select per element.
double ArgReduceOp::getFlopsPerPoint() { return 2; }

SmallVector<int64_t> ArgReduceOp::getWholeLoops() {
  return {getDimAttr().getInt()};
}

/// The input access of a windowed op whose loops `n, oh, ow` are 0, 1, 2
/// and whose channels span `channelLoops` (outermost first): rows and
/// columns read through the window (their halos included), the batch and
/// channels plainly.
static OperandAccess
windowedInput(StringRef layoutName, ArrayRef<int64_t> channelLoops,
              ArrayRef<int64_t> window, ArrayRef<int64_t> strides,
              ArrayRef<int64_t> dilations, ArrayRef<int64_t> padLow) {
  WindowLayout layout = *windowLayout(layoutName);
  OperandAccess access;
  access.dimLoops.resize(4);
  access.shift.assign(4, 0);
  access.stride.assign(4, 1);
  access.extent.assign(4, 1);
  access.dimLoops[layout.batch] = {0};
  access.dimLoops[layout.channels].assign(channelLoops.begin(),
                                          channelLoops.end());
  int64_t spatial[2] = {layout.rows, layout.columns};
  for (auto [d, dim] : llvm::enumerate(spatial)) {
    access.dimLoops[dim] = {int64_t(d) + 1};
    access.shift[dim] = -padLow[d];
    access.stride[dim] = strides[d];
    access.extent[dim] = (window[d] - 1) * dilations[d] + 1;
  }
  return access;
}

/// The result access of a windowed op: loops `n, oh, ow` then the
/// channels' `channelLoops`, in the layout's places.
static OperandAccess windowedResult(StringRef layoutName,
                                    ArrayRef<int64_t> channelLoops) {
  WindowLayout layout = *windowLayout(layoutName);
  OperandAccess access;
  access.dimLoops.resize(4);
  access.dimLoops[layout.batch] = {0};
  access.dimLoops[layout.rows] = {1};
  access.dimLoops[layout.columns] = {2};
  access.dimLoops[layout.channels].assign(channelLoops.begin(),
                                          channelLoops.end());
  return access;
}

OpAccesses ConvOp::getAccesses() {
  // Loops: n, oh, ow, f, c; with groups, n, oh, ow, g, f, c, each channel
  // dimension spanning the group and its place in the group. The filter's
  // window stays whole.
  bool last = getLayout() == "nhwc";
  ArrayRef<int64_t> filter = shapeOf(getFilter().getType());
  int64_t window[2] = {filter[last ? 0 : 2], filter[last ? 1 : 3]};
  SmallVector<int64_t, 2> features = {3}, channels = {4};
  if (getGroupCount() != 1) {
    features = {3, 4};
    channels = {3, 5};
  }
  SmallVector<int64_t, 2> perGroup = {channels.back()};
  OpAccesses a = accessesOf(*this);
  OperandAccess weights;
  weights.dimLoops =
      last ? SmallVector<SmallVector<int64_t, 2>>{{}, {}, perGroup, features}
           : SmallVector<SmallVector<int64_t, 2>>{features, perGroup, {}, {}};
  a.inputs = {windowedInput(getLayout(), channels, window, getStrides(),
                            getDilations(), getPadLow()),
              weights};
  a.result = windowedResult(getLayout(), features);
  a.aggregation = AggKind::Add;
  a.accumulator = partialElement(*this, getAccType());
  return a;
}

double ConvOp::getFlopsPerPoint() {
  // A multiply-add per element of the window.
  ArrayRef<int64_t> filter = shapeOf(getFilter().getType());
  bool last = getLayout() == "nhwc";
  return 2.0 * double(filter[last ? 0 : 2] * filter[last ? 1 : 3]);
}

OpAccesses PoolOp::getAccesses() {
  // Loops: n, oh, ow, c.
  OpAccesses a = accessesOf(*this);
  a.inputs = {windowedInput(getLayout(), {3}, getWindow(), getStrides(),
                            getDilations(), getPadLow())};
  a.result = windowedResult(getLayout(), {3});
  return a;
}

double PoolOp::getFlopsPerPoint() {
  return double(getWindow()[0] * getWindow()[1]);
}

OpAccesses ReshapeOp::getAccesses() {
  // Loops are the higher-rank side's dimensions; each dimension of the
  // lower-rank side spans its group.
  int64_t rank = resultRank(*this);
  int64_t sourceRank = shapeOf(getSource().getType()).size();
  OpAccesses a = accessesOf(*this);
  OperandAccess groups;
  for (Attribute group : getReassociation()) {
    groups.dimLoops.emplace_back();
    for (Attribute d : cast<ArrayAttr>(group))
      groups.dimLoops.back().push_back(cast<IntegerAttr>(d).getInt());
  }
  bool expand = rank > sourceRank;
  a.inputs = {expand ? groups : identityAccess(sourceRank)};
  a.result = expand ? identityAccess(rank) : groups;
  return a;
}

// Layout ops move data and compute nothing.
double ReshapeOp::getFlopsPerPoint() { return 0; }

OpAccesses SliceOp::getAccesses() {
  int64_t rank = resultRank(*this);
  OpAccesses a = accessesOf(*this);
  OperandAccess source = identityAccess(rank);
  source.shift = llvm::to_vector(getOffsets());
  a.inputs = {source};
  a.result = identityAccess(rank);
  return a;
}

double SliceOp::getFlopsPerPoint() { return 0; }

OpAccesses ConcatOp::getAccesses() {
  int64_t rank = resultRank(*this);
  OpAccesses a = accessesOf(*this);
  int64_t dim = getDimAttr().getInt(), at = 0;
  for (Value input : getInputs()) {
    OperandAccess access = identityAccess(rank);
    access.shift.assign(rank, 0);
    access.shift[dim] = -at;
    at += shapeOf(input.getType())[dim];
    a.inputs.push_back(access);
  }
  a.result = identityAccess(rank);
  return a;
}

double ConcatOp::getFlopsPerPoint() { return 0; }

/// "loop d1" or "loops kv_head x group".
static std::string describeLoops(ArrayRef<int64_t> loops,
                                 ArrayRef<std::string> names) {
  std::string text = loops.size() == 1 ? "loop " : "loops ";
  for (auto [i, l] : llvm::enumerate(loops))
    text += (i ? " x " : "") + names[l];
  return text;
}

LogicalResult mlir::ein::verifyPlanned(SpecOpInterface op) {
  Operation *operation = op;
  if (!isa<RelationType>(operation->getResult(0).getType())) {
    if (failed(verifySpec(op)))
      return failure();
    if (auto device = operation->getAttrOfType<IntegerAttr>("device"))
      return verifyDevice(operation, device.getInt(), "device");
    return success();
  }
  if (operation->getAttr("device"))
    return op->emitOpError() << "'device' marks block kernels on tensors, not "
                                "planned ops on relations";
  SpecAttr spec = op.getSpecAttr();
  if (!spec)
    return op->emitOpError() << "operates on relations but has no spec; a "
                                "planned op needs one";
  if (failed(verifySpec(op)))
    return failure();

  ArrayRef<int64_t> parts = spec.getParts();
  SmallVector<std::string> names = op.getLoopNames();
  OpAccesses accesses = op.getAccesses();
  // Checks a relation's cut against the spec; returns the product of the
  // parts of the loops the access does not span (its copies, or fan-in).
  auto verifyCut = [&](RelationType relation, const OperandAccess &access,
                       const Twine &what) -> FailureOr<int64_t> {
    SmallVector<int64_t> expected = access.cut(parts);
    for (auto [d, loops] : llvm::enumerate(access.dimLoops)) {
      if (relation.getParts()[d] == expected[d])
        continue;
      InFlightDiagnostic diag = op->emitOpError();
      if (loops.empty())
        diag << "dimension " << d << " of " << what
             << " may not be cut, but it is cut into "
             << relation.getParts()[d];
      else
        diag << "spec cuts " << describeLoops(loops, names) << " into "
             << expected[d] << " parts but " << what << " is cut into "
             << relation.getParts()[d] << " along dimension " << d;
      return diag;
    }
    return access.partsOutside(parts);
  };

  for (auto [i, input] : llvm::enumerate(operation->getOperands())) {
    auto relation = cast<RelationType>(input.getType());
    if (relation.isPartial())
      return op->emitOpError()
             << "input " << i << " still holds pending partial<"
             << stringifyAggKind(relation.getPartial())
             << "> results; aggregate them first";
    const OperandAccess &access = accesses.inputs[i];
    if (!access.shift.empty())
      continue; // a touched input maps by intersection, cut any way
    FailureOr<int64_t> copies =
        verifyCut(relation, access, "input " + Twine(i));
    if (failed(copies))
      return failure();
    if (relation.getReplicas() != *copies)
      return op->emitOpError() << "input " << i << " must arrive with "
                               << *copies << " replicas under spec " << spec
                               << " (one per join block that reads it) but has "
                               << relation.getReplicas();
  }

  auto result = cast<RelationType>(operation->getResult(0).getType());
  FailureOr<int64_t> fanIn = verifyCut(result, accesses.result, "the result");
  if (failed(fanIn))
    return failure();
  AggKind expected = *fanIn > 1 ? accesses.aggregation : AggKind::None;
  if (result.getReplicas() != *fanIn || result.getPartial() != expected) {
    InFlightDiagnostic diag = op->emitOpError()
                              << "under spec " << spec
                              << " the result holds an aggregation fan-in of "
                              << *fanIn << ": it must be ";
    if (*fanIn > 1)
      diag << "partial = " << stringifyAggKind(expected)
           << " with replicas = " << *fanIn;
    else
      diag << "complete with replicas = 1";
    return diag << ", got " << result;
  }
  if (*fanIn > 1 && result.getElementType() != accesses.accumulator)
    return op->emitOpError()
           << "pending partials are kept in the accumulator type "
           << accesses.accumulator << " but the result holds "
           << result.getElementType();
  return success();
}

#define GET_OP_CLASSES
#include "Einsummable/Dialect/Ein/IR/EinOps.cpp.inc"
