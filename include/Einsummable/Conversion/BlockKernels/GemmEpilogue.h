//===- GemmEpilogue.h - Elementwise blocks a library gemm absorbs -*- C++
//-*-===//
//
// cuBLASLt finishes a gemm with an epilogue: D = act(A B + C + bias), one
// pass over the result instead of a gemm and a kernel that reads its result
// back. This recognizes the device-level elementwise blocks that are such
// an epilogue of the library gemm they read: the bias adds, residual adds
// and activations front ends write after a linear layer.
//
//===----------------------------------------------------------------------===//

#ifndef EINSUMMABLE_CONVERSION_BLOCKKERNELS_GEMMEPILOGUE_H
#define EINSUMMABLE_CONVERSION_BLOCKKERNELS_GEMMEPILOGUE_H

#include "Einsummable/Dialect/Ein/IR/EinOps.h"

#include <optional>

namespace mlir::ein {

/// What an elementwise block does to the gemm result it reads: its inputs
/// that are the bias and the addend, if any, and the activation.
struct GemmEpilogue {
  std::optional<unsigned> bias, addend;
  GemmActivation activation = GemmActivation::None;
};

/// The epilogue form of `block`, a device-level join-agg that aggregates
/// nothing, over its input `product` (a gemm's result): its region yields
/// `act(product + bias + addend)`, the sum in any order and grouping and
/// float casts anywhere (the epilogue rounds once), where `bias` is an input
/// read through the block's last loop alone, `addend` one read one to one
/// as `product` is (both optional, each once), and `act` nothing, ReLU
/// (`maximumf`/`maxnumf` with 0) or GELU's tanh approximation written in
/// any form that is the same polynomial in the sum and its tanh. Failure
/// (no diagnostic) for anything else: other inputs, `ein.index`, any other
/// function.
FailureOr<GemmEpilogue> matchGemmEpilogue(JoinAggOp block, unsigned product);

} // namespace mlir::ein

#endif // EINSUMMABLE_CONVERSION_BLOCKKERNELS_GEMMEPILOGUE_H
