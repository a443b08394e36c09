//===- gemm_pad.h - When a gemm runs on zero-padded copies ------*- C++ -*-===//
//
// cuBLASLt's fast Hopper kernels need the contiguous dimension of every
// operand of a 16-bit gemm to be a multiple of 8 elements. Measured on the
// H200s (bench/results/2026-11-30-ragged-gemm-h200x2.md): 8192^3 bf16 runs
// at about 775 TFLOP/s, 8191^3 at 150, a ragged inner or column dimension
// alone at 140-145, while 16383 rows (a dimension no operand holds
// contiguously) run at full speed; padding only the leading dimensions
// does not help. Such a gemm can instead run on copies zero-padded to the
// next multiple of 8: zero columns of the inner dimension add nothing,
// extra columns of the result are dropped. This decides when the copies pay
// for themselves. Plain C++ without CUDA, so the CPU tests check it.
//
//===----------------------------------------------------------------------===//

#ifndef EIN_LIB_CUDA_GEMM_PAD_H
#define EIN_LIB_CUDA_GEMM_PAD_H

#include "ein/chip.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace ein::cuda {

/// The multiple every dimension of a 16-bit gemm is padded to.
constexpr int64_t kGemmGranule = 8;

/// A gemm per batch: c[rows, cols] = op(a)[rows, inner] op(b)[inner, cols],
/// each operand stored row-major (a as [inner, rows] when transposed, b as
/// [cols, inner]).
struct GemmDims {
  int64_t batch = 1, rows = 0, cols = 0, inner = 0;
  int64_t inputBytes = 2; // bytes of an element of a and b
  int64_t outputBytes = 2;
  bool transposeA = false, transposeB = false;
};

/// Whether to pad: "auto" (where the model below says the copies pay),
/// "always" (any ragged 16-bit gemm), "never".
enum class GemmPadMode { Auto, Always, Never };

inline int64_t roundUpTo(int64_t n, int64_t multiple) {
  return (n + multiple - 1) / multiple * multiple;
}

/// The dimensions padded (those some operand holds contiguously rounded up
/// to kGemmGranule), or `dims` itself where the gemm runs as it is: already
/// aligned, not a 16-bit gemm (the fast kernels in question are the
/// tensor-core ones), or, in auto mode, a gemm the estimate says is no
/// faster padded.
///
/// The estimate, from the chip table's measurements: a ragged gemm runs at
/// about 145 TFLOP/s and an aligned one at about 740, either bounded below by
/// its bytes at 3.5 TB/s; padding adds a copy of each padded operand (read and
/// written) and three launches of about 3 us. Padding is kept where it saves
/// at least a tenth: a skinny gemm bound by memory gains nothing from it.
inline GemmDims padGemm(const GemmDims &dims, GemmPadMode mode) {
  if (mode == GemmPadMode::Never || dims.inputBytes != 2)
    return dims;
  GemmDims padded = dims;
  // c holds its columns contiguously; a its inner dimension, or its rows
  // when transposed; b its columns, or its inner dimension when transposed.
  padded.cols = roundUpTo(dims.cols, kGemmGranule);
  if (dims.transposeA)
    padded.rows = roundUpTo(dims.rows, kGemmGranule);
  if (!dims.transposeA || dims.transposeB)
    padded.inner = roundUpTo(dims.inner, kGemmGranule);
  bool ragged = padded.rows != dims.rows || padded.cols != dims.cols ||
                padded.inner != dims.inner;
  if (!ragged)
    return dims;
  if (mode == GemmPadMode::Always)
    return padded;
  auto bytes = [](const GemmDims &g) {
    return double(g.batch) *
           (double(g.inputBytes) * (g.rows * g.inner + g.inner * g.cols) +
            double(g.outputBytes) * g.rows * g.cols);
  };
  const ChipInfo &chip = chipInfo(kReferenceChip);
  const double bandwidth = chip.padCopyBytesPerSecond;
  double flops = 2.0 * dims.batch * dims.rows * dims.cols * dims.inner;
  double asIs =
      std::max(flops / chip.raggedGemmFlopsPerSecond, bytes(dims) / bandwidth);
  // Each copy reads the operand and writes its padded form.
  double copies =
      (bytes(dims) + bytes(padded)) / bandwidth + 3 * chip.streamLaunchSeconds;
  double withPads = std::max(flops / chip.alignedGemmFlopsPerSecond,
                             bytes(padded) / bandwidth) +
                    copies;
  return withPads < 0.9 * asIs ? padded : dims;
}

/// `shape` (an operand of the gemm, its last two dimensions the matrix) with
/// its matrix dimensions replaced by `outer` and `innermost`.
inline std::vector<int64_t> withMatrix(std::vector<int64_t> shape,
                                       int64_t outer, int64_t innermost) {
  shape[shape.size() - 2] = outer;
  shape[shape.size() - 1] = innermost;
  return shape;
}

} // namespace ein::cuda

#endif // EIN_LIB_CUDA_GEMM_PAD_H
