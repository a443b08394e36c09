//===- ApproxMath.cpp - f32 math at the precision 16-bit results keep -----===//
//
// A kernel whose every result is f16 or bf16 computes in f32 and rounds to
// 11 or 8 significant bits at the store. IEEE division and libdevice's
// accurate exp and log cost it far more instructions than the 2^-22 or so
// relative error it saves (an elementwise SiLU-gate, 2 loads and a store an
// element, ran compute-bound at half the speed of Inductor's kernel for the
// same map). Those kernels' f32 divisions and exponentials and logarithms
// are marked `afn`, which the NVVM lowering turns into div.approx.f32 and
// libdevice's __nv_fast_* functions. Sines, cosines, tangents and powers
// keep the accurate functions: the fast ones lose their relative precision
// for large arguments (a rotary angle of 10^5 radians), which a result's
// rounding does not hide.
//
//===----------------------------------------------------------------------===//

#include "Einsummable/Conversion/EinToCUDA/EinToCUDA.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;

namespace {

/// Whether every argument the kernel writes is a 16-bit float (and it
/// writes one at all).
bool writesOnlyHalves(const ::ein::KernelSignature &signature) {
  bool writes = false;
  for (const ::ein::SignatureArg &arg : signature.args) {
    if (arg.access == ::ein::Access::Read)
      continue;
    if (arg.dtype != ::ein::DType::F16 && arg.dtype != ::ein::DType::BF16)
      return false;
    writes = true;
  }
  return writes;
}

bool isF32(Type type) { return getElementTypeOrSelf(type).isF32(); }

} // namespace

void mlir::ein::approximateHalfResultMath(
    gpu::GPUModuleOp device, const ::ein::KernelSignatures &signatures) {
  for (auto fn : device.getOps<gpu::GPUFuncOp>()) {
    auto signature = signatures.find(fn.getName().str());
    if (!fn.isKernel() || signature == signatures.end() ||
        !writesOnlyHalves(signature->second))
      continue;
    fn.walk([&](Operation *op) {
      if (!isa<arith::DivFOp, math::ExpOp, math::Exp2Op, math::LogOp,
               math::Log2Op, math::Log10Op>(op) ||
          !isF32(op->getResult(0).getType()))
        return;
      auto fastmath = cast<arith::ArithFastMathInterface>(op);
      arith::FastMathFlags flags = fastmath.getFastMathFlagsAttr().getValue();
      op->setAttr(fastmath.getFastMathAttrName(),
                  arith::FastMathFlagsAttr::get(
                      op->getContext(), flags | arith::FastMathFlags::afn));
    });
  }
}
