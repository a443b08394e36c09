//===- target.h - What a bundle is compiled for ------------------*- C++
//-*-===//
//
// The one description of a compile target that the compiler (ein-compile,
// #ein.target, ein-write-bundle) and the runtime (manifest.json) share: the
// backend, the chip, the device count. Every limit and every spelling lives
// here once; both sides validate through these functions, so they cannot
// disagree.
//
//===----------------------------------------------------------------------===//

#ifndef EIN_TARGET_H
#define EIN_TARGET_H

#include <cstdint>
#include <string>

namespace ein {

/// Where a bundle's kernels run: N virtual GPUs on the host, or CUDA GPUs.
enum class Backend { Cpu, Cuda };

/// "cpu" or "cuda".
const char *backendName(Backend backend);

/// Parses "cpu" or "cuda" (the only place these spellings are compared).
/// Returns false with `error` saying what was expected.
bool parseBackend(const std::string &name, Backend &backend,
                  std::string &error);

/// A bundle and a plan cover 1 to kMaxDevices devices.
constexpr int64_t kMinDevices = 1;
constexpr int64_t kMaxDevices = 64;

/// Whether `devices` is a device count a plan and a bundle may have;
/// otherwise false with `error` ("must be 1 to 64, got 0").
bool checkDevices(int64_t devices, std::string &error);

/// The chip of a cpu bundle.
constexpr const char *kHostChip = "host";

/// Whether `chip` names a chip at all: "host" or "sm_<N>" (e.g. sm_90).
bool checkChipName(const std::string &chip, std::string &error);

/// Whether `chip` is what a bundle for `backend` runs on: "host" for cpu,
/// "sm_<N>" for cuda.
bool checkChipForBackend(Backend backend, const std::string &chip,
                         std::string &error);

/// The chip a bundle for `backend` records: `chip` for cuda, "host" for cpu
/// (whatever chip the plan was costed for).
std::string bundleChip(Backend backend, const std::string &chip);

} // namespace ein

#endif // EIN_TARGET_H
