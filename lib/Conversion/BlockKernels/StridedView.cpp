//===- StridedView.cpp - Copies a library step can read in place ----------===//

#include "Einsummable/Conversion/BlockKernels/StridedView.h"

#include "ein/region.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::ein;

namespace {

SmallVector<int64_t> denseStrides(ArrayRef<int64_t> shape) {
  return llvm::to_vector(
      ::ein::rowMajorStrides(std::vector<int64_t>(shape.begin(), shape.end())));
}

/// `strides` with each dimension of extent 1 given the stride it would
/// have in a dense layout of the dimensions inside it (its own stride is
/// never used; libraries want it plausible, not 0).
void settleUnitStrides(ArrayRef<int64_t> shape,
                       MutableArrayRef<int64_t> strides) {
  int64_t inner = 1;
  for (int64_t d = int64_t(shape.size()) - 1; d >= 0; --d) {
    if (shape[d] == 1)
      strides[d] = inner;
    inner = strides[d] * shape[d];
  }
}

/// Whether `loops` names each of `count` loops once.
bool isPermutation(ArrayRef<int64_t> loops, int64_t count) {
  if (int64_t(loops.size()) != count)
    return false;
  SmallVector<bool> seen(count, false);
  for (int64_t l : loops) {
    if (l < 0 || l >= count || seen[l])
      return false;
    seen[l] = true;
  }
  return true;
}

SmallVector<SmallVector<int64_t>> groupsOf(ReshapeOp reshape) {
  SmallVector<SmallVector<int64_t>> groups;
  for (Attribute group : reshape.getReassociation())
    groups.push_back(llvm::to_vector(
        llvm::map_range(cast<ArrayAttr>(group), [](Attribute a) {
          return cast<IntegerAttr>(a).getInt();
        })));
  return groups;
}

/// `view` seen through `reshape` (whose source it views), or nothing where
/// a collapsed group is not contiguous in the view.
std::optional<StridedView> throughReshape(ReshapeOp reshape, StridedView view) {
  ArrayRef<int64_t> source =
      cast<RankedTensorType>(reshape.getSource().getType()).getShape();
  ArrayRef<int64_t> result =
      cast<RankedTensorType>(reshape.getType()).getShape();
  SmallVector<int64_t> strides(result.size(), 0);
  if (result.size() > source.size()) {
    // Expanding: each source dimension splits into its group, the last
    // dimension of the group innermost.
    for (auto [d, group] : llvm::enumerate(groupsOf(reshape))) {
      int64_t stride = view.strides[d];
      for (int64_t r : llvm::reverse(group)) {
        strides[r] = stride;
        stride *= result[r];
      }
    }
  } else {
    // Collapsing: a group whose dimensions (of extent above 1) nest
    // contiguously is one dimension of its innermost one's stride.
    for (auto [r, group] : llvm::enumerate(groupsOf(reshape))) {
      std::optional<int64_t> inner;
      for (int64_t s : llvm::reverse(group)) {
        if (source[s] == 1)
          continue;
        if (inner && view.strides[s] != *inner)
          return std::nullopt;
        if (!inner)
          strides[r] = view.strides[s];
        inner = view.strides[s] * source[s];
      }
    }
  }
  view.strides = std::move(strides);
  return view;
}

} // namespace

bool mlir::ein::isExactTranspose(JoinAggOp block) {
  if (block.getInputs().size() != 1 || block.getAgg() != AggKind::None ||
      !block.getDevice())
    return false;
  auto in = cast<RankedTensorType>(block.getInputs()[0].getType());
  auto out = cast<RankedTensorType>(block.getType());
  int64_t loops = block.getNumLoops();
  if (in.getElementType() != out.getElementType() ||
      !isPermutation(block.getIndicesOfInput(0), loops) ||
      !isPermutation(block.getOutputIndices(), loops))
    return false;
  Block &body = block.getJoin().front();
  // Widening casts alone: the result's element type narrows back exactly.
  if (!llvm::all_of(body.without_terminator(),
                    [](Operation &op) { return isa<arith::ExtFOp>(op); }))
    return false;
  return yieldedValue(block) == body.getArgument(0);
}

static StridedView trace(Value value);

StridedView mlir::ein::traceStridedView(Value value) {
  StridedView view = trace(value);
  if (auto type = dyn_cast<RankedTensorType>(value.getType()))
    settleUnitStrides(type.getShape(), view.strides);
  return view;
}

bool mlir::ein::isDenseView(const StridedView &view, Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  auto source = cast<RankedTensorType>(view.source.getType());
  if (view.offset != 0 || source.getNumElements() != type.getNumElements())
    return false;
  int64_t stride = 1;
  for (int64_t d = type.getRank() - 1; d >= 0; --d) {
    if (type.getShape()[d] != 1 && view.strides[d] != stride)
      return false;
    stride *= type.getShape()[d];
  }
  return true;
}

static StridedView trace(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  StridedView dense{value, 0, {}};
  if (!type || !type.hasStaticShape())
    return dense;
  dense.strides = denseStrides(type.getShape());
  Operation *def = value.getDefiningOp();
  if (auto slice = dyn_cast_or_null<tensor::ExtractSliceOp>(def)) {
    if (!slice.hasUnitStride() ||
        slice.getSourceType().getRank() != slice.getResultType().getRank() ||
        !slice.getSourceType().hasStaticShape() ||
        ShapedType::isDynamicShape(slice.getStaticOffsets()))
      return dense;
    StridedView view = trace(slice.getSource());
    for (auto [offset, stride] :
         llvm::zip(slice.getStaticOffsets(), view.strides))
      view.offset += offset * stride;
    return view;
  }
  if (auto reshape = dyn_cast_or_null<ReshapeOp>(def)) {
    if (!isa<RankedTensorType>(reshape.getSource().getType()))
      return dense;
    std::optional<StridedView> view =
        throughReshape(reshape, trace(reshape.getSource()));
    return view ? *view : dense;
  }
  if (auto block = dyn_cast_or_null<JoinAggOp>(def);
      block && isExactTranspose(block)) {
    StridedView view = trace(block.getInputs()[0]);
    SmallVector<int64_t> loop(block.getNumLoops(), 0);
    for (auto [d, l] : llvm::enumerate(block.getIndicesOfInput(0)))
      loop[l] = view.strides[d];
    SmallVector<int64_t> strides;
    for (int64_t l : block.getOutputIndices())
      strides.push_back(loop[l]);
    view.strides = std::move(strides);
    return view;
  }
  return dense;
}

FailureOr<SmallVector<int64_t>> mlir::ein::permutationStrides(ViewOp view) {
  auto source = cast<RankedTensorType>(view.getSource().getType());
  auto result = cast<RankedTensorType>(view.getType());
  if (view.getOffset() != 0 ||
      source.getNumElements() != result.getNumElements())
    return failure();
  SmallVector<int64_t> sourceDense = denseStrides(source.getShape()),
                       resultDense = denseStrides(result.getShape());
  SmallVector<int64_t> placed(source.getRank(), 0);
  SmallVector<bool> used(result.getRank(), false);
  // Each source dimension (of extent above 1) is one result dimension of
  // its extent that steps over it: same stride in the source's storage.
  for (auto [d, extent] : llvm::enumerate(source.getShape())) {
    if (extent == 1)
      continue;
    bool found = false;
    for (auto [r, size] : llvm::enumerate(result.getShape()))
      if (!used[r] && size == extent &&
          view.getStrides()[r] == sourceDense[d]) {
        used[r] = found = true;
        placed[d] = resultDense[r];
        break;
      }
    if (!found)
      return failure();
  }
  // The result's other dimensions must be of extent 1.
  for (auto [r, size] : llvm::enumerate(result.getShape()))
    if (!used[r] && size != 1)
      return failure();
  // A unit source dimension steps as far as the dense one inside it.
  for (int64_t d = source.getRank() - 1; d >= 0; --d)
    if (source.getShape()[d] == 1)
      placed[d] = d + 1 < source.getRank()
                      ? placed[d + 1] * source.getShape()[d + 1]
                      : 1;
  return placed;
}
