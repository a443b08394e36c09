//===- chip.cpp - The one chip table --------------------------------------===//

#include "ein/chip.h"

namespace ein {

namespace {
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

} // namespace ein
