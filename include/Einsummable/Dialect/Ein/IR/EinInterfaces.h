//===- EinInterfaces.h - ein op interfaces ----------------------*- C++ -*-===//

#ifndef EINSUMMABLE_DIALECT_EIN_IR_EININTERFACES_H
#define EINSUMMABLE_DIALECT_EIN_IR_EININTERFACES_H

#include "Einsummable/Dialect/Ein/IR/EinAttrs.h"
#include "ein/program.h"
#include "mlir/IR/OpDefinition.h"

#include <optional>

namespace mlir::ein {

/// How an operand or the result of an op is indexed by its loops: per
/// dimension, the loops it spans, outermost first (none for a dimension no
/// spec may cut, such as attention's head dimension). Touch ops (slice,
/// concat) add, per dimension, what to add to a loop coordinate to get the
/// operand's; their blocks map by hyper-rectangle intersection, as windowed
/// reads (convolution, pooling) do too.
struct OperandAccess {
  SmallVector<SmallVector<int64_t, 2>> dimLoops;
  SmallVector<int64_t> shift;
  /// Windowed reads (ein.conv, ein.pool), with `shift`: per dimension, a
  /// block of its loop covering [a, b) reads [a * stride + shift,
  /// (b - 1) * stride + shift + extent), clipped to the operand: its own
  /// part and the halo its window reaches into. Empty means 1 everywhere.
  SmallVector<int64_t> stride, extent;

  /// The parts each dimension is cut into under a spec's `parts`: the
  /// product of the parts of the loops it spans.
  SmallVector<int64_t> cut(ArrayRef<int64_t> parts) const;
  /// The product of the parts of the loops no dimension spans: an input's
  /// copies (join blocks reading each block), a result's aggregation fan-in.
  int64_t partsOutside(ArrayRef<int64_t> parts) const;
};

/// The loop structure of an op a spec can cut: what the planner and the
/// planned-form verifier both read.
struct OpAccesses {
  SmallVector<OperandAccess> inputs;
  OperandAccess result;
  /// How partial results over the loops absent from the result combine.
  AggKind aggregation = AggKind::None;
  /// The element type partial results move and combine in.
  Type accumulator;
};

/// Causal attention's work: only (query, key) pairs with
/// `key + keyOffset <= query + queryOffset` count.
struct CausalMask {
  int64_t queryLoop = -1, keyLoop = -1;
  int64_t queryOffset = 0, keyOffset = 0;
};

/// Marks ops whose every block is a computation on its device (Ein_BlockKernel
/// in EinInterfaces.td): join_agg and the composites.
template <typename ConcreteType>
class BlockKernel : public OpTrait::TraitBase<ConcreteType, BlockKernel> {};

} // namespace mlir::ein

#include "Einsummable/Dialect/Ein/IR/EinInterfaces.h.inc"

namespace mlir::ein {

/// Checks a spec against the loops of the op that carries it: one part per
/// loop, no loop cut into more parts than it has elements, and one join block
/// per device of the enclosing target.
LogicalResult verifySpec(SpecOpInterface op);

/// Verifies an op's spec, and when it operates on relations (the planned
/// form) that every relation is cut as the spec dictates: each input cut by
/// the parts of its loops with one replica per join block that reads each
/// block and no pending partials; the result cut likewise, holding the
/// aggregation fan-in as pending partials in the accumulator type. On
/// tensors it checks the optional `device` instead.
LogicalResult verifyPlanned(SpecOpInterface op);

} // namespace mlir::ein

#endif // EINSUMMABLE_DIALECT_EIN_IR_EININTERFACES_H
