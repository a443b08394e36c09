//===- Lookups.cpp - ein-import: gathers and arg-reductions ---------------===//
//
// Generics imported before elementwise fusion could merge them into their
// consumers: an embedding lookup as ein.gather, a running maximum and its
// index as ein.arg_reduce (and a max join-agg), a generic whose results are
// computed apart split into one generic per result.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/IRMapping.h"

#include "llvm/ADT/SetVector.h"

namespace mlir::ein::import_detail {

bool Importer::importGather(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() != 0 || !op.hasPureTensorSemantics())
    return false;
  Value indices = op.getDpsInputs()[0];
  auto indexType = dyn_cast<RankedTensorType>(indices.getType());
  auto resultType = dyn_cast<RankedTensorType>(op.getResult(0).getType());
  if (!indexType || !resultType || !indexType.hasStaticShape() ||
      !resultType.hasStaticShape() ||
      !(indexType.getElementType().isSignlessInteger(64) ||
        indexType.getElementType().isSignlessInteger(32)))
    return false;
  int64_t n = resultType.getRank(), r = indexType.getRank();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  // The indices read along the result's leading dimensions.
  if (r > n || !maps[1].isIdentity() ||
      maps[0] != AffineMap::getMultiDimIdentityMap(n, op.getContext())
                     .getSubMap(llvm::to_vector(llvm::seq<unsigned>(0, r))))
    return false;
  Block &body = op.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto extract = yield.getValues().front().getDefiningOp<tensor::ExtractOp>();
  if (!extract || extract->getBlock() != &body)
    return false;
  Value table = extract.getTensor();
  auto tableType = dyn_cast<RankedTensorType>(table.getType());
  if (!tableType || !tableType.hasStaticShape() ||
      table.getParentRegion() == &op.getRegion() ||
      tableType.getRank() != 1 + n - r ||
      tableType.getShape().drop_front() !=
          resultType.getShape().drop_front(r) ||
      tableType.getElementType() != resultType.getElementType())
    return false;
  auto cast = extract.getIndices()[0].getDefiningOp<arith::IndexCastOp>();
  if (!cast || cast.getIn() != body.getArgument(0))
    return false;
  for (auto [k, index] : llvm::enumerate(extract.getIndices().drop_front())) {
    auto loop = index.getDefiningOp<linalg::IndexOp>();
    if (!loop || int64_t(loop.getDim()) != r + int64_t(k))
      return false;
  }
  // Nothing else in the body.
  for (Operation &inner : body.without_terminator())
    if (!isa<arith::IndexCastOp, linalg::IndexOp, tensor::ExtractOp>(inner))
      return false;
  builder.setInsertionPoint(op);
  auto gather =
      GatherOp::create(builder, op.getLoc(), resultType, table, indices,
                       builder.getI64IntegerAttr(0), SpecAttr(), IntegerAttr());
  op.getResult(0).replaceAllUsesWith(gather.getResult());
  op->erase();
  return true;
}

LogicalResult Importer::importArgReduce(linalg::GenericOp op) {
  if (op.getNumDpsInits() < 2 || splitResults(op))
    return success();
  if (op.getNumDpsInits() != 2)
    return op->emitOpError()
           << "cannot be imported: its " << op.getNumDpsInits()
           << " results depend on each other's accumulators; ein imports "
              "results computed apart (split into one generic each) and "
              "argmax/argmin (a running maximum and its index)";
  auto refuse = [&](const Twine &why) {
    return op->emitOpError()
           << "cannot be imported: a generic with two results is imported "
              "as an argmax or argmin (a running maximum and its index), "
              "but "
           << why;
  };
  if (op.getNumDpsInputs() != 1 || !op.hasPureTensorSemantics() ||
      op.getNumReductionLoops() != 1)
    return refuse("it does not read one tensor over one reduction loop");
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  int64_t rank = op.getNumLoops();
  unsigned dim = 0;
  for (auto [l, it] : llvm::enumerate(op.getIteratorTypesArray()))
    if (it == utils::IteratorType::reduction)
      dim = l;
  SmallVector<AffineExpr> kept;
  for (int64_t d = 0; d < rank; ++d)
    if (d != dim)
      kept.push_back(getAffineDimExpr(d, op.getContext()));
  AffineMap lead = AffineMap::get(rank, 0, kept, op.getContext());
  if (!maps[0].isIdentity() || maps[1] != lead || maps[2] != lead)
    return refuse("its input is not read whole and its results along "
                  "the other loops");
  Value x = op.getDpsInputs()[0];
  auto xType = cast<RankedTensorType>(x.getType());
  auto valueType = cast<RankedTensorType>(op.getResult(0).getType());
  auto indexType = cast<RankedTensorType>(op.getResult(1).getType());
  if (!xType.hasStaticShape() || !isa<FloatType>(xType.getElementType()) ||
      valueType.getElementType() != xType.getElementType() ||
      !(indexType.getElementType().isSignlessInteger(64) ||
        indexType.getElementType().isSignlessInteger(32)))
    return refuse("it does not reduce a static float tensor to its own "
                  "type and i64 or i32 indices");
  Block &body = op.getRegion().front();
  Value in = body.getArgument(0), running = body.getArgument(1),
        index = body.getArgument(2);
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  // The index: select(cmpf ogt|olt (x, m), index_cast(linalg.index dim), i).
  auto select = yield.getValues()[1].getDefiningOp<arith::SelectOp>();
  auto cmp = select ? select.getCondition().getDefiningOp<arith::CmpFOp>()
                    : arith::CmpFOp();
  auto cast = select ? select.getTrueValue().getDefiningOp<arith::IndexCastOp>()
                     : arith::IndexCastOp();
  auto loop =
      cast ? cast.getIn().getDefiningOp<linalg::IndexOp>() : linalg::IndexOp();
  bool max = cmp && cmp.getPredicate() == arith::CmpFPredicate::OGT;
  bool min = cmp && cmp.getPredicate() == arith::CmpFPredicate::OLT;
  if (!select || select.getFalseValue() != index || !(max || min) ||
      cmp.getLhs() != in || cmp.getRhs() != running || !loop ||
      loop.getDim() != dim)
    return refuse("its index is not `select(cmpf ogt (or olt) x, max), "
                  "index d" +
                  Twine(dim) + ", index)`");
  // The value: the running maximum, by maximumf or by the same select.
  Operation *value = yield.getValues()[0].getDefiningOp();
  bool valueOk = false;
  if (auto s = dyn_cast_or_null<arith::SelectOp>(value))
    valueOk = s.getCondition() == cmp.getResult() && s.getTrueValue() == in &&
              s.getFalseValue() == running;
  else if (value && isa<arith::MaximumFOp, arith::MaxNumFOp>(value))
    valueOk = max;
  else if (value && isa<arith::MinimumFOp, arith::MinNumFOp>(value))
    valueOk = min;
  if (valueOk && !isa<arith::SelectOp>(value))
    valueOk = llvm::is_contained(value->getOperands(), in) &&
              llvm::is_contained(value->getOperands(), running);
  if (!valueOk)
    return refuse(Twine("its value is not the running ") +
                  (max ? "maximum" : "minimum"));
  // From -inf (+inf) and index 0.
  auto floatStart = dyn_cast_or_null<FloatAttr>(fillValue(op.getDpsInits()[0]));
  auto indexStart =
      dyn_cast_or_null<IntegerAttr>(fillValue(op.getDpsInits()[1]));
  if (!floatStart || !indexStart || !indexStart.getValue().isZero() ||
      !floatStart.getValue().isInfinity() ||
      floatStart.getValue().isNegative() != max)
    return refuse(Twine("it does not start from ") + (max ? "-inf" : "+inf") +
                  " and index 0");
  builder.setInsertionPoint(op);
  Location loc = op.getLoc();
  AggKind kind = max ? AggKind::Max : AggKind::Min;
  if (!op.getResult(1).use_empty())
    op.getResult(1).replaceAllUsesWith(
        ArgReduceOp::create(builder, loc, indexType, kind, x, uint64_t(dim),
                            SpecAttr(), IntegerAttr()));
  if (!op.getResult(0).use_empty()) {
    SmallVector<int64_t> all, out;
    for (int64_t d = 0; d < rank; ++d) {
      all.push_back(d);
      if (d != dim)
        out.push_back(d);
    }
    auto join = JoinAggOp::create(
        builder, loc, valueType, ValueRange{x},
        builder.getArrayAttr({builder.getDenseI64ArrayAttr(all)}), out, kind,
        TypeAttr(), SpecAttr(), IntegerAttr());
    Block *block = new Block();
    join.getJoin().push_back(block);
    OpBuilder inner = OpBuilder::atBlockEnd(block);
    Value v = block->addArgument(xType.getElementType(), loc);
    if (v.getType() != join.getAccType())
      v = arith::ExtFOp::create(inner, loc, join.getAccType(), v);
    YieldOp::create(inner, loc, v);
    op.getResult(0).replaceAllUsesWith(join.getResult());
  }
  op->erase();
  return success();
}

bool Importer::splitResults(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  unsigned inputs = op.getNumDpsInputs();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  SmallVector<SetVector<Operation *>> slices;
  for (auto [r, yielded] : llvm::enumerate(yield.getValues())) {
    SetVector<Operation *> slice;
    SmallVector<Value> work = {yielded};
    while (!work.empty()) {
      Value v = work.pop_back_val();
      if (auto arg = dyn_cast<BlockArgument>(v)) {
        if (arg.getOwner() == &body && arg.getArgNumber() >= inputs &&
            arg.getArgNumber() != inputs + r)
          return false; // reads another result's accumulator
        continue;
      }
      Operation *def = v.getDefiningOp();
      if (!def || def->getBlock() != &body || !slice.insert(def))
        continue;
      llvm::append_range(work, def->getOperands());
    }
    slices.push_back(std::move(slice));
  }
  builder.setInsertionPoint(op);
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<AffineMap> inputMaps(maps.begin(), maps.begin() + inputs);
  for (auto [r, result] : llvm::enumerate(op.getResults())) {
    SmallVector<AffineMap> own = inputMaps;
    own.push_back(maps[inputs + r]);
    auto split = linalg::GenericOp::create(
        builder, op.getLoc(), TypeRange{result.getType()}, op.getDpsInputs(),
        ValueRange{op.getDpsInits()[r]}, own, op.getIteratorTypesArray(),
        [&](OpBuilder &nb, Location l, ValueRange args) {
          IRMapping map;
          for (unsigned i = 0; i < inputs; ++i)
            map.map(body.getArgument(i), args[i]);
          map.map(body.getArgument(inputs + r), args[inputs]);
          // In body order, so operands come before their users.
          for (Operation &inner : body.without_terminator())
            if (slices[r].contains(&inner))
              nb.clone(inner, map);
          linalg::YieldOp::create(nb, l,
                                  map.lookupOrDefault(yield.getValues()[r]));
        });
    result.replaceAllUsesWith(split.getResult(0));
  }
  op->erase();
  return true;
}

} // namespace mlir::ein::import_detail
