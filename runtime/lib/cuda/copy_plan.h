//===- copy_plan.h - How the CUDA backend moves a region --------*- C++ -*-===//
//
// A transfer copies a sub-rectangle of one dense buffer into another. The
// CUDA backend does it with one contiguous copy-engine call, one 2-D call, or
// its copy kernel; this plans which, with the kernel moving the widest unit
// (up to 16 bytes) the addresses allow. Plain C++ without CUDA, so the CPU
// tests check every plan against copyRegion.
//
//===----------------------------------------------------------------------===//

#ifndef EIN_LIB_CUDA_COPY_PLAN_H
#define EIN_LIB_CUDA_COPY_PLAN_H

#include "ein/region.h"
#include "kernels_abi.h"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace ein::cuda {

struct CopyPlan {
  enum Kind { Contiguous, TwoD, Kernel } kind = Contiguous;
  const unsigned char *src = nullptr;
  unsigned char *dst = nullptr;
  int64_t bytes = 0;                  // Contiguous; TwoD: of a row
  int64_t rows = 0;                   // TwoD
  int64_t srcPitch = 0, dstPitch = 0; // TwoD
  CopyParams kernel = {};             // Kernel
};

/// Plans copying `extent` at `srcOffset` of a `srcShape` tensor at `src` to
/// `dstOffset` of a `dstShape` tensor at `dst` (elements of `width` bytes).
/// `useKernel` forces the kernel. Throws std::invalid_argument beyond the
/// kernel's rank.
inline CopyPlan
planCopy(const unsigned char *src, const std::vector<int64_t> &srcShape,
         const std::vector<int64_t> &srcOffset, unsigned char *dst,
         const std::vector<int64_t> &dstShape,
         const std::vector<int64_t> &dstOffset,
         const std::vector<int64_t> &extent, int64_t width, bool useKernel) {
  size_t rank = extent.size();
  std::vector<int64_t> srcStride = rowMajorStrides(srcShape, width),
                       dstStride = rowMajorStrides(dstShape, width);
  CopyPlan plan;
  plan.src = src;
  plan.dst = dst;
  for (size_t d = 0; d < rank; ++d) {
    plan.src += srcOffset[d] * srcStride[d];
    plan.dst += dstOffset[d] * dstStride[d];
  }
  // The contiguous run: the trailing dimensions both tensors hold whole, and
  // the next one.
  int64_t run = width;
  int inner = int(rank) - 1;
  while (inner >= 0) {
    run *= extent[inner];
    bool whole =
        extent[inner] == srcShape[inner] && extent[inner] == dstShape[inner];
    --inner;
    if (!whole)
      break;
  }
  std::vector<int> strided; // outer dimensions of more than one element
  for (int d = 0; d <= inner; ++d)
    if (extent[d] > 1)
      strided.push_back(d);
  if (strided.empty() && !useKernel) {
    plan.kind = CopyPlan::Contiguous;
    plan.bytes = run;
    return plan;
  }
  if (strided.size() == 1 && !useKernel) {
    plan.kind = CopyPlan::TwoD;
    plan.bytes = run;
    plan.rows = extent[strided[0]];
    plan.srcPitch = srcStride[strided[0]];
    plan.dstPitch = dstStride[strided[0]];
    return plan;
  }
  if (strided.size() + 1 > size_t(kMaxCopyRank))
    throw std::invalid_argument("the copy kernel handles " +
                                std::to_string(kMaxCopyRank - 1) +
                                " strided dimensions at most, this copy has " +
                                std::to_string(strided.size()));
  // The unit: the widest that divides the run, both addresses and every
  // stride.
  int64_t unit = 16;
  auto fits = [&](int64_t u) {
    if (run % u || reinterpret_cast<uintptr_t>(plan.src) % u ||
        reinterpret_cast<uintptr_t>(plan.dst) % u)
      return false;
    for (int d : strided)
      if (srcStride[d] % u || dstStride[d] % u)
        return false;
    return true;
  };
  while (unit > 1 && !fits(unit))
    unit /= 2;
  CopyParams &p = plan.kernel;
  plan.kind = CopyPlan::Kernel;
  p.src = plan.src;
  p.dst = plan.dst;
  p.width = int32_t(unit);
  p.rank = int32_t(strided.size() + 1);
  for (size_t k = 0; k < strided.size(); ++k) {
    p.extent[k] = extent[strided[k]];
    p.srcStride[k] = srcStride[strided[k]] / unit;
    p.dstStride[k] = dstStride[strided[k]] / unit;
  }
  // The run itself: consecutive units.
  p.extent[strided.size()] = run / unit;
  p.srcStride[strided.size()] = 1;
  p.dstStride[strided.size()] = 1;
  p.count = 1;
  for (int k = 0; k < p.rank; ++k)
    p.count *= p.extent[k];
  return plan;
}

} // namespace ein::cuda

#endif // EIN_LIB_CUDA_COPY_PLAN_H
