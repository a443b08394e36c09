//===- ExportProgram.cpp - Logical ein IR to ein::Program -----------------===//
//
// Fills ein::Program (runtime/include/ein/program.h) from a function on
// tensors: each SpecOpInterface op describes its own entry
// (describeInProgram); this file handles the rest: arguments, results,
// tensor constants and static slices, and the device-level forms (placed
// relations, transfers, aggregations, assembled blocks) whose values are
// slices and concatenations of the logical ones. ein::writeProgram writes
// the text.
//
//===----------------------------------------------------------------------===//

#include "Einsummable/Program/ExportProgram.h"

#include "Einsummable/Dialect/Ein/IR/EinOps.h"
#include "Einsummable/Dialect/Ein/IR/EinProgramForm.h"
#include "ein/partition.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/DenseMap.h"

#include <map>

using namespace mlir;
using namespace mlir::ein;

namespace {

std::vector<int64_t> integers(ArrayRef<int64_t> values) {
  return std::vector<int64_t>(values.begin(), values.end());
}

/// The element type of a value already checked to have a program.json form.
::ein::TensorType typeOf(Value v) {
  auto shaped = cast<ShapedType>(v.getType());
  return {*programDType(shaped.getElementType()), integers(shaped.getShape())};
}

class Exporter {
public:
  FailureOr<::ein::Program> run(func::FuncOp func);

private:
  LogicalResult exportOp(Operation *op, ::ein::Op &entry);
  LogicalResult describeAggregate(AggregateOp op, ::ein::Op &entry);
  LogicalResult describeConstant(arith::ConstantOp op, ::ein::Op &entry);
  std::string newName() { return "v" + std::to_string(nextValue++); }

  /// Device level: whether `op` is handled without an entry of its own (a
  /// placed relation, a piece of an assembly) or with entries it appends to
  /// `ops` itself; sets `done` then.
  LogicalResult exportDeviceLevel(Operation *op, std::vector<::ein::Op> &ops,
                                  bool &done);

  /// A slice of the value named `source`, appended to `ops`; its name.
  std::string slice(const std::string &source, ::ein::TensorType type,
                    ArrayRef<int64_t> offsets, std::vector<::ein::Op> &ops);

  /// A region of a tensor that is the value named `name`.
  struct Piece {
    std::string name;
    SmallVector<int64_t> offsets, sizes;
  };
  /// Pieces tiling a tensor of `shape` (a grid), as nested concats; returns
  /// the name of the whole.
  std::string concatTree(ArrayRef<Piece> pieces, size_t dim,
                         ArrayRef<int64_t> shape, ::ein::DType dtype,
                         std::vector<::ein::Op> &ops);

  llvm::DenseMap<Value, std::string> names;
  int64_t nextValue = 0;
  /// Device level: partitions by their source, the pieces of pending
  /// tensor.insert_slice chains, and placed relations built from blocks.
  llvm::DenseMap<Value, Value> partitionSource;
  llvm::DenseMap<Value, SmallVector<Piece>> pending;
  llvm::DenseMap<Value, FromBlocksOp> fromBlocks;
};

std::string Exporter::slice(const std::string &source, ::ein::TensorType type,
                            ArrayRef<int64_t> offsets,
                            std::vector<::ein::Op> &ops) {
  ::ein::Op entry;
  entry.kind = ::ein::OpKind::Slice;
  entry.result = newName();
  entry.sizes = type.shape;
  entry.type = std::move(type);
  entry.inputs = {source};
  entry.offsets = integers(offsets);
  ops.push_back(std::move(entry));
  return ops.back().result;
}

std::string Exporter::concatTree(ArrayRef<Piece> pieces, size_t dim,
                                 ArrayRef<int64_t> shape, ::ein::DType dtype,
                                 std::vector<::ein::Op> &ops) {
  if (pieces.size() == 1)
    return pieces[0].name;
  // Slabs along `dim`: the pieces starting at one offset there.
  std::map<int64_t, SmallVector<Piece>> slabs;
  for (const Piece &p : pieces)
    slabs[p.offsets[dim]].push_back(p);
  if (slabs.size() == 1)
    return concatTree(pieces, dim + 1, shape, dtype, ops);
  std::vector<std::string> inputs;
  for (auto &[offset, slab] : slabs) {
    SmallVector<int64_t> slabShape(shape.begin(), shape.end());
    slabShape[dim] = slab.front().sizes[dim];
    inputs.push_back(concatTree(slab, dim + 1, slabShape, dtype, ops));
  }
  ::ein::Op entry;
  entry.kind = ::ein::OpKind::Concat;
  entry.result = newName();
  entry.type = {dtype, integers(shape)};
  entry.inputs = std::move(inputs);
  entry.dim = int64_t(dim);
  ops.push_back(std::move(entry));
  return ops.back().result;
}

LogicalResult Exporter::exportDeviceLevel(Operation *op,
                                          std::vector<::ein::Op> &ops,
                                          bool &done) {
  done = true;
  // Planned (ein-plan's output): a value cut into a relation, moved to
  // another cut, or put back together is the same logical value.
  auto alias = [&](Value from, Value to) -> LogicalResult {
    auto it = names.find(from);
    if (it == names.end())
      return op->emitOpError() << "reads a value with no program.json form";
    // A copy first: inserting `to` may grow the map and move `it->second`.
    std::string name = it->second;
    names[to] = std::move(name);
    return success();
  };
  if (auto partition = dyn_cast<PartitionOp>(op)) {
    auto rel = dyn_cast<RelationType>(partition.getType());
    if (!rel)
      return done = false, success();
    if (rel.getDevices().empty())
      return alias(partition.getSource(), partition.getResult());
    partitionSource[partition.getResult()] = partition.getSource();
    return success();
  }
  if (auto repartition = dyn_cast<RepartitionOp>(op))
    return alias(repartition.getSource(), repartition.getResult());
  if (auto extract = dyn_cast<ExtractBlockOp>(op)) {
    Value source = partitionSource.lookup(extract.getSource());
    if (!source)
      return extract.emitOpError()
             << "has no program.json form unless it reads a placed "
                "ein.partition";
    auto rel = cast<RelationType>(extract.getSource().getType());
    SmallVector<int64_t> offsets;
    for (auto [d, b] : llvm::enumerate(extract.getBlock()))
      offsets.push_back(
          ::ein::blockRange(rel.getShape()[d], rel.getParts()[d], b).offset);
    names[extract.getResult()] =
        slice(names.lookup(source), typeOf(extract.getResult()), offsets, ops);
    return success();
  }
  if (auto transfer = dyn_cast<TransferOp>(op)) {
    // Where a copy lands does not change its value: each region is a slice
    // of its source.
    for (unsigned i = 0, e = transfer.getNumCopies(); i < e; ++i) {
      Value source = transfer.getSources()[i],
            landed = transfer.getResults()[i];
      if (!names.count(source))
        return transfer.emitOpError()
               << "moves a value with no program.json form";
      std::string from = names.lookup(source);
      names[landed] =
          slice(from, typeOf(landed), transfer.getRegionOffsets(i), ops);
      // The region's sizes, not the landed block's shape, as written.
      ops.back().sizes = integers(transfer.getRegionSizes(i));
    }
    return success();
  }
  if (isa<tensor::EmptyOp>(op)) {
    pending[op->getResult(0)] = {};
    return success();
  }
  if (auto insert = dyn_cast<tensor::InsertSliceOp>(op)) {
    auto it = pending.find(insert.getDest());
    if (it == pending.end() || !insert.hasUnitStride() ||
        !insert.getOffsets().empty() || !insert.getSizes().empty())
      return insert.emitOpError()
             << "has no program.json form unless it fills a tensor.empty "
                "with static, unit-stride slices";
    if (!names.count(insert.getSource()))
      return insert.emitOpError() << "inserts a value with no program.json "
                                     "form";
    SmallVector<Piece> pieces = it->second;
    pieces.push_back({names.lookup(insert.getSource()),
                      SmallVector<int64_t>(insert.getStaticOffsets()),
                      SmallVector<int64_t>(insert.getStaticSizes())});
    Value result = insert.getResult();
    // The chain goes on only where its result is the next slice's
    // destination (as a source it is a finished piece of another).
    auto next =
        result.hasOneUse()
            ? dyn_cast<tensor::InsertSliceOp>(*result.getUsers().begin())
            : tensor::InsertSliceOp();
    bool continued = next && next.getDest() == result;
    if (continued) {
      pending[result] = std::move(pieces);
      return success();
    }
    auto type = cast<ShapedType>(result.getType());
    names[result] =
        concatTree(pieces, 0, type.getShape(), typeOf(result).dtype, ops);
    return success();
  }
  if (auto blocks = dyn_cast<FromBlocksOp>(op)) {
    fromBlocks[blocks.getResult()] = blocks;
    return success();
  }
  if (auto assemble = dyn_cast<AssembleOp>(op)) {
    FromBlocksOp blocks = fromBlocks.lookup(assemble.getSource());
    if (!blocks)
      return alias(assemble.getSource(), assemble.getResult());
    auto rel = cast<RelationType>(blocks.getType());
    SmallVector<Piece> pieces;
    int64_t copies = rel.getReplicas();
    for (auto [i, block] : llvm::enumerate(blocks.getBlocks())) {
      if (int64_t(i) % copies != 0)
        continue; // one copy of each block is the value
      std::vector<int64_t> index = ::ein::delinearize(
          int64_t(i) / copies,
          std::vector<int64_t>(rel.getParts().begin(), rel.getParts().end()));
      if (!names.count(block))
        return assemble.emitOpError()
               << "assembles a block with no program.json form";
      Piece piece{names.lookup(block), {}, {}};
      for (size_t d = 0; d < index.size(); ++d) {
        ::ein::Range r =
            ::ein::blockRange(rel.getShape()[d], rel.getParts()[d], index[d]);
        piece.offsets.push_back(r.offset);
        piece.sizes.push_back(r.size);
      }
      pieces.push_back(std::move(piece));
    }
    names[assemble.getResult()] = concatTree(
        pieces, 0, rel.getShape(), typeOf(assemble.getResult()).dtype, ops);
    return success();
  }
  done = false;
  return success();
}

LogicalResult Exporter::describeAggregate(AggregateOp aggregate,
                                          ::ein::Op &entry) {
  // The partials combined element by element: a join with no aggregation
  // whose region folds them with the kind's op.
  ::ein::ScalarKind combine;
  switch (aggregate.getKind()) {
  case AggKind::Add:
    combine = ::ein::ScalarKind::AddF;
    break;
  case AggKind::Max:
    combine = ::ein::ScalarKind::MaximumF;
    break;
  case AggKind::Min:
    combine = ::ein::ScalarKind::MinimumF;
    break;
  case AggKind::Mul:
    combine = ::ein::ScalarKind::MulF;
    break;
  default:
    return aggregate.emitOpError() << "has no program.json form for its kind";
  }
  ::ein::DType dtype = typeOf(aggregate.getPartials()[0]).dtype;
  int64_t rank = cast<ShapedType>(aggregate.getResult().getType()).getRank();
  std::vector<int64_t> loops;
  for (int64_t d = 0; d < rank; ++d)
    loops.push_back(d);
  int n = aggregate.getPartials().size();
  entry.kind = ::ein::OpKind::JoinAgg;
  entry.agg = ::ein::Agg::None;
  entry.acc = dtype;
  entry.outputIndices = loops;
  entry.inputIndices.assign(n, loops);
  entry.join.args.assign(n, dtype);
  int last = 0;
  for (int i = 1; i < n; ++i) {
    ::ein::ScalarOp op;
    op.kind = combine;
    op.name = ::ein::scalarKindName(combine);
    op.operands = {last, i};
    op.type = dtype;
    entry.join.ops.push_back(std::move(op));
    last = n + i - 1;
  }
  entry.join.yield = last;
  return success();
}

LogicalResult Exporter::describeConstant(arith::ConstantOp constant,
                                         ::ein::Op &entry) {
  auto elements = dyn_cast<DenseElementsAttr>(constant.getValue());
  if (!elements)
    return constant.emitOpError()
           << "holds a constant with no program.json form";
  entry.kind = ::ein::OpKind::Constant;
  entry.values = programConstantValues(elements);
  return success();
}

LogicalResult Exporter::exportOp(Operation *op, ::ein::Op &entry) {
  // Aggregations also return a token; only the data counts.
  if (op->getNumResults() != 1 && !isa<AggregateOp>(op))
    return op->emitOpError() << "has no program.json form";
  FailureOr<::ein::TensorType> type =
      programTensorType(op, op->getResult(0).getType());
  if (failed(type))
    return failure();
  entry.type = std::move(*type);
  for (Value operand : op->getOperands()) {
    auto it = names.find(operand);
    if (it == names.end())
      return op->emitOpError() << "uses a value defined outside the "
                                  "exported function's body";
    entry.inputs.push_back(it->second);
  }
  entry.result = newName();

  LogicalResult described = failure();
  if (auto spec = dyn_cast<SpecOpInterface>(op)) {
    described = spec.describeInProgram(entry);
  } else if (auto aggregate = dyn_cast<AggregateOp>(op)) {
    entry.inputs.resize(aggregate.getPartials().size());
    described = describeAggregate(aggregate, entry);
  } else if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
    described = describeConstant(constant, entry);
  } else if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op)) {
    if (!slice.hasUnitStride() || !slice.getOffsets().empty() ||
        !slice.getSizes().empty())
      return slice.emitOpError() << "has no program.json form unless static "
                                    "and unit-stride";
    entry.kind = ::ein::OpKind::Slice;
    entry.offsets = integers(slice.getStaticOffsets());
    entry.sizes = integers(slice.getStaticSizes());
    described = success();
  } else {
    return op->emitOpError()
           << "has no program.json form; the program may hold ein.join_agg, "
              "composites, layout ops and tensor constants";
  }
  if (failed(described))
    return failure();
  names[op->getResult(0)] = entry.result;
  return success();
}

FailureOr<::ein::Program> Exporter::run(func::FuncOp func) {
  ::ein::Program program;
  program.function = func.getSymName().str();
  for (auto [i, arg] : llvm::enumerate(func.getArguments())) {
    if (isa<RelationType>(arg.getType()))
      return func.emitOpError()
             << "has an argument of type " << arg.getType()
             << "; program.json's arguments are tensors (a planned program "
                "keeps its tensor signature and cuts its arguments with "
                "ein.partition)";
    FailureOr<::ein::TensorType> type = programTensorType(func, arg.getType());
    if (failed(type))
      return failure();
    ::ein::Argument entry;
    entry.name = "arg" + std::to_string(i);
    entry.type = std::move(*type);
    entry.weight = bool(func.getArgAttr(i, EinDialect::getWeightAttrName()));
    names[arg] = entry.name;
    program.arguments.push_back(std::move(entry));
  }
  for (Operation &op : func.getBody().front()) {
    // A user's `shard` annotations (pins for the planner) are the value
    // they annotate.
    if (isa<shard::ShardingOp>(op))
      continue;
    if (auto annotation = dyn_cast<shard::ShardOp>(op)) {
      auto it = names.find(annotation.getSrc());
      if (it == names.end())
        return annotation.emitOpError()
               << "annotates a value with no program.json form";
      // A copy first: inserting the result may grow the map.
      std::string name = it->second;
      names[annotation.getResult()] = std::move(name);
      continue;
    }
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
        auto it = names.find(v);
        if (it == names.end())
          return ret.emitOpError() << "result " << i
                                   << " has no program.json form (a "
                                      "tensor.empty nothing filled?)";
        program.results.push_back(it->second);
      }
      continue;
    }
    bool handled = false;
    if (failed(exportDeviceLevel(&op, program.ops, handled)))
      return failure();
    if (handled)
      continue;
    ::ein::Op entry;
    if (failed(exportOp(&op, entry)))
      return failure();
    program.ops.push_back(std::move(entry));
  }
  if (program.results.empty())
    return func.emitOpError() << "returns nothing; a program needs a result";
  return program;
}

} // namespace

FailureOr<::ein::Program> mlir::ein::exportProgram(func::FuncOp func) {
  if (func.isExternal())
    return func.emitOpError() << "has no body to export";
  if (!func.getBody().hasOneBlock())
    return func.emitOpError() << "has control flow; program.json holds one "
                                 "block of tensor operations";
  return Exporter().run(func);
}

FailureOr<func::FuncOp> mlir::ein::selectProgramFunction(ModuleOp module,
                                                         StringRef name) {
  SmallVector<func::FuncOp> candidates;
  for (auto func : module.getOps<func::FuncOp>())
    if (name.empty() ? !func.isExternal() : func.getSymName() == name)
      candidates.push_back(func);
  if (candidates.size() == 1)
    return candidates.front();
  if (!name.empty())
    return module.emitError() << "no function named '" << name << "' to export";
  return module.emitError() << "the module has " << candidates.size()
                            << " functions with a body; name the one to "
                               "export (function=NAME)";
}

std::vector<double>
mlir::ein::programConstantValues(DenseElementsAttr elements) {
  std::vector<double> values;
  if (elements.isSplat())
    values.push_back(*programScalar(elements.getSplatValue<Attribute>()));
  else
    for (Attribute a : elements.getValues<Attribute>())
      values.push_back(*programScalar(a));
  return values;
}

FailureOr<::ein::TensorType> mlir::ein::programTensorType(Operation *where,
                                                          Type type) {
  // A planned value (a relation) stands for its logical tensor.
  if (auto rel = dyn_cast<RelationType>(type))
    type = RankedTensorType::get(rel.getShape(), rel.getElementType());
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return where->emitOpError()
           << "has type " << type
           << "; program.json describes the logical program, on ranked "
              "tensors or planned relations";
  if (!tensor.hasStaticShape() ||
      llvm::any_of(tensor.getShape(), [](int64_t d) { return d < 1; }))
    return where->emitOpError()
           << "has type " << type
           << "; program.json holds static shapes with every dimension at "
              "least 1";
  std::optional<::ein::DType> dtype = programDType(tensor.getElementType());
  if (!dtype)
    return where->emitOpError() << "element type " << tensor.getElementType()
                                << " has no program.json form";
  return ::ein::TensorType{*dtype, integers(tensor.getShape())};
}
