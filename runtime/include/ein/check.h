//===- check.h - Is a result close enough to the reference? -----*- C++ -*-===//
//
// docs/program-format.md: the metric is max|got - ref| / max(1, max|ref|), and
// a result passes when it is at most its element type's threshold (f32 1e-4,
// f16 2e-3, bf16 2e-2; f64 1e-10; integer types exactly). A NaN where the
// reference has none (or the reverse) fails.
//
//===----------------------------------------------------------------------===//

#ifndef EIN_CHECK_H
#define EIN_CHECK_H

#include "ein/npy.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ein {

inline double checkThreshold(DType type) {
  switch (type) {
  case DType::F64:
    return 1e-10;
  case DType::F32:
    return 1e-4;
  case DType::F16:
    return 2e-3;
  case DType::BF16:
    return 2e-2;
  default:
    return 0;
  }
}

/// The relative error of `got` against `ref` (same number of elements);
/// infinity when they disagree on which elements are NaN or infinite.
inline double maxRelativeError(const HostTensor &got, const HostTensor &ref) {
  double maxRef = 0, maxDiff = 0;
  for (size_t i = 0; i < ref.data.size(); ++i) {
    double r = ref.data[i], g = got.data[i];
    if (std::isfinite(r) != std::isfinite(g) || std::isnan(r) != std::isnan(g))
      return std::numeric_limits<double>::infinity();
    if (!std::isfinite(r)) {
      if (r != g && !std::isnan(r))
        return std::numeric_limits<double>::infinity();
      continue;
    }
    maxRef = std::max(maxRef, std::fabs(r));
    maxDiff = std::max(maxDiff, std::fabs(g - r));
  }
  return maxDiff / std::max(1.0, maxRef);
}

/// The first element where `got` is NaN or infinite and `ref` does not hold
/// the same (what --debug turns into an error: memory no step wrote reads
/// as NaN there), or -1.
inline int64_t firstUnexpectedNonFinite(const HostTensor &got,
                                        const HostTensor &ref) {
  for (size_t i = 0; i < got.data.size() && i < ref.data.size(); ++i) {
    double g = got.data[i], r = ref.data[i];
    if (!std::isfinite(g) && !(std::isnan(g) ? std::isnan(r) : g == r))
      return static_cast<int64_t>(i);
  }
  return -1;
}

} // namespace ein

#endif // EIN_CHECK_H
