//===- ExportProgram.cpp - Logical ein IR to program.json ---------------===//

#include "Einsummable/Program/ExportProgram.h"

#include "Einsummable/Dialect/Ein/IR/EinOps.h"
#include "ein/partition.h"
#include "ein/program.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <map>

using namespace mlir;
using namespace mlir::ein;
namespace json = llvm::json;

namespace {

/// The program.json name of an element type, or failure.
FailureOr<StringRef> dtypeName(Type type) {
  if (type.isF64())
    return StringRef("f64");
  if (type.isF32())
    return StringRef("f32");
  if (type.isF16())
    return StringRef("f16");
  if (type.isBF16())
    return StringRef("bf16");
  if (type.isIndex())
    return StringRef("index");
  if (type.isInteger(64))
    return StringRef("i64");
  if (type.isInteger(32))
    return StringRef("i32");
  if (type.isInteger(1))
    return StringRef("i1");
  return failure();
}

/// A number, with the non-finite ones JSON cannot hold spelled as strings.
json::Value number(double value) {
  if (std::isnan(value))
    return "nan";
  if (std::isinf(value))
    return value > 0 ? "inf" : "-inf";
  return value;
}

json::Array integers(ArrayRef<int64_t> values) {
  json::Array array;
  for (int64_t v : values)
    array.push_back(v);
  return array;
}

class Exporter {
public:
  FailureOr<json::Value> run(func::FuncOp func);

private:
  FailureOr<json::Object> tensorType(Operation *where, Type type);
  FailureOr<json::Object> joinRegion(JoinAggOp op, ArrayRef<int64_t> offsets);
  FailureOr<json::Object> exportOp(Operation *op);
  FailureOr<json::Array> inputNames(Operation *op);

  /// Device level: whether `op` is handled without an entry of its own (a
  /// placed relation, a piece of an assembly) or with entries it writes to
  /// `ops` itself; sets `done` then.
  LogicalResult exportDeviceLevel(Operation *op, json::Array &ops, bool &done);

  /// A region of a tensor that is the value named `name`.
  struct Piece {
    std::string name;
    SmallVector<int64_t> offsets, sizes;
  };
  /// Pieces tiling a tensor of `shape` (a grid), as nested concats; returns
  /// the name of the whole.
  std::string concatTree(ArrayRef<Piece> pieces, size_t dim,
                         ArrayRef<int64_t> shape, StringRef dtype,
                         json::Array &ops);

  llvm::DenseMap<Value, std::string> names;
  int64_t nextValue = 0;
  /// Device level: partitions by their source, the pieces of pending
  /// tensor.insert_slice chains, and placed relations built from blocks.
  llvm::DenseMap<Value, Value> partitionSource;
  llvm::DenseMap<Value, SmallVector<Piece>> pending;
  llvm::DenseMap<Value, FromBlocksOp> fromBlocks;
};

std::string Exporter::concatTree(ArrayRef<Piece> pieces, size_t dim,
                                 ArrayRef<int64_t> shape, StringRef dtype,
                                 json::Array &ops) {
  if (pieces.size() == 1)
    return pieces[0].name;
  // Slabs along `dim`: the pieces starting at one offset there.
  std::map<int64_t, SmallVector<Piece>> slabs;
  for (const Piece &p : pieces)
    slabs[p.offsets[dim]].push_back(p);
  if (slabs.size() == 1)
    return concatTree(pieces, dim + 1, shape, dtype, ops);
  json::Array inputs;
  for (auto &[offset, slab] : slabs) {
    SmallVector<int64_t> slabShape(shape.begin(), shape.end());
    slabShape[dim] = slab.front().sizes[dim];
    inputs.push_back(concatTree(slab, dim + 1, slabShape, dtype, ops));
  }
  std::string result = "v" + std::to_string(nextValue++);
  ops.push_back(json::Object{
      {"kind", "concat"},
      {"result", result},
      {"type", json::Object{{"shape", integers(shape)}, {"dtype", dtype}}},
      {"inputs", std::move(inputs)},
      {"dim", int64_t(dim)}});
  return result;
}

LogicalResult Exporter::exportDeviceLevel(Operation *op, json::Array &ops,
                                          bool &done) {
  done = true;
  auto dtypeOf = [](Value v) {
    return *dtypeName(cast<ShapedType>(v.getType()).getElementType());
  };
  if (auto partition = dyn_cast<PartitionOp>(op)) {
    if (!isa<RelationType>(partition.getType()) ||
        cast<RelationType>(partition.getType()).getDevices().empty())
      return done = false, success();
    partitionSource[partition.getResult()] = partition.getSource();
    return success();
  }
  if (auto extract = dyn_cast<ExtractBlockOp>(op)) {
    Value source = partitionSource.lookup(extract.getSource());
    if (!source)
      return extract.emitOpError()
             << "has no program.json form unless it reads a placed "
                "ein.partition";
    auto rel = cast<RelationType>(extract.getSource().getType());
    auto type = cast<ShapedType>(extract.getResult().getType());
    SmallVector<int64_t> offsets;
    for (auto [d, b] : llvm::enumerate(extract.getBlock()))
      offsets.push_back(
          ::ein::blockRange(rel.getShape()[d], rel.getParts()[d], b).offset);
    std::string result = "v" + std::to_string(nextValue++);
    ops.push_back(json::Object{
        {"kind", "slice"},
        {"result", result},
        {"type", json::Object{{"shape", integers(type.getShape())},
                              {"dtype", dtypeOf(extract.getResult())}}},
        {"inputs", json::Array{names.lookup(source)}},
        {"offsets", integers(offsets)},
        {"sizes", integers(type.getShape())}});
    names[extract.getResult()] = result;
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
      std::string result = "v" + std::to_string(nextValue++);
      ops.push_back(json::Object{
          {"kind", "slice"},
          {"result", result},
          {"type",
           json::Object{
               {"shape",
                integers(cast<ShapedType>(landed.getType()).getShape())},
               {"dtype", dtypeOf(landed)}}},
          {"inputs", json::Array{names.lookup(source)}},
          {"offsets", integers(transfer.getRegionOffsets(i))},
          {"sizes", integers(transfer.getRegionSizes(i))}});
      names[landed] = result;
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
        concatTree(pieces, 0, type.getShape(), dtypeOf(result), ops);
    return success();
  }
  if (auto blocks = dyn_cast<FromBlocksOp>(op)) {
    fromBlocks[blocks.getResult()] = blocks;
    return success();
  }
  if (auto assemble = dyn_cast<AssembleOp>(op)) {
    FromBlocksOp blocks = fromBlocks.lookup(assemble.getSource());
    if (!blocks)
      return done = false, success();
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
        pieces, 0, rel.getShape(), dtypeOf(assemble.getResult()), ops);
    return success();
  }
  done = false;
  return success();
}

FailureOr<json::Object> Exporter::tensorType(Operation *where, Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return where->emitOpError()
           << "has type " << type
           << "; program.json describes the logical program, on ranked "
              "tensors (export before planning)";
  if (!tensor.hasStaticShape() ||
      llvm::any_of(tensor.getShape(), [](int64_t d) { return d < 1; }))
    return where->emitOpError()
           << "has type " << type
           << "; program.json holds static shapes with every dimension at "
              "least 1";
  FailureOr<StringRef> dtype = dtypeName(tensor.getElementType());
  if (failed(dtype))
    return where->emitOpError() << "element type " << tensor.getElementType()
                                << " has no program.json form";
  return json::Object{{"shape", integers(tensor.getShape())},
                      {"dtype", *dtype}};
}

FailureOr<json::Array> Exporter::inputNames(Operation *op) {
  json::Array inputs;
  for (Value operand : op->getOperands()) {
    auto it = names.find(operand);
    if (it == names.end())
      return op->emitOpError() << "uses a value defined outside the "
                                  "exported function's body";
    inputs.push_back(it->second);
  }
  return inputs;
}

FailureOr<json::Object> Exporter::joinRegion(JoinAggOp op,
                                             ArrayRef<int64_t> offsets) {
  Block &body = op.getJoin().front();
  llvm::DenseMap<Value, int64_t> numbers;
  int64_t next = 0;
  json::Array args, ops;
  for (BlockArgument arg : body.getArguments()) {
    numbers[arg] = next++;
    args.push_back(*dtypeName(arg.getType()));
  }
  for (Operation &scalar : body.without_terminator()) {
    StringRef name = scalar.getName().getStringRef();
    if (!::ein::isScalarOpName(name.str()) || scalar.getNumResults() != 1 ||
        scalar.getNumRegions() != 0)
      return scalar.emitOpError()
             << "has no program.json form; join regions may hold the arith "
                "and math operations listed in docs/program-format.md";
    Type type = scalar.getResult(0).getType();
    FailureOr<StringRef> dtype = dtypeName(type);
    if (failed(dtype))
      return scalar.emitOpError()
             << "result type " << type << " has no program.json form";
    json::Array operands;
    for (Value v : scalar.getOperands())
      operands.push_back(numbers.lookup(v));
    json::Object entry{
        {"op", name}, {"operands", std::move(operands)}, {"type", *dtype}};
    if (auto constant = dyn_cast<arith::ConstantOp>(scalar)) {
      Attribute value = constant.getValue();
      if (auto f = dyn_cast<FloatAttr>(value))
        entry["value"] = number(f.getValueAsDouble());
      else if (auto i = dyn_cast<IntegerAttr>(value))
        entry["value"] = type.isInteger(1)
                             ? int64_t(i.getValue().getBoolValue())
                             : i.getValue().getSExtValue();
      else
        return scalar.emitOpError() << "holds a constant with no program.json "
                                       "form";
    }
    if (auto cmp = dyn_cast<arith::CmpFOp>(scalar))
      entry["predicate"] = arith::stringifyCmpFPredicate(cmp.getPredicate());
    if (auto cmp = dyn_cast<arith::CmpIOp>(scalar))
      entry["predicate"] = arith::stringifyCmpIPredicate(cmp.getPredicate());
    int64_t offset = 0;
    if (auto index = dyn_cast<IndexOp>(scalar)) {
      entry["dim"] = index.getDimAttr().getInt();
      if (!offsets.empty())
        offset = offsets[index.getDimAttr().getInt()];
    }
    numbers[scalar.getResult(0)] = next++;
    ops.push_back(std::move(entry));
    if (offset != 0) {
      // A block kernel's loops start at its offsets: ein.index reads
      // whole-tensor coordinates, so add them.
      int64_t local = numbers[scalar.getResult(0)];
      ops.push_back(json::Object{{"op", "arith.constant"},
                                 {"operands", json::Array()},
                                 {"type", *dtype},
                                 {"value", offset}});
      ops.push_back(json::Object{{"op", "arith.addi"},
                                 {"operands", json::Array{local, next}},
                                 {"type", *dtype}});
      numbers[scalar.getResult(0)] = next + 1;
      next += 2;
    }
  }
  auto yield = cast<YieldOp>(body.getTerminator());
  return json::Object{{"args", std::move(args)},
                      {"ops", std::move(ops)},
                      {"yield", numbers.lookup(yield.getValues().front())}};
}

FailureOr<json::Object> Exporter::exportOp(Operation *op) {
  // Aggregations also return a token; only the data counts.
  if (op->getNumResults() != 1 && !isa<AggregateOp>(op))
    return op->emitOpError() << "has no program.json form";
  FailureOr<json::Object> type = tensorType(op, op->getResult(0).getType());
  if (failed(type))
    return failure();
  FailureOr<json::Array> inputs = inputNames(op);
  if (failed(inputs))
    return failure();
  if (auto aggregate = dyn_cast<AggregateOp>(op))
    for (size_t drop = op->getNumOperands() - aggregate.getPartials().size();
         drop > 0; --drop)
      inputs->pop_back();
  std::string result = "v" + std::to_string(nextValue++);
  json::Object entry{{"result", result},
                     {"type", std::move(*type)},
                     {"inputs", std::move(*inputs)}};

  LogicalResult done =
      llvm::TypeSwitch<Operation *, LogicalResult>(op)
          .Case([&](JoinAggOp join) -> LogicalResult {
            ArrayRef<int64_t> offsets;
            if (auto attr = join->getAttrOfType<DenseI64ArrayAttr>(
                    EinDialect::getLoopOffsetsAttrName()))
              offsets = attr.asArrayRef();
            FailureOr<json::Object> region = joinRegion(join, offsets);
            if (failed(region))
              return failure();
            json::Array lists;
            for (unsigned i = 0, e = join.getInputs().size(); i < e; ++i)
              lists.push_back(integers(join.getIndicesOfInput(i)));
            entry["kind"] = "join_agg";
            entry["input_indices"] = std::move(lists);
            entry["output_indices"] = integers(join.getOutputIndices());
            entry["agg"] = stringifyAggKind(join.getAgg());
            entry["acc"] = *dtypeName(join.getAccType());
            entry["join"] = std::move(*region);
            return success();
          })
          .Case([&](AttentionOp attention) {
            entry["kind"] = "attention";
            entry["causal"] = attention.getCausal();
            entry["group"] = attention.getGroupAttr().getInt();
            entry["scale"] = attention.getScaleOrDefault();
            entry["query_offset"] = attention.getQueryOffsetAttr().getInt();
            entry["key_offset"] = attention.getKeyOffsetAttr().getInt();
            return success();
          })
          .Case([&](SoftmaxOp softmax) {
            entry["kind"] = "softmax";
            entry["dim"] = softmax.getDimAttr().getInt();
            return success();
          })
          .Case([&](RmsNormOp norm) {
            entry["kind"] = "rms_norm";
            entry["eps"] = norm.getEps().convertToDouble();
            return success();
          })
          .Case([&](ReshapeOp reshape) {
            json::Array groups;
            for (Attribute group : reshape.getReassociation()) {
              json::Array dims;
              for (Attribute d : cast<ArrayAttr>(group))
                dims.push_back(cast<IntegerAttr>(d).getInt());
              groups.push_back(std::move(dims));
            }
            entry["kind"] = "reshape";
            entry["reassociation"] = std::move(groups);
            return success();
          })
          .Case([&](SliceOp slice) {
            entry["kind"] = "slice";
            entry["offsets"] = integers(slice.getOffsets());
            entry["sizes"] = integers(slice.getSizes());
            return success();
          })
          .Case([&](ConcatOp concat) {
            entry["kind"] = "concat";
            entry["dim"] = concat.getDimAttr().getInt();
            return success();
          })
          .Case([&](tensor::ExtractSliceOp slice) -> LogicalResult {
            if (!slice.hasUnitStride() || !slice.getOffsets().empty() ||
                !slice.getSizes().empty())
              return slice.emitOpError()
                     << "has no program.json form unless static and "
                        "unit-stride";
            entry["kind"] = "slice";
            entry["offsets"] = integers(slice.getStaticOffsets());
            entry["sizes"] = integers(slice.getStaticSizes());
            return success();
          })
          .Case([&](AggregateOp aggregate) -> LogicalResult {
            // The partials combined element by element: a join with no
            // aggregation whose region folds them with the kind's op.
            const char *combine = nullptr;
            switch (aggregate.getKind()) {
            case AggKind::Add:
              combine = "arith.addf";
              break;
            case AggKind::Max:
              combine = "arith.maximumf";
              break;
            case AggKind::Min:
              combine = "arith.minimumf";
              break;
            case AggKind::Mul:
              combine = "arith.mulf";
              break;
            default:
              return aggregate.emitOpError()
                     << "has no program.json form for its kind";
            }
            Type partial =
                cast<ShapedType>(aggregate.getPartials()[0].getType())
                    .getElementType();
            StringRef dtype = *dtypeName(partial);
            int64_t rank =
                cast<ShapedType>(aggregate.getResult().getType()).getRank();
            SmallVector<int64_t> loops;
            for (int64_t d = 0; d < rank; ++d)
              loops.push_back(d);
            json::Array args, lists, ops;
            int64_t n = aggregate.getPartials().size();
            for (int64_t i = 0; i < n; ++i) {
              args.push_back(dtype);
              lists.push_back(integers(loops));
            }
            int64_t last = 0;
            for (int64_t i = 1; i < n; ++i) {
              ops.push_back(json::Object{{"op", combine},
                                         {"operands", json::Array{last, i}},
                                         {"type", dtype}});
              last = n + i - 1;
            }
            entry["kind"] = "join_agg";
            entry["input_indices"] = std::move(lists);
            entry["output_indices"] = integers(loops);
            entry["agg"] = "none";
            entry["acc"] = dtype;
            entry["join"] = json::Object{{"args", std::move(args)},
                                         {"ops", std::move(ops)},
                                         {"yield", last}};
            return success();
          })
          .Case([&](arith::ConstantOp constant) -> LogicalResult {
            auto elements = dyn_cast<DenseElementsAttr>(constant.getValue());
            if (!elements)
              return constant.emitOpError()
                     << "holds a constant with no program.json form";
            json::Array values;
            auto add = [&](Attribute a) {
              if (auto f = dyn_cast<FloatAttr>(a))
                values.push_back(number(f.getValueAsDouble()));
              else if (cast<IntegerAttr>(a).getType().isInteger(1))
                values.push_back(
                    int64_t(cast<IntegerAttr>(a).getValue().getBoolValue()));
              else
                values.push_back(
                    cast<IntegerAttr>(a).getValue().getSExtValue());
            };
            if (elements.isSplat())
              add(elements.getSplatValue<Attribute>());
            else
              for (Attribute a : elements.getValues<Attribute>())
                add(a);
            entry["kind"] = "constant";
            entry["values"] = std::move(values);
            return success();
          })
          .Default([&](Operation *other) {
            return other->emitOpError()
                   << "has no program.json form; the program may hold "
                      "ein.join_agg, composites, layout ops and tensor "
                      "constants";
          });
  if (failed(done))
    return failure();
  names[op->getResult(0)] = result;
  return entry;
}

FailureOr<json::Value> Exporter::run(func::FuncOp func) {
  json::Array arguments;
  for (auto [i, arg] : llvm::enumerate(func.getArguments())) {
    FailureOr<json::Object> type = tensorType(func, arg.getType());
    if (failed(type))
      return failure();
    std::string name = "arg" + std::to_string(i);
    names[arg] = name;
    json::Object entry{{"name", name}, {"type", std::move(*type)}};
    if (func.getArgAttr(i, EinDialect::getWeightAttrName()))
      entry["weight"] = true;
    arguments.push_back(std::move(entry));
  }
  json::Array ops, results;
  for (Operation &op : func.getBody().front()) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
        auto it = names.find(v);
        if (it == names.end())
          return ret.emitOpError() << "result " << i
                                   << " has no program.json form (a "
                                      "tensor.empty nothing filled?)";
        results.push_back(it->second);
      }
      continue;
    }
    bool handled = false;
    if (failed(exportDeviceLevel(&op, ops, handled)))
      return failure();
    if (handled)
      continue;
    FailureOr<json::Object> entry = exportOp(&op);
    if (failed(entry))
      return failure();
    ops.push_back(std::move(*entry));
  }
  if (results.empty())
    return func.emitOpError() << "returns nothing; a program needs a result";
  return json::Value(json::Object{{"format", "ein-program"},
                                  {"version", kProgramFormatVersion},
                                  {"function", func.getSymName()},
                                  {"arguments", std::move(arguments)},
                                  {"ops", std::move(ops)},
                                  {"results", std::move(results)}});
}

} // namespace

FailureOr<StringRef> mlir::ein::programDTypeName(Type type) {
  return dtypeName(type);
}

llvm::json::Array mlir::ein::jsonIntegers(ArrayRef<int64_t> values) {
  return integers(values);
}

FailureOr<json::Value> mlir::ein::exportProgram(func::FuncOp func) {
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
