//===- target.cpp - What a bundle is compiled for -------------------------===//

#include "ein/target.h"

namespace ein {

const char *backendName(Backend backend) {
  switch (backend) {
  case Backend::Cpu:
    return "cpu";
  case Backend::Cuda:
    return "cuda";
  }
  return "?";
}

bool parseBackend(const std::string &name, Backend &backend,
                  std::string &error) {
  for (Backend b : {Backend::Cpu, Backend::Cuda})
    if (name == backendName(b)) {
      backend = b;
      return true;
    }
  error = "expected \"cpu\" or \"cuda\", got '" + name + "'";
  return false;
}

bool checkDevices(int64_t devices, std::string &error) {
  if (devices >= kMinDevices && devices <= kMaxDevices)
    return true;
  error = "must be " + std::to_string(kMinDevices) + " to " +
          std::to_string(kMaxDevices) + ", got " + std::to_string(devices);
  return false;
}

static bool isSmChip(const std::string &chip) {
  return chip.size() > 3 && chip.compare(0, 3, "sm_") == 0 &&
         chip.find_first_not_of("0123456789", 3) == std::string::npos &&
         chip.find_first_not_of('0', 3) != std::string::npos;
}

bool checkChipName(const std::string &chip, std::string &error) {
  if (chip == kHostChip || isSmChip(chip))
    return true;
  error =
      "unknown chip '" + chip + "'; expected 'sm_<N>' (e.g. sm_90) or 'host'";
  return false;
}

bool checkChipForBackend(Backend backend, const std::string &chip,
                         std::string &error) {
  if (backend == Backend::Cpu) {
    if (chip == kHostChip)
      return true;
    error = "a cpu bundle's chip is \"host\", got '" + chip + "'";
    return false;
  }
  if (isSmChip(chip))
    return true;
  error = "a cuda bundle's chip is sm_NN, got '" + chip + "'";
  return false;
}

std::string bundleChip(Backend backend, const std::string &chip) {
  return backend == Backend::Cuda ? chip : kHostChip;
}

} // namespace ein
