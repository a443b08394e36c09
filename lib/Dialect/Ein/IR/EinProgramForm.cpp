//===- EinProgramForm.cpp - ein ops as program.json entries ---------------===//
//
// Each SpecOpInterface op's `describeInProgram`: the kind-specific fields of
// its entry in ein::Program (runtime/include/ein/program.h), the typed form
// of program.json. The exporter (lib/Program/ExportProgram.cpp) fills the
// fields every entry has and writes the text with ein::writeProgram.
//
//===----------------------------------------------------------------------===//

#include "Einsummable/Dialect/Ein/IR/EinProgramForm.h"

#include "Einsummable/Dialect/Ein/IR/EinOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using namespace mlir::ein;

static std::vector<int64_t> integers(ArrayRef<int64_t> values) {
  return std::vector<int64_t>(values.begin(), values.end());
}

std::optional<::ein::DType> mlir::ein::programDType(Type type) {
  if (type.isF64())
    return ::ein::DType::F64;
  if (type.isF32())
    return ::ein::DType::F32;
  if (type.isF16())
    return ::ein::DType::F16;
  if (type.isBF16())
    return ::ein::DType::BF16;
  if (type.isIndex())
    return ::ein::DType::Index;
  if (type.isInteger(64))
    return ::ein::DType::I64;
  if (type.isInteger(32))
    return ::ein::DType::I32;
  if (type.isInteger(1))
    return ::ein::DType::I1;
  return std::nullopt;
}

std::optional<::ein::Agg> mlir::ein::programAgg(AggKind kind) {
  switch (kind) {
  case AggKind::None:
    return ::ein::Agg::None;
  case AggKind::Add:
    return ::ein::Agg::Add;
  case AggKind::Max:
    return ::ein::Agg::Max;
  case AggKind::Min:
    return ::ein::Agg::Min;
  case AggKind::Mul:
    return ::ein::Agg::Mul;
  case AggKind::OnlineSoftmax:
    return std::nullopt; // attention's own combine, not a join's
  }
  return std::nullopt;
}

std::optional<double> mlir::ein::programScalar(Attribute value) {
  if (auto f = dyn_cast<FloatAttr>(value))
    return f.getValueAsDouble();
  if (auto i = dyn_cast<IntegerAttr>(value))
    return i.getType().isInteger(1) ? double(i.getValue().getBoolValue())
                                    : double(i.getValue().getSExtValue());
  return std::nullopt;
}

/// The join region of `op` as scalar operations. A block kernel's loops
/// start at `offsets`: ein.index reads whole-tensor coordinates, so each
/// index gets its offset added.
static LogicalResult describeJoin(JoinAggOp op, ArrayRef<int64_t> offsets,
                                  ::ein::JoinRegion &region) {
  Block &body = op.getJoin().front();
  llvm::DenseMap<Value, int> numbers;
  int next = 0;
  for (BlockArgument arg : body.getArguments()) {
    numbers[arg] = next++;
    region.args.push_back(*programDType(arg.getType()));
  }
  for (Operation &scalar : body.without_terminator()) {
    std::string name = scalar.getName().getStringRef().str();
    std::optional<::ein::ScalarKind> kind = ::ein::parseScalarKind(name);
    if (!kind || scalar.getNumResults() != 1 || scalar.getNumRegions() != 0)
      return scalar.emitOpError()
             << "has no program.json form; join regions may hold the arith "
                "and math operations listed in docs/program-format.md";
    Type type = scalar.getResult(0).getType();
    std::optional<::ein::DType> dtype = programDType(type);
    if (!dtype)
      return scalar.emitOpError()
             << "result type " << type << " has no program.json form";
    ::ein::ScalarOp entry;
    entry.kind = *kind;
    entry.name = name;
    entry.type = *dtype;
    for (Value v : scalar.getOperands())
      entry.operands.push_back(numbers.lookup(v));
    if (*kind == ::ein::ScalarKind::Constant) {
      std::optional<double> value = programScalar(scalar.getAttr("value"));
      if (!value)
        return scalar.emitOpError() << "holds a constant with no program.json "
                                       "form";
      entry.constant = *value;
    }
    if (*kind == ::ein::ScalarKind::CmpF || *kind == ::ein::ScalarKind::CmpI) {
      if (auto cmp = dyn_cast<arith::CmpFOp>(scalar))
        entry.predicate =
            arith::stringifyCmpFPredicate(cmp.getPredicate()).str();
      if (auto cmp = dyn_cast<arith::CmpIOp>(scalar))
        entry.predicate =
            arith::stringifyCmpIPredicate(cmp.getPredicate()).str();
    }
    int64_t offset = 0;
    if (auto index = dyn_cast<IndexOp>(scalar)) {
      entry.dim = index.getDimAttr().getInt();
      if (!offsets.empty())
        offset = offsets[entry.dim];
    }
    numbers[scalar.getResult(0)] = next++;
    region.ops.push_back(std::move(entry));
    if (offset != 0) {
      ::ein::ScalarOp constant;
      constant.kind = ::ein::ScalarKind::Constant;
      constant.name = "arith.constant";
      constant.type = *dtype;
      constant.constant = double(offset);
      ::ein::ScalarOp add;
      add.kind = ::ein::ScalarKind::AddI;
      add.name = "arith.addi";
      add.type = *dtype;
      add.operands = {numbers[scalar.getResult(0)], next};
      region.ops.push_back(std::move(constant));
      region.ops.push_back(std::move(add));
      numbers[scalar.getResult(0)] = next + 1;
      next += 2;
    }
  }
  auto yield = cast<YieldOp>(body.getTerminator());
  region.yield = numbers.lookup(yield.getValues().front());
  return success();
}

LogicalResult JoinAggOp::describeInProgram(::ein::Op &entry) {
  ArrayRef<int64_t> offsets;
  if (auto attr = (*this)->getAttrOfType<DenseI64ArrayAttr>(
          EinDialect::getLoopOffsetsAttrName()))
    offsets = attr.asArrayRef();
  std::optional<::ein::Agg> agg = programAgg(getAgg());
  std::optional<::ein::DType> acc = programDType(getAccType());
  if (!agg || !acc)
    return emitOpError() << "has no program.json form for its aggregation";
  entry.kind = ::ein::OpKind::JoinAgg;
  for (unsigned i = 0, e = getInputs().size(); i < e; ++i)
    entry.inputIndices.push_back(integers(getIndicesOfInput(i)));
  entry.outputIndices = integers(getOutputIndices());
  entry.agg = *agg;
  entry.acc = *acc;
  return describeJoin(*this, offsets, entry.join);
}

LogicalResult AttentionOp::describeInProgram(::ein::Op &entry) {
  entry.kind = ::ein::OpKind::Attention;
  entry.causal = getCausal();
  entry.group = getGroupAttr().getInt();
  entry.scale = getScaleOrDefault();
  entry.queryOffset = getQueryOffsetAttr().getInt();
  entry.keyOffset = getKeyOffsetAttr().getInt();
  return success();
}

LogicalResult SoftmaxOp::describeInProgram(::ein::Op &entry) {
  entry.kind = ::ein::OpKind::Softmax;
  entry.dim = getDimAttr().getInt();
  return success();
}

LogicalResult RmsNormOp::describeInProgram(::ein::Op &entry) {
  entry.kind = ::ein::OpKind::RmsNorm;
  entry.eps = getEps().convertToDouble();
  return success();
}

LogicalResult LayerNormOp::describeInProgram(::ein::Op &entry) {
  // Its inputs say which parameters it has: x, then the weight, then the
  // bias (the verifier allows no bias without a weight).
  entry.kind = ::ein::OpKind::LayerNorm;
  entry.eps = getEps().convertToDouble();
  return success();
}

LogicalResult GatherOp::describeInProgram(::ein::Op &entry) {
  entry.kind = ::ein::OpKind::Gather;
  entry.rowOffset = getRowOffsetAttr().getInt();
  return success();
}

LogicalResult ArgReduceOp::describeInProgram(::ein::Op &entry) {
  entry.kind = ::ein::OpKind::ArgReduce;
  entry.agg = getKind() == AggKind::Max ? ::ein::Agg::Max : ::ein::Agg::Min;
  entry.dim = getDimAttr().getInt();
  return success();
}

/// The fields ein.conv and ein.pool share.
template <typename WindowOp>
static void describeWindow(WindowOp op, ::ein::Op &entry) {
  entry.window.layout = op.getLayout().str();
  entry.window.strides = integers(op.getStrides());
  entry.window.dilations = integers(op.getDilations());
  entry.window.padLow = integers(op.getPadLow());
  entry.window.padHigh = integers(op.getPadHigh());
}

LogicalResult ConvOp::describeInProgram(::ein::Op &entry) {
  entry.kind = ::ein::OpKind::Conv;
  describeWindow(*this, entry);
  entry.window.groups = getGroupCount();
  return success();
}

LogicalResult PoolOp::describeInProgram(::ein::Op &entry) {
  entry.kind = ::ein::OpKind::Pool;
  entry.agg = getKind() == AggKind::Max ? ::ein::Agg::Max : ::ein::Agg::Add;
  entry.window.sizes = integers(getWindow());
  describeWindow(*this, entry);
  return success();
}

LogicalResult ReshapeOp::describeInProgram(::ein::Op &entry) {
  entry.kind = ::ein::OpKind::Reshape;
  for (Attribute group : getReassociation()) {
    entry.reassociation.emplace_back();
    for (Attribute d : cast<ArrayAttr>(group))
      entry.reassociation.back().push_back(cast<IntegerAttr>(d).getInt());
  }
  return success();
}

LogicalResult SliceOp::describeInProgram(::ein::Op &entry) {
  entry.kind = ::ein::OpKind::Slice;
  entry.offsets = integers(getOffsets());
  entry.sizes = integers(getSizes());
  return success();
}

LogicalResult ConcatOp::describeInProgram(::ein::Op &entry) {
  entry.kind = ::ein::OpKind::Concat;
  entry.dim = getDimAttr().getInt();
  return success();
}
