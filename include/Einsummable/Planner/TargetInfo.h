//===- TargetInfo.h - What a target's kernels can run -----------*- C++ -*-===//
//
// The planner asks the target which cuts its kernels support, so one search
// serves every backend (as Triton's TargetInfo serves its GPU backends).
//
//===----------------------------------------------------------------------===//

#ifndef EINSUMMABLE_PLANNER_TARGETINFO_H
#define EINSUMMABLE_PLANNER_TARGETINFO_H

#include <memory>
#include <string>

namespace ein::planner {

class TargetInfo {
public:
  virtual ~TargetInfo() = default;
  virtual std::string name() const = 0;
  /// Whether attention may be cut along its keys: the kernel must return
  /// the log-sum-exp and the target must run the online-softmax combine.
  virtual bool canCutAttentionKeys() const = 0;
};

/// The target for a chip name of #ein.target: `host` is the CPU target,
/// which runs every cut; `sm_<N>` is CUDA, whose attention kernel has no
/// key-cut combine yet.
std::unique_ptr<TargetInfo> getTargetInfo(const std::string &chip);

} // namespace ein::planner

#endif // EINSUMMABLE_PLANNER_TARGETINFO_H
