//===- chip.cpp - The one chip table --------------------------------------===//

#include "ein/chip.h"

#include <cmath>
#include <cstddef>
#include <iterator>

namespace ein {

namespace {
#include "chip_kernel_tables.inc"

/// Where `x` falls on a grid of increasing sizes: the cell's lower index,
/// the position inside it in log space, and the factor past the last size.
struct Axis {
  size_t lower;
  double weight;
  double beyond;
};

template <size_t N> Axis locate(const int64_t (&grid)[N], double x) {
  static_assert(N >= 2, "a grid has at least two sizes");
  if (x <= double(grid[0]))
    return {0, 0, 1};
  if (x >= double(grid[N - 1]))
    return {N - 2, 1, x / double(grid[N - 1])};
  size_t i = 0;
  while (double(grid[i + 1]) < x)
    ++i;
  double w = std::log(x / double(grid[i])) /
             std::log(double(grid[i + 1]) / double(grid[i]));
  return {i, w, 1};
}

/// The causal kernel's time over half the unmasked one's at `heads` heads
/// of `length` queries and keys: the measured grid (between 1 and 2),
/// bilinear in log space, held at its edges.
double causalRatio(double heads, double length) {
  constexpr size_t n = std::size(kAttentionCausalLen);
  static_assert(std::size(kAttentionCausalRatio) ==
                std::size(kAttentionHeads) * n);
  Axis a = locate(kAttentionHeads, heads),
       b = locate(kAttentionCausalLen, length);
  double logRatio = 0;
  for (int da = 0; da < 2; ++da)
    for (int db = 0; db < 2; ++db) {
      double w =
          (da ? a.weight : 1 - a.weight) * (db ? b.weight : 1 - b.weight);
      if (w > 0)
        logRatio +=
            w *
            std::log(kAttentionCausalRatio[(a.lower + da) * n + b.lower + db]);
    }
  return std::exp(logRatio);
}

/// The log-space trilinear interpolation of `cube` (row-major over three
/// axes of sizes n1 x n2 x n3, in microseconds), in seconds.
double interpolate(const double *cube, size_t n2, size_t n3, Axis a, Axis b,
                   Axis c) {
  double logTime = 0;
  for (int da = 0; da < 2; ++da)
    for (int db = 0; db < 2; ++db)
      for (int dc = 0; dc < 2; ++dc) {
        double w = (da ? a.weight : 1 - a.weight) *
                   (db ? b.weight : 1 - b.weight) *
                   (dc ? c.weight : 1 - c.weight);
        if (w == 0)
          continue;
        size_t i = ((a.lower + da) * n2 + b.lower + db) * n3 + c.lower + dc;
        logTime += w * std::log(cube[i]);
      }
  return std::exp(logTime) * a.beyond * b.beyond * c.beyond * 1e-6;
}

// Measured on the H200 test machines (WORKLOADS.md "Physical limits",
// docs/cuda-runtime.md, bench/results/2026-11-30-ragged-gemm-h200x2.md).
constexpr ChipInfo kH200 = {
    /*chip=*/"sm_90",
    /*measuredOn=*/"H200",
    /*gemmFlopsPerSecond=*/750e12,
    /*raggedGemmFlopsPerSecond=*/145e12,
    /*alignedGemmFlopsPerSecond=*/740e12,
    /*padCopyBytesPerSecond=*/3.5e12,
    /*memoryBytesPerSecond=*/4.24e12,
    /*graphLaunchSeconds=*/0.8e-6,
    /*streamLaunchSeconds=*/3e-6,
    /*linkBytesPerSecond=*/395e9,
    /*graphEdgeSeconds=*/5e-6,
    /*streamCopySeconds=*/8e-6,
    /*copyKernelBelowBytes=*/int64_t(64) << 20,
};
} // namespace

const ChipInfo &chipInfo(const std::string &) { return kH200; }

double bytesPerFlop(const ChipInfo &chip, int64_t devices) {
  return devices * chip.linkBytesPerSecond / chip.gemmFlopsPerSecond;
}

// One chip: its grids are the ones included above.
double gemmSeconds(const ChipInfo &, double m, double n, double k,
                   double batch) {
  constexpr size_t n2 = std::size(kGemmN), n3 = std::size(kGemmK);
  static_assert(std::size(kGemmMicros) == std::size(kGemmM) * n2 * n3);
  double floor = kGemmMicros[0] * 1e-6;
  double one = interpolate(kGemmMicros, n2, n3, locate(kGemmM, m),
                           locate(kGemmN, n), locate(kGemmK, k));
  return floor + batch * (one - floor);
}

double attentionSeconds(const ChipInfo &, double heads, double queries,
                        double keys, double flopsPerPoint, double share) {
  constexpr size_t n2 = std::size(kAttentionQ), n3 = std::size(kAttentionK);
  static_assert(std::size(kAttentionMicros) ==
                std::size(kAttentionHeads) * n2 * n3);
  double floor = kAttentionMicros[0] * 1e-6;
  double full =
      interpolate(kAttentionMicros, n2, n3, locate(kAttentionHeads, heads),
                  locate(kAttentionQ, queries), locate(kAttentionK, keys));
  // A masked block does `share` of the pairs, but cuDNN's causal kernel
  // does them slower than its unmasked one: up to 2x (as long as the whole
  // square) on few heads and short sequences, near 1x on many heads and
  // long ones (bench/kernel_tables.py measure-causal).
  double slower = share < 1 ? causalRatio(heads, std::sqrt(queries * keys)) : 1;
  return floor + (full - floor) * share * slower * flopsPerPoint /
                     double(4 * kAttentionHeadDim);
}

} // namespace ein
