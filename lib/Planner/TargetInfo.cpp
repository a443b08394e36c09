//===- TargetInfo.cpp - What a target's kernels can run -------------------===//

#include "Einsummable/Planner/TargetInfo.h"

namespace ein::planner {

namespace {
class CpuTargetInfo : public TargetInfo {
public:
  std::string name() const override { return "cpu"; }
  bool canCutAttentionKeys() const override { return true; }
};

class CudaTargetInfo : public TargetInfo {
public:
  explicit CudaTargetInfo(std::string chip) : chip(std::move(chip)) {}
  std::string name() const override { return "cuda " + chip; }
  bool canCutAttentionKeys() const override { return false; }

private:
  std::string chip;
};
} // namespace

std::unique_ptr<TargetInfo> getTargetInfo(const std::string &chip) {
  if (chip == "host")
    return std::make_unique<CpuTargetInfo>();
  return std::make_unique<CudaTargetInfo>(chip);
}

} // namespace ein::planner
