//===- ExportProgram.cpp - Logical ein IR to program.json ---------------===//

#include "Einsummable/Program/ExportProgram.h"

#include "Einsummable/Dialect/Ein/IR/EinOps.h"
#include "ein/program.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

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
  FailureOr<json::Object> joinRegion(JoinAggOp op);
  FailureOr<json::Object> exportOp(Operation *op);
  FailureOr<json::Array> inputNames(Operation *op);

  llvm::DenseMap<Value, std::string> names;
  int64_t nextValue = 0;
};

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

FailureOr<json::Object> Exporter::joinRegion(JoinAggOp op) {
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
    if (auto index = dyn_cast<IndexOp>(scalar))
      entry["dim"] = index.getDimAttr().getInt();
    numbers[scalar.getResult(0)] = next++;
    ops.push_back(std::move(entry));
  }
  auto yield = cast<YieldOp>(body.getTerminator());
  return json::Object{{"args", std::move(args)},
                      {"ops", std::move(ops)},
                      {"yield", numbers.lookup(yield.getValues().front())}};
}

FailureOr<json::Object> Exporter::exportOp(Operation *op) {
  if (op->getNumResults() != 1)
    return op->emitOpError() << "has no program.json form";
  FailureOr<json::Object> type = tensorType(op, op->getResult(0).getType());
  if (failed(type))
    return failure();
  FailureOr<json::Array> inputs = inputNames(op);
  if (failed(inputs))
    return failure();
  std::string result = "v" + std::to_string(nextValue++);
  json::Object entry{{"result", result},
                     {"type", std::move(*type)},
                     {"inputs", std::move(*inputs)}};
  if (Attribute device = op->getAttr("device"))
    return op->emitOpError()
           << "is a device-level block kernel (device " << device
           << "); program.json describes the logical program";

  LogicalResult done =
      llvm::TypeSwitch<Operation *, LogicalResult>(op)
          .Case([&](JoinAggOp join) -> LogicalResult {
            FailureOr<json::Object> region = joinRegion(join);
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
      for (Value v : ret.getOperands())
        results.push_back(names.lookup(v));
      continue;
    }
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
