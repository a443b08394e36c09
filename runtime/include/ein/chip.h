//===- chip.h - What a GPU can do: the one chip table -----------*- C++ -*-===//
//
// Every machine number the compiler and the runtime rely on (FLOP rates,
// memory and link bandwidths, latencies, tuning thresholds) lives in one
// table, read by the planner's proxy, the link simulator, the exchange
// synthesis, the topology presets and the CUDA backend alike. No bandwidth
// or FLOP-rate literal stands anywhere else.
//
//===----------------------------------------------------------------------===//

#ifndef EIN_CHIP_H
#define EIN_CHIP_H

#include <cstdint>
#include <string>

namespace ein {

struct ChipInfo {
  /// The chip ("sm_90") and the GPU the numbers were measured on.
  const char *chip;
  const char *measuredOn;
  /// Dense bf16 gemm rate the planner and the simulator assume.
  double gemmFlopsPerSecond;
  /// The CUDA backend's ragged-gemm model (runtime/lib/cuda/gemm_pad.h): a
  /// bf16 gemm with a dimension that is not a multiple of 8, and an aligned
  /// one, through cuBLASLt; the rate its operand copies run at.
  double raggedGemmFlopsPerSecond;
  double alignedGemmFlopsPerSecond;
  double padCopyBytesPerSecond;
  /// HBM, bytes read plus written per second.
  double memoryBytesPerSecond;
  /// One node of a replayed CUDA graph, and one launch through the stream
  /// API.
  double graphLaunchSeconds;
  double streamLaunchSeconds;
  /// One GPU's NVLink, one direction, through the copy engine.
  double linkBytesPerSecond;
  /// A dependency between two GPUs inside one CUDA graph, and a small copy
  /// through the stream API.
  double graphEdgeSeconds;
  double streamCopySeconds;
  /// Below this many bytes a transfer region runs on the CUDA backend's
  /// copy kernel (batched regions: one launch for all of them); larger ones
  /// go by the copy engine, one call each (the two tie at 64 MiB). The
  /// compiler batches only regions under it.
  int64_t copyKernelBelowBytes;
};

/// The chip the planner costs plans for unless a target names another.
constexpr const char *kReferenceChip = "sm_90";

/// The numbers for `chip` ("sm_90", "host", ...). Only the H200 (sm_90) has
/// been measured: every chip is costed with its numbers until another row
/// is measured (docs/architecture.md).
const ChipInfo &chipInfo(const std::string &chip);

/// Bytes of communication one FLOP on the busiest GPU is worth to the
/// planner's proxy on `devices` GPUs of `chip`: the aggregate link bandwidth
/// (every GPU sending at once) over one GPU's gemm rate.
double bytesPerFlop(const ChipInfo &chip, int64_t devices);

/// Seconds one launch of `batch` bf16 gemms (m x k by k x n products)
/// takes on `chip`: one gemm's time interpolated in log space from the
/// chip's measured grid (runtime/lib/chip_kernel_tables.inc,
/// bench/kernel_tables.py), the grid's launch-bound floor paid once and the
/// time above it `batch` times. Below the grid's smallest size a dimension
/// costs as that size; above its largest the time grows in proportion.
double gemmSeconds(const ChipInfo &chip, double m, double n, double k,
                   double batch = 1);

/// Seconds one fused attention over `heads` query heads of `queries` by
/// `keys` positions takes on `chip`, doing `flopsPerPoint` operations per
/// (query, key) pair (4 x the head dim) on the `share` of the pairs a
/// causal mask leaves: interpolated as gemmSeconds from the chip's
/// non-causal grid (measured at head dim 128), the time above its floor
/// scaled by the head dim and the share, and a masked block (share < 1) by
/// how much slower the causal kernel does its pairs (a second measured
/// grid, by heads and length: 1x to 2x).
double attentionSeconds(const ChipInfo &chip, double heads, double queries,
                        double keys, double flopsPerPoint, double share = 1);

} // namespace ein

#endif // EIN_CHIP_H
