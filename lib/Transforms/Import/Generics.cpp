//===- Generics.cpp - ein-import: a linalg.generic to an ein.join_agg -----===//
//
// Every generic left after the lookups, fusion and loop rewrites becomes one
// ein.join_agg: its maps give each operand's loop indices, a body yielding
// `combine(accumulator, f(inputs))` the join f and the aggregation of
// `combine`, and an initial value that is not the combine's identity is
// combined afterwards by one more elementwise join-agg.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::ein::import_detail {

namespace {

/// Whether `value`, computed in the body, reads `accumulator`.
bool readsAccumulator(Value value, BlockArgument accumulator) {
  if (value == accumulator)
    return true;
  Operation *def = value.getDefiningOp();
  if (!def || def->getBlock() != accumulator.getOwner())
    return false;
  return llvm::any_of(def->getOperands(), [&](Value v) {
    return readsAccumulator(v, accumulator);
  });
}

} // namespace

FailureOr<SmallVector<int64_t>>
Importer::indicesOf(linalg::GenericOp op, AffineMap map, unsigned operand) {
  if (!map.isProjectedPermutation(/*allowZeroInResults=*/false)) {
    op->emitOpError()
        << "cannot be imported: operand " << operand << " is indexed by "
        << AffineMapAttr::get(map)
        << ", not by a projected permutation of the loops (windowed "
           "reads are imported as 2-D convolutions and poolings only, in "
           "nhwc or nchw layouts)";
    return failure();
  }
  SmallVector<int64_t> indices;
  for (AffineExpr e : map.getResults())
    indices.push_back(cast<AffineDimExpr>(e).getPosition());
  return indices;
}

LogicalResult Importer::importGeneric(linalg::GenericOp op) {
  if (op.getNumDpsInits() != 1 || !op.hasPureTensorSemantics())
    return op->emitOpError()
           << "cannot be imported: ein-import takes a generic on tensors "
              "with one result";
  auto resultType = cast<RankedTensorType>(op.getResult(0).getType());
  for (Value operand : op->getOperands())
    if (!cast<RankedTensorType>(operand.getType()).hasStaticShape())
      return op->emitOpError()
             << "cannot be imported: ein needs static shapes, got "
             << operand.getType();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  int64_t loops = op.getNumLoops();
  SmallVector<SmallVector<int64_t>> inputIndices;
  for (unsigned i = 0; i < op.getNumDpsInputs(); ++i) {
    FailureOr<SmallVector<int64_t>> indices = indicesOf(op, maps[i], i);
    if (failed(indices))
      return failure();
    inputIndices.push_back(*indices);
  }
  FailureOr<SmallVector<int64_t>> outputIndices =
      indicesOf(op, maps.back(), op.getNumDpsInputs());
  if (failed(outputIndices))
    return failure();
  bool reduces = false;
  for (auto [loop, type] : llvm::enumerate(op.getIteratorTypesArray())) {
    bool inOutput = llvm::is_contained(*outputIndices, int64_t(loop));
    if ((type == utils::IteratorType::reduction) == inOutput)
      return op->emitOpError()
             << "cannot be imported: loop d" << loop << " is "
             << (inOutput ? "a reduction that indexes the result"
                          : "parallel but does not index the result");
    reduces = reduces || !inOutput;
  }
  Block &body = op.getRegion().front();
  BlockArgument accumulator = body.getArguments().back();
  Value yielded = body.getTerminator()->getOperand(0);

  // The join: what the body computes from the inputs. With reductions,
  // the yield must combine the accumulator with it.
  AggKind kind = AggKind::None;
  Value joined = yielded;
  Operation *combine = nullptr;
  if (reduces) {
    combine = yielded.getDefiningOp();
    std::optional<AggKind> k = combine && combine->getNumOperands() == 2
                                   ? aggKindOf(combine)
                                   : std::nullopt;
    if (!k || (combine->getOperand(0) != accumulator &&
               combine->getOperand(1) != accumulator))
      return op->emitOpError()
             << "cannot be imported: its body does not yield the "
                "accumulator combined (add, mul, max or min) with a value "
                "of the inputs, so it does not split into a join and an "
                "aggregation";
    kind = *k;
    joined = combine->getOperand(0) == accumulator ? combine->getOperand(1)
                                                   : combine->getOperand(0);
  }
  // The initial value: an elementwise body that reads it joins it as one
  // more input; a reduction's is dropped if it is the combine's identity
  // (or never written), else combined afterwards.
  Value init = op.getDpsInits()[0];
  bool joinReadsInit = kind == AggKind::None && !accumulator.use_empty();
  if (kind != AggKind::None && readsAccumulator(joined, accumulator))
    return op->emitOpError()
           << "cannot be imported: the value it combines into the "
              "accumulator also reads the accumulator";
  Attribute initValue = fillValue(init);
  bool initIsIdentity =
      kind != AggKind::None && initValue && isIdentity(initValue, combine);
  bool initUnwritten = init.getDefiningOp<tensor::EmptyOp>() != nullptr;

  // An input filled with a constant is that constant in the body (a scale
  // written as a product with a filled tensor), unless a loop is indexed
  // through such inputs alone.
  SmallVector<Attribute> folded;
  for (Value input : op.getDpsInputs())
    folded.push_back(fillValue(input));
  auto loopsUsed = [&](bool fold) {
    for (int64_t loop = 0; loop < loops; ++loop) {
      bool used = llvm::is_contained(*outputIndices, loop);
      for (auto [i, list] : llvm::enumerate(inputIndices))
        used =
            used || ((!fold || !folded[i]) && llvm::is_contained(list, loop));
      if (!used)
        return false;
    }
    return true;
  };
  if (!loopsUsed(/*fold=*/true))
    folded.assign(folded.size(), Attribute());
  SmallVector<Value> inputs;
  SmallVector<SmallVector<int64_t>> indices;
  for (auto [i, input] : llvm::enumerate(op.getDpsInputs()))
    if (!folded[i]) {
      inputs.push_back(input);
      indices.push_back(inputIndices[i]);
    }
  if (joinReadsInit) {
    inputs.push_back(init);
    indices.push_back(*outputIndices);
  }
  // Loops no operand indexes cannot be expressed: ein counts loops from
  // the indices its operands use.
  for (int64_t loop = 0; loop < loops; ++loop) {
    bool used = llvm::is_contained(*outputIndices, loop);
    for (const SmallVector<int64_t> &list : indices)
      used = used || llvm::is_contained(list, loop);
    if (!used)
      return op->emitOpError() << "cannot be imported: no operand is "
                                  "indexed by loop d"
                               << loop;
  }

  builder.setInsertionPoint(op);
  Location loc = op.getLoc();
  SmallVector<Attribute> lists;
  for (const SmallVector<int64_t> &list : indices)
    lists.push_back(builder.getDenseI64ArrayAttr(list));
  auto join = JoinAggOp::create(builder, loc, resultType, inputs,
                                builder.getArrayAttr(lists), *outputIndices,
                                kind, TypeAttr(), SpecAttr(), IntegerAttr());
  if (failed(buildJoin(op, join, joined, joinReadsInit, folded)))
    return failure();
  Value result = join.getResult();
  if (kind != AggKind::None && !initIsIdentity && !initUnwritten)
    result = combineWithInit(op, result, init, combine);
  op.getResult(0).replaceAllUsesWith(result);
  op->erase();
  return success();
}

LogicalResult Importer::buildJoin(linalg::GenericOp op, JoinAggOp join,
                                  Value joined, bool joinReadsInit,
                                  ArrayRef<Attribute> folded) {
  Block &body = op.getRegion().front();
  Block *block = new Block();
  join.getJoin().push_back(block);
  IRMapping map;
  OpBuilder inner = OpBuilder::atBlockEnd(block);
  for (unsigned i = 0; i < op.getNumDpsInputs(); ++i)
    map.map(body.getArgument(i),
            folded[i] ? Value(arith::ConstantOp::create(
                            inner, op.getLoc(), cast<TypedAttr>(folded[i])))
                      : Value(block->addArgument(body.getArgument(i).getType(),
                                                 op.getLoc())));
  if (joinReadsInit)
    map.map(
        body.getArguments().back(),
        block->addArgument(body.getArguments().back().getType(), op.getLoc()));
  // The join region is isolated: a constant from outside the body comes
  // in as a copy; any other outside value is refused.
  auto fromOutside = [&](Value outside, StringRef use) -> FailureOr<Value> {
    Operation *def = outside.getDefiningOp();
    if (!def || !matchPattern(outside, m_Constant()))
      return op->emitOpError()
             << "cannot be imported: its body " << use
             << " a value from outside that is not a constant";
    return inner.clone(*def)->getResult(0);
  };
  for (Operation &bodyOp : body.without_terminator()) {
    if (auto index = dyn_cast<linalg::IndexOp>(bodyOp)) {
      map.map(index.getResult(),
              IndexOp::create(inner, index.getLoc(), inner.getIndexType(),
                              inner.getI64IntegerAttr(index.getDim())));
      continue;
    }
    if (!isPure(&bodyOp) || bodyOp.getNumRegions())
      return bodyOp.emitOpError()
             << "cannot be imported into a join region: only pure scalar "
                "ops are";
    for (Value operand : bodyOp.getOperands()) {
      if (map.contains(operand) || operand.getParentRegion() == &op.getRegion())
        continue;
      FailureOr<Value> copy = fromOutside(operand, "reads");
      if (failed(copy))
        return failure();
      map.map(operand, *copy);
    }
    inner.clone(bodyOp, map);
  }
  Value value = map.lookupOrDefault(joined);
  if (value == joined && joined.getParentBlock() != &body) {
    FailureOr<Value> copy = fromOutside(joined, "yields");
    if (failed(copy))
      return failure();
    value = *copy;
  }
  Type acc = join.getAccType();
  if (value.getType() != acc) {
    if (!isa<FloatType>(value.getType()) || !isa<FloatType>(acc))
      return op->emitOpError()
             << "cannot be imported: its body yields " << value.getType()
             << " but ein accumulates in " << acc;
    value = arith::ExtFOp::create(inner, op.getLoc(), acc, value);
  }
  YieldOp::create(inner, op.getLoc(), value);
  // Ops the yield does not need are dead: drop them, users first.
  SmallVector<Operation *> ops;
  for (Operation &o : block->without_terminator())
    ops.push_back(&o);
  for (Operation *o : llvm::reverse(ops))
    if (o->use_empty())
      o->erase();
  return success();
}

Value Importer::combineWithInit(linalg::GenericOp op, Value result, Value init,
                                Operation *combine) {
  auto type = cast<RankedTensorType>(result.getType());
  SmallVector<int64_t> loops;
  for (int64_t i = 0, e = type.getRank(); i < e; ++i)
    loops.push_back(i);
  Location loc = op.getLoc();
  auto join = JoinAggOp::create(
      builder, loc, type, ValueRange{result, init},
      builder.getArrayAttr({builder.getDenseI64ArrayAttr(loops),
                            builder.getDenseI64ArrayAttr(loops)}),
      loops, AggKind::None, TypeAttr(), SpecAttr(), IntegerAttr());
  Block *block = new Block();
  join.getJoin().push_back(block);
  Type element = type.getElementType();
  Value a = block->addArgument(element, loc);
  Value b = block->addArgument(element, loc);
  OpBuilder inner = OpBuilder::atBlockEnd(block);
  Type acc = join.getAccType();
  if (element != acc) {
    a = arith::ExtFOp::create(inner, loc, acc, a);
    b = arith::ExtFOp::create(inner, loc, acc, b);
  }
  OperationState state(loc, combine->getName());
  state.addOperands({a, b});
  state.addTypes(acc);
  state.addAttributes(combine->getAttrs());
  YieldOp::create(inner, loc, inner.create(state)->getResult(0));
  return join.getResult();
}

} // namespace mlir::ein::import_detail
