//===- cudnn_graph.h - cuDNN's backend graph API, shared ---------*- C++
//-*-===//
//
// What the cuDNN steps (cudnn_attention.cpp, cudnn_conv.cpp) share: cuDNN 9
// loaded with dlopen on first use (never linked; $EIN_CUDNN names
// libcudnn.so.9 explicitly, library_search.h), one handle per device,
// backend descriptors owned and checked with errors that name the step, the
// descriptor and the attribute, the choice of an engine (heuristics mode A,
// then cuDNN's fallback list: the first whose execution plan finalizes),
// and a plan's execution on a stream (also under CUDA stream capture).
// EIN_CUDNN_LOG=1 prints each engine tried, and why it was refused.
//
// Loading: libcudnn.so.9 is a shim that dlopens its sub-libraries (the
// graph library, the engines, the heuristics) by soname when first used.
// Opened by full path, as from PyTorch's site-packages/nvidia/cudnn/lib, it
// still finds them through its RUNPATH $ORIGIN, but LD_LIBRARY_PATH comes
// first in that search, so another cuDNN there would be mixed in. So the
// sub-libraries are opened first, by full path, from the shim's own
// directory; the shim's dlopen by soname then returns those. They are
// opened RTLD_LOCAL, not exporting their symbols: the engines reach the
// graph library through their DT_NEEDED and the shim through its own
// handles, and global symbols could interpose on another cuDNN user in the
// process (PyTorch). The sub-libraries' RUNPATH also holds
// $ORIGIN/../../cu13/lib, where the pip wheels keep NVRTC, which the
// runtime-compiled engines load when they plan.
//
//===----------------------------------------------------------------------===//

#ifndef EIN_LIB_CUDA_CUDNN_GRAPH_H
#define EIN_LIB_CUDA_CUDNN_GRAPH_H

#include "../backend.h"

#include <cuda_runtime.h>
#include <cudnn_graph.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace ein::cuda {

/// EIN_CUDNN_LOG=1: engine selection, line by line, on stderr.
void cudnnLog(const std::string &line);

/// libcudnn.so.9's entry points.
struct Cudnn {
#define EIN_CUDNN_FUNCTION(name) decltype(&::name) name = nullptr;
#include "cudnn_functions.def"

  /// "9.19.0".
  std::string version;
  /// The sub-libraries that did not preload, and why; empty when all did.
  std::string preloadFailures;

  /// The status, cuDNN's own message on this thread's latest error (which
  /// attribute, which limit), and a hint where one helps.
  std::string explain(cudnnStatus_t status) const {
    std::string text = std::string(cudnnGetErrorString(status)) + " (" +
                       std::to_string(static_cast<int>(status)) + ")";
    char detail[4096] = "";
    cudnnGetLastErrorString(detail, sizeof detail);
    if (*detail)
      text += ": " + std::string(detail);
    if (status == CUDNN_STATUS_NOT_SUPPORTED_RUNTIME_PREREQUISITE_MISSING)
      text += " (runtime-compiled engines need NVRTC, libnvrtc.so.13: put "
              "its directory on LD_LIBRARY_PATH)";
    if ((status == CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED ||
         status == CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE) &&
        !preloadFailures.empty())
      text += " (" + preloadFailures + ")";
    return text;
  }
};

/// cuDNN, loaded on first use and kept for the process (the per-device
/// handles outlive every step); throws RuntimeError saying what is missing.
const Cudnn &cudnn();

/// One cuDNN handle per device, shared by every cuDNN step on it. The mutex
/// serialises the handle's users: one run's cudnnSetStream and
/// cudnnBackendExecute must not interleave with another's, and planning
/// uses the handle too.
struct DeviceHandle {
  cudnnHandle_t handle = nullptr;
  std::mutex mutex;
};

/// The handle of GPU `device` (the current one), created on first use.
/// Handles are never destroyed: cudnnDestroy at exit could run after the
/// CUDA runtime's own teardown.
DeviceHandle &deviceHandle(const Cudnn &api, int device);

/// An attribute and its name, for errors.
struct Attribute {
  cudnnBackendAttributeName_t name;
  const char *text;
};
#define EIN_ATTR(name)                                                         \
  Attribute { name, #name }

/// The cudnnBackendAttributeType_t of an attribute's C element type, so
/// that the element type passed always matches the one declared. The
/// variant pack's device pointers (void *, like a descriptor) are set apart,
/// by Descriptors::setPointers.
template <typename T> struct AttributeType;
template <> struct AttributeType<int64_t> {
  static constexpr cudnnBackendAttributeType_t value = CUDNN_TYPE_INT64;
};
template <> struct AttributeType<float> {
  static constexpr cudnnBackendAttributeType_t value = CUDNN_TYPE_FLOAT;
};
template <> struct AttributeType<bool> {
  static constexpr cudnnBackendAttributeType_t value = CUDNN_TYPE_BOOLEAN;
};
template <> struct AttributeType<cudnnDataType_t> {
  static constexpr cudnnBackendAttributeType_t value = CUDNN_TYPE_DATA_TYPE;
};
template <> struct AttributeType<cudnnPointwiseMode_t> {
  static constexpr cudnnBackendAttributeType_t value =
      CUDNN_TYPE_POINTWISE_MODE;
};
template <> struct AttributeType<cudnnReduceTensorOp_t> {
  static constexpr cudnnBackendAttributeType_t value =
      CUDNN_TYPE_REDUCTION_OPERATOR_TYPE;
};
template <> struct AttributeType<cudnnBackendHeurMode_t> {
  static constexpr cudnnBackendAttributeType_t value = CUDNN_TYPE_HEUR_MODE;
};
template <> struct AttributeType<cudnnBackendBehaviorNote_t> {
  static constexpr cudnnBackendAttributeType_t value = CUDNN_TYPE_BEHAVIOR_NOTE;
};
template <> struct AttributeType<cudnnConvolutionMode_t> {
  static constexpr cudnnBackendAttributeType_t value =
      CUDNN_TYPE_CONVOLUTION_MODE;
};
template <> struct AttributeType<cudnnHandle_t> {
  static constexpr cudnnBackendAttributeType_t value = CUDNN_TYPE_HANDLE;
};
template <> struct AttributeType<cudnnBackendDescriptor_t> {
  static constexpr cudnnBackendAttributeType_t value =
      CUDNN_TYPE_BACKEND_DESCRIPTOR;
};

/// Backend descriptors, each destroyed with this (a plan needs the graph,
/// the graph its operations, an operation its tensors); every failure names
/// the step, the descriptor, the attribute and the problem.
class Descriptors {
public:
  /// `problem` opens every error: "cuDNN attention for ...".
  Descriptors(const Cudnn &api, std::string problem)
      : api(api), problem(std::move(problem)) {}
  ~Descriptors() {
    for (auto it = owned.rbegin(); it != owned.rend(); ++it)
      api.cudnnBackendDestroyDescriptor(it->first);
  }
  Descriptors(const Descriptors &) = delete;
  Descriptors &operator=(const Descriptors &) = delete;

  cudnnBackendDescriptor_t create(cudnnBackendDescriptorType_t type,
                                  const std::string &what) {
    cudnnBackendDescriptor_t made = nullptr;
    check(api.cudnnBackendCreateDescriptor(type, &made), "creating " + what);
    owned.emplace_back(made, what);
    return made;
  }

  template <typename T>
  void set(cudnnBackendDescriptor_t d, Attribute attribute, const T *values,
           int64_t count = 1) {
    check(api.cudnnBackendSetAttribute(d, attribute.name,
                                       AttributeType<T>::value, count, values),
          "setting " + std::string(attribute.text) + " of " + what(d));
  }

  /// Sets device or host addresses (CUDNN_TYPE_VOID_PTR).
  void setPointers(cudnnBackendDescriptor_t d, Attribute attribute,
                   void *const *values, int64_t count) {
    check(api.cudnnBackendSetAttribute(d, attribute.name, CUDNN_TYPE_VOID_PTR,
                                       count, values),
          "setting " + std::string(attribute.text) + " of " + what(d));
  }

  /// Reads up to `capacity` values into `values` (for descriptors: ones
  /// created to receive them); returns how many the attribute has.
  template <typename T>
  int64_t get(cudnnBackendDescriptor_t d, Attribute attribute, T *values,
              int64_t capacity) {
    int64_t count = 0;
    check(api.cudnnBackendGetAttribute(d, attribute.name,
                                       AttributeType<T>::value, capacity,
                                       &count, values),
          "reading " + std::string(attribute.text) + " of " + what(d));
    return count;
  }

  void finalize(cudnnBackendDescriptor_t d) {
    check(api.cudnnBackendFinalize(d), "finalizing " + what(d));
  }

  void check(cudnnStatus_t status, const std::string &step) const {
    if (status != CUDNN_STATUS_SUCCESS)
      throw RuntimeError(problem + ": " + step +
                         " failed: " + api.explain(status));
  }

  const std::string &what(cudnnBackendDescriptor_t d) const {
    static const std::string unknown = "a descriptor";
    auto it = std::find_if(owned.begin(), owned.end(),
                           [&](const auto &o) { return o.first == d; });
    return it == owned.end() ? unknown : it->second;
  }

private:
  const Cudnn &api;
  const std::string problem;
  std::vector<std::pair<cudnnBackendDescriptor_t, std::string>> owned;
};

/// An execution plan and what it needs.
struct ChosenPlan {
  cudnnBackendDescriptor_t plan = nullptr;
  int64_t engine = -1;
  /// Rounded up to 256 bytes, so that callers can pack workspaces.
  size_t workspace = 0;
};

/// The finalized operation graph of `operations` on `device`'s handle;
/// `described` names the problem in the log.
cudnnBackendDescriptor_t
operationGraph(Descriptors &descriptors, DeviceHandle &device,
               const std::vector<cudnnBackendDescriptor_t> &operations,
               const std::string &described);

/// The first engine config, from heuristics mode A and then cuDNN's
/// fallback list (as cudnn-frontend's default), whose execution plan
/// finalizes; throws RuntimeError with every refusal where none does.
ChosenPlan choosePlan(const Cudnn &api, Descriptors &descriptors,
                      DeviceHandle &device, cudnnBackendDescriptor_t graph,
                      const std::string &described);

/// Runs `plan` on `stream` with the variant pack `uids` -> `pointers` and
/// `workspace`; `subject` ("cuDNN convolution for ...") opens errors. The
/// current device must be `planned` (a plan belongs to one device).
void executePlan(const Cudnn &api, DeviceHandle &device, int planned,
                 const std::string &subject, const ChosenPlan &plan,
                 const std::vector<int64_t> &uids,
                 const std::vector<void *> &pointers, void *workspace,
                 cudaStream_t stream);

} // namespace ein::cuda

#endif // EIN_LIB_CUDA_CUDNN_GRAPH_H
