//===- BuildGraph.cpp - ein IR to the planner's graph -------------------===//

#include "Einsummable/Planner/BuildGraph.h"

#include "Einsummable/Dialect/Ein/IR/EinOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::ein;
namespace planner = ::ein::planner;

namespace {

int64_t elementBytes(Type type) {
  return std::max<int64_t>(1, (type.getIntOrFloatBitWidth() + 7) / 8);
}

/// Every dimension read by the loop of the same number.
std::vector<std::vector<int>> identity(int64_t rank) {
  std::vector<std::vector<int>> dims;
  for (int d = 0; d < rank; ++d)
    dims.push_back({d});
  return dims;
}

std::vector<std::string> loopNames(SpecOpInterface op) {
  SmallVector<std::string> names = op.getLoopNames();
  return std::vector<std::string>(names.begin(), names.end());
}

class GraphBuilder {
public:
  explicit GraphBuilder(const planner::TargetInfo &target) : target(target) {}

  FailureOr<PlannerGraph> run(func::FuncOp func) {
    for (auto [i, arg] : llvm::enumerate(func.getArguments())) {
      bool weight =
          func.getArgAttr(i, EinDialect::getWeightAttrName()) != nullptr;
      if (failed(addValue(func, arg, "arg" + std::to_string(i),
                          weight ? planner::ValueKind::Weight
                                 : planner::ValueKind::Activation)))
        return failure();
    }
    for (Operation &op : func.getBody().front()) {
      if (auto ret = dyn_cast<func::ReturnOp>(op)) {
        for (Value v : ret.getOperands())
          result.graph.results.push_back(values.lookup(v));
        if (tieLayout && failed(tieResults(func, ret)))
          return failure();
        continue;
      }
      if (auto constant = dyn_cast<arith::ConstantOp>(op);
          constant && isa<RankedTensorType>(constant.getType())) {
        // Constants are materialised wherever they are needed, for free.
        if (failed(addValue(&op, constant.getResult(),
                            "v" + std::to_string(next++),
                            planner::ValueKind::Constant)))
          return failure();
        continue;
      }
      if (failed(addOp(&op)))
        return failure();
    }
    return std::move(result);
  }

  bool tieLayout = false;

private:
  /// Ties each result to the first activation argument of its type.
  LogicalResult tieResults(func::FuncOp func, func::ReturnOp ret) {
    for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
      BlockArgument match;
      for (BlockArgument arg : func.getArguments())
        if (arg.getType() == v.getType() &&
            !func.getArgAttr(arg.getArgNumber(),
                             EinDialect::getWeightAttrName())) {
          match = arg;
          break;
        }
      if (!match)
        return ret.emitOpError()
               << "result " << i << " (" << v.getType()
               << ") has no activation argument of its type to tie its "
                  "layout to";
      if (isa<BlockArgument>(v))
        return ret.emitOpError() << "result " << i
                                 << " is an argument itself; it already "
                                    "leaves in its own layout";
      result.graph.ties.push_back({values.lookup(match), values.lookup(v)});
    }
    return success();
  }

  LogicalResult addValue(Operation *where, Value value, std::string name,
                         planner::ValueKind kind) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (!type || !type.hasStaticShape() ||
        !type.getElementType().isIntOrFloat())
      return where->emitOpError() << "the planner takes ranked tensors of "
                                     "static shape, of integers or floats, got "
                                  << value.getType();
    planner::Value v;
    v.name = std::move(name);
    v.shape.assign(type.getShape().begin(), type.getShape().end());
    v.elementBytes = elementBytes(type.getElementType());
    v.kind = kind;
    values[value] = static_cast<int>(result.graph.values.size());
    result.graph.values.push_back(std::move(v));
    return success();
  }

  planner::Access access(Value value, std::vector<std::vector<int>> dims,
                         std::vector<int64_t> shift = {}) {
    return planner::Access{values.lookup(value), std::move(dims),
                           std::move(shift)};
  }

  LogicalResult addOp(Operation *op) {
    auto spec = dyn_cast<SpecOpInterface>(op);
    if (!spec || op->getNumResults() != 1 ||
        !isa<RankedTensorType>(op->getResult(0).getType()))
      return op->emitOpError()
             << "cannot be planned; the planner takes logical ein ops on "
                "tensors";
    for (Value operand : op->getOperands())
      if (!values.count(operand))
        return op->emitOpError() << "uses a value defined outside the function";
    if (op->hasAttr("device"))
      return op->emitOpError() << "is a device-level block kernel; the planner "
                                  "takes the logical program";
    planner::Op node;
    node.name = op->getName().getStringRef().str() + " #" +
                std::to_string(result.graph.ops.size());
    SmallVector<int64_t> sizes = spec.getLoopSizes();
    node.loopSizes.assign(sizes.begin(), sizes.end());
    node.loopNames = loopNames(spec);
    node.cuttable.assign(sizes.size(), true);
    Value out = op->getResult(0);
    if (failed(addValue(op, out, "v" + std::to_string(next++),
                        planner::ValueKind::Intermediate)))
      return failure();
    auto outType = cast<RankedTensorType>(out.getType());
    node.accBytes = elementBytes(outType.getElementType());

    llvm::TypeSwitch<Operation *>(op)
        .Case([&](JoinAggOp join) {
          for (unsigned i = 0, e = join.getInputs().size(); i < e; ++i) {
            std::vector<std::vector<int>> dims;
            for (int64_t l : join.getIndicesOfInput(i))
              dims.push_back({static_cast<int>(l)});
            node.inputs.push_back(access(join.getInputs()[i], dims));
          }
          std::vector<std::vector<int>> dims;
          for (int64_t l : join.getOutputIndices())
            dims.push_back({static_cast<int>(l)});
          node.output = access(out, dims);
          node.accBytes = elementBytes(join.getAccType());
          // One operation per arithmetic op of the join, plus the
          // aggregation's combine.
          double ops = 0;
          for (Operation &scalar : join.getJoin().front().without_terminator())
            if (!isa<arith::ConstantOp, IndexOp>(scalar))
              ++ops;
          node.flopsPerPoint = std::max<double>(1, ops) +
                               (join.getAggregatedLoops().empty() ? 0 : 1);
        })
        .Case([&](AttentionOp attention) {
          // Loops: batch, kv_head, group, query, key; head dims stay whole.
          auto v = cast<RankedTensorType>(attention.getValue().getType());
          auto q = cast<RankedTensorType>(attention.getQuery().getType());
          node.cuttable[4] = target.canCutAttentionKeys();
          node.inputs = {access(attention.getQuery(), {{0}, {1, 2}, {3}, {}}),
                         access(attention.getKey(), {{0}, {1}, {4}, {}}),
                         access(attention.getValue(), {{0}, {1}, {4}, {}})};
          node.output = access(out, {{0}, {1, 2}, {3}, {}});
          node.accBytes = 4; // partial outputs combine in f32
          node.flopsPerPoint = 2.0 * (q.getDimSize(3) + v.getDimSize(3));
          node.causal = attention.getCausal();
          node.attention = {3, 4, attention.getQueryOffsetAttr().getInt(),
                            attention.getKeyOffsetAttr().getInt()};
        })
        .Case([&](SoftmaxOp softmax) {
          // The softmax dimension stays whole: its fused kernel reduces it.
          node.cuttable[softmax.getDimAttr().getInt()] = false;
          node.inputs = {
              access(softmax.getInput(), identity(outType.getRank()))};
          node.output = access(out, identity(outType.getRank()));
          node.flopsPerPoint = 4;
        })
        .Case([&](RmsNormOp norm) {
          // The normalised (last) dimension stays whole.
          int last = static_cast<int>(outType.getRank()) - 1;
          node.cuttable[last] = false;
          node.inputs = {access(norm.getInput(), identity(outType.getRank())),
                         access(norm.getWeight(), {{last}})};
          node.output = access(out, identity(outType.getRank()));
          node.flopsPerPoint = 3;
        })
        .Case([&](ReshapeOp reshape) {
          // Loops are the higher-rank side's dimensions; each dimension of
          // the lower-rank side spans its group.
          Value source = reshape.getSource();
          bool expand = outType.getRank() >
                        cast<RankedTensorType>(source.getType()).getRank();
          std::vector<std::vector<int>> groups;
          for (Attribute group : reshape.getReassociation()) {
            groups.emplace_back();
            for (Attribute d : cast<ArrayAttr>(group))
              groups.back().push_back(
                  static_cast<int>(cast<IntegerAttr>(d).getInt()));
          }
          std::vector<std::vector<int>> high = identity(node.loopSizes.size());
          node.inputs = {access(source, expand ? groups : high)};
          node.output = access(out, expand ? high : groups);
        })
        .Case([&](SliceOp slice) {
          node.inputs = {
              access(slice.getSource(), identity(outType.getRank()),
                     std::vector<int64_t>(slice.getOffsets().begin(),
                                          slice.getOffsets().end()))};
          node.output = access(out, identity(outType.getRank()));
        })
        .Case([&](ConcatOp concat) {
          int64_t dim = concat.getDimAttr().getInt(), at = 0;
          for (Value input : concat.getInputs()) {
            std::vector<int64_t> shift(outType.getRank(), 0);
            shift[dim] = -at;
            at += cast<RankedTensorType>(input.getType()).getDimSize(dim);
            node.inputs.push_back(
                access(input, identity(outType.getRank()), shift));
          }
          node.output = access(out, identity(outType.getRank()));
        });
    result.graph.ops.push_back(std::move(node));
    result.ops.push_back(op);
    return success();
  }

  const planner::TargetInfo &target;
  PlannerGraph result;
  llvm::DenseMap<Value, int> values;
  int64_t next = 0;
};

} // namespace

FailureOr<PlannerGraph> mlir::ein::buildPlannerGraph(
    func::FuncOp func, const planner::TargetInfo &target, bool tieLayout) {
  if (func.isExternal() || !func.getBody().hasOneBlock())
    return func.emitOpError() << "the planner takes a function with one block";
  GraphBuilder builder(target);
  builder.tieLayout = tieLayout;
  return builder.run(func);
}
