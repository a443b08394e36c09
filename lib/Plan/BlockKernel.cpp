//===- BlockKernel.cpp - One join block of a spec-cut op ------------------===//

#include "Einsummable/Plan/BlockKernel.h"

#include "Einsummable/Dialect/Ein/IR/EinOps.h"

#include "ein/partition.h"

using namespace mlir;
using namespace mlir::ein;
namespace planner = ::ein::planner;

namespace {

/// A convolution's or pooling's block reads `region` of its input, its rows
/// and columns clipped to the input: what its window reaches beyond them is
/// its own padding, before and after.
void setBlockPadding(Operation *kernel, const planner::Access &input,
                     const planner::Box &region,
                     const std::vector<int64_t> &offsets) {
  SmallVector<int64_t> low, high;
  auto outSizes = cast<ShapedType>(kernel->getResult(0).getType()).getShape();
  bool last = kernel->getAttrOfType<StringAttr>("layout").getValue() == "nhwc";
  for (size_t d : {last ? 1 : 2, last ? 2 : 3}) {
    int loop = input.dimLoops[d][0];
    // The output block covers [first, first + size) of the loop; its output
    // dimension is the input's (same layout).
    int64_t first = offsets[loop], size = outSizes[d];
    int64_t from = first * input.stride[d] + input.shift[d];
    int64_t to =
        (first + size - 1) * input.stride[d] + input.shift[d] + input.extent[d];
    low.push_back(region.begin[d] - from);
    high.push_back(to - region.end[d]);
  }
  OpBuilder b(kernel);
  kernel->setAttr("pad_low", b.getDenseI64ArrayAttr(low));
  kernel->setAttr("pad_high", b.getDenseI64ArrayAttr(high));
}

} // namespace

Operation *mlir::ein::cloneBlockKernel(OpBuilder &builder, Operation *op,
                                       const planner::Op &node,
                                       const planner::Spec &spec,
                                       ArrayRef<int64_t> coords,
                                       ValueRange operands, Type resultType,
                                       const planner::Box &inputRegion) {
  Operation *kernel = builder.clone(*op);
  kernel->setOperands(operands);
  kernel->getResult(0).setType(resultType);
  kernel->removeAttr("spec");
  kernel->removeAttr(EinDialect::getCandidatesAttrName());
  kernel->removeAttr(EinDialect::getPlaceAttrName());
  std::vector<int64_t> offsets;
  for (size_t l = 0; l < node.loopSizes.size(); ++l)
    offsets.push_back(
        ::ein::blockRange(node.loopSizes[l], spec[l], coords[l]).offset);
  if (isa<JoinAggOp>(kernel))
    kernel->setAttr(EinDialect::getLoopOffsetsAttrName(),
                    builder.getDenseI64ArrayAttr(offsets));
  if (auto gather = dyn_cast<GatherOp>(kernel)) {
    // Loops: the indices' dimensions, then the table's rows: the block holds
    // rows from that loop's offset on.
    int64_t rowLoop = cast<ShapedType>(op->getOperand(1).getType()).getRank();
    gather.setRowOffset(gather.getRowOffsetAttr().getInt() + offsets[rowLoop]);
  }
  if (isa<ConvOp, PoolOp>(kernel))
    setBlockPadding(kernel, node.inputs[0], inputRegion, offsets);
  if (auto conv = dyn_cast<ConvOp>(kernel); conv && conv.getGroupCount() != 1) {
    // A block holds whole groups, or part of one (its `f` or `c` cut under
    // single groups): its groups are its input channels over the filter's.
    bool last = conv.getLayout() == "nhwc";
    int64_t channels =
        cast<ShapedType>(operands[0].getType()).getShape()[last ? 3 : 1];
    int64_t perGroup =
        cast<ShapedType>(operands[1].getType()).getShape()[last ? 2 : 1];
    conv.setGroups(channels / perGroup);
  }
  if (auto attention = dyn_cast<AttentionOp>(kernel)) {
    // Loops: batch, kv_head, group, query, key. A block sees its share of
    // each KV head's group and its place in the sequence.
    attention.setGroup(
        ::ein::blockRange(node.loopSizes[2], spec[2], coords[2]).size);
    // Offsets place a causal mask; without one every key is visible and the
    // block needs none.
    if (attention.getCausal()) {
      attention.setQueryOffset(attention.getQueryOffset() + offsets[3]);
      attention.setKeyOffset(attention.getKeyOffset() + offsets[4]);
    }
  }
  return kernel;
}
