//===- BlockKernel.h - One join block of a spec-cut op -----------*- C++
//-*-===//
//
// The op a GPU runs for one join block of a planned op: the op cloned onto
// its block operands, told where in the op's loop space the block sits.
// ein-synthesize-exchanges writes one per GPU; ein-device-blocks writes one
// GPU's share of a plan as a one-device program of them.
//
//===----------------------------------------------------------------------===//

#ifndef EINSUMMABLE_PLAN_BLOCKKERNEL_H
#define EINSUMMABLE_PLAN_BLOCKKERNEL_H

#include "Einsummable/Planner/Cost.h"

#include "mlir/IR/Builders.h"

namespace mlir::ein {

/// Clones `op` (a spec-cut op of the planner's `node`, cut by `spec`) at
/// `builder`'s insertion point as the kernel of join block `coords`: its
/// operands `operands` (a null value where a touch op's block misses that
/// input), its result of type `resultType`, without the planning
/// attributes (spec, candidates, place), and with what the block must know
/// of where it sits: a join-agg's loop offsets, a gather's first table row,
/// attention's share of each group and causal offsets, a convolution's or
/// pooling's own padding (`inputRegion`: the region of input 0 it reads).
Operation *cloneBlockKernel(OpBuilder &builder, Operation *op,
                            const ::ein::planner::Op &node,
                            const ::ein::planner::Spec &spec,
                            ArrayRef<int64_t> coords, ValueRange operands,
                            Type resultType,
                            const ::ein::planner::Box &inputRegion);

} // namespace mlir::ein

#endif // EINSUMMABLE_PLAN_BLOCKKERNEL_H
