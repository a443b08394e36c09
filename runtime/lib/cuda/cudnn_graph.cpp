//===- cudnn_graph.cpp - cuDNN's backend graph API, shared ----------------===//

#include "cudnn_graph.h"

#include "library_search.h"

#include <dlfcn.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>

namespace ein::cuda {
namespace {

std::string dlError() {
  const char *error = dlerror();
  return error ? error : "unknown dlopen error";
}

/// What libcudnn.so.9 loads by soname, the graph library first: the others
/// need it.
static constexpr const char *kSubLibraries[] = {
    "libcudnn_graph.so.9", "libcudnn_engines_precompiled.so.9",
    "libcudnn_engines_runtime_compiled.so.9", "libcudnn_heuristic.so.9"};

} // namespace

void cudnnLog(const std::string &line) {
  static const bool enabled = [] {
    const char *value = std::getenv("EIN_CUDNN_LOG");
    return value && std::string(value) == "1";
  }();
  if (enabled)
    std::fprintf(stderr, "[ein cudnn] %s\n", line.c_str());
}

const Cudnn &cudnn() {
  static std::mutex mutex;
  static const Cudnn *loaded = nullptr;
  std::lock_guard<std::mutex> lock(mutex);
  if (loaded)
    return *loaded;
  LoadedLibrary shim = openLibrary(
      "EIN_CUDNN", {"libcudnn.so.9"}, "libcudnn.so",
      "cuDNN 9 (libcudnn.so.9), which cuDNN attention and convolution steps "
      "need,");
  char origin[PATH_MAX] = "";
  if (dlinfo(shim.handle, RTLD_DI_ORIGIN, origin) != 0)
    throw RuntimeError("cannot tell which directory '" + shim.path +
                       "' was loaded from: " + dlError());
  auto api = std::make_unique<Cudnn>();
  // Before the shim loads anything itself; see the file comment.
  for (const char *file : kSubLibraries) {
    std::string path = std::string(origin) + "/" + file;
    if (dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL))
      continue;
    std::string why = dlError();
    if (file == kSubLibraries[0])
      throw RuntimeError("cuDNN's graph library, next to '" + shim.path +
                         "', did not load: " + why);
    api->preloadFailures +=
        (api->preloadFailures.empty() ? "" : "; ") + std::string(why);
  }
#define EIN_CUDNN_FUNCTION(name)                                               \
  api->name = reinterpret_cast<decltype(api->name)>(                           \
      librarySymbol(shim, #name, "cuDNN 9"));
#include "cudnn_functions.def"
  size_t version = api->cudnnGetVersion();
  api->version = std::to_string(version / 10000) + "." +
                 std::to_string(version % 10000 / 100) + "." +
                 std::to_string(version % 100);
  // The mask fills with -inf, which cudnn-frontend only does from 9.10 on
  // (older attention engines want the lowest float), and 9.10.0 and 9.10.1
  // have known attention bugs.
  if (version / 10000 != 9 || version < 91002)
    throw RuntimeError("'" + shim.path + "' is cuDNN " + api->version +
                       "; ein's cuDNN steps need 9.10.2 or a later 9.x");
  if (cudnnStatus_t status = api->cudnnGraphVersionCheck();
      status != CUDNN_STATUS_SUCCESS)
    throw RuntimeError(
        "cuDNN " + api->version + " in " + origin +
        ": its sub-libraries do not match: " + api->explain(status));
  cudnnLog("loaded " + shim.path + ": cuDNN " + api->version +
           ", sub-libraries from " + origin +
           (api->preloadFailures.empty()
                ? ""
                : " (did not preload: " + api->preloadFailures + ")"));
  loaded = api.release();
  return *loaded;
}

DeviceHandle &deviceHandle(const Cudnn &api, int device) {
  static std::mutex mutex;
  static auto *handles = new std::map<int, std::unique_ptr<DeviceHandle>>();
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<DeviceHandle> &slot = (*handles)[device];
  if (!slot) {
    auto made = std::make_unique<DeviceHandle>();
    if (cudnnStatus_t status = api.cudnnCreate(&made->handle);
        status != CUDNN_STATUS_SUCCESS)
      throw RuntimeError("cudnnCreate on GPU " + std::to_string(device) +
                         " failed: " + api.explain(status));
    slot = std::move(made);
  }
  return *slot;
}

namespace {

/// The engine's global index, and " (runtime-compiled)" when it is.
std::pair<int64_t, std::string> engineOf(Descriptors &descriptors,
                                         cudnnBackendDescriptor_t config) {
  cudnnBackendDescriptor_t engineDesc =
      descriptors.create(CUDNN_BACKEND_ENGINE_DESCRIPTOR, "an engine");
  descriptors.get(config, EIN_ATTR(CUDNN_ATTR_ENGINECFG_ENGINE), &engineDesc,
                  1);
  int64_t index = -1;
  descriptors.get(engineDesc, EIN_ATTR(CUDNN_ATTR_ENGINE_GLOBAL_INDEX), &index,
                  1);
  cudnnBackendBehaviorNote_t notes[CUDNN_BEHAVIOR_NOTE_TYPE_COUNT];
  int64_t count =
      descriptors.get(engineDesc, EIN_ATTR(CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE),
                      notes, CUDNN_BEHAVIOR_NOTE_TYPE_COUNT);
  cudnnBackendBehaviorNote_t *end =
      notes + std::min<int64_t>(count, CUDNN_BEHAVIOR_NOTE_TYPE_COUNT);
  bool compiled =
      std::find(notes, end, CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION) != end;
  return {index, compiled ? " (runtime-compiled)" : ""};
}

} // namespace

ChosenPlan choosePlan(const Cudnn &api, Descriptors &descriptors,
                      DeviceHandle &device, cudnnBackendDescriptor_t graph,
                      const std::string &described) {
  std::string refusals;
  const std::pair<cudnnBackendHeurMode_t, std::string> sources[] = {
      {CUDNN_HEUR_MODE_A, "heuristics mode A"},
      {CUDNN_HEUR_MODE_FALLBACK, "the fallback list"}};
  for (const auto &[mode, source] : sources) {
    cudnnBackendDescriptor_t heuristics =
        descriptors.create(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, source);
    descriptors.set(heuristics, EIN_ATTR(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH),
                    &graph);
    descriptors.set(heuristics, EIN_ATTR(CUDNN_ATTR_ENGINEHEUR_MODE), &mode);
    if (cudnnStatus_t status = api.cudnnBackendFinalize(heuristics);
        status != CUDNN_STATUS_SUCCESS) {
      std::string why = source + " failed: " + api.explain(status);
      cudnnLog(described + ": " + why);
      refusals += "; " + why;
      continue;
    }
    int64_t offered = descriptors.get<cudnnBackendDescriptor_t>(
        heuristics, EIN_ATTR(CUDNN_ATTR_ENGINEHEUR_RESULTS), nullptr, 0);
    std::vector<cudnnBackendDescriptor_t> configs;
    for (int64_t i = 0; i < offered; ++i)
      configs.push_back(
          descriptors.create(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR,
                             source + "'s config " + std::to_string(i)));
    offered = std::min<int64_t>(
        offered,
        descriptors.get(heuristics, EIN_ATTR(CUDNN_ATTR_ENGINEHEUR_RESULTS),
                        configs.data(), offered));
    cudnnLog(described + ": " + source + " offers " + std::to_string(offered) +
             " engine configs");
    if (!offered)
      refusals += "; " + source + " offers no engine";
    for (int64_t i = 0; i < offered; ++i) {
      auto [index, traits] = engineOf(descriptors, configs[i]);
      std::string what = "engine " + std::to_string(index) + traits;
      cudnnBackendDescriptor_t plan =
          descriptors.create(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR,
                             "the execution plan for " + what);
      descriptors.set(plan, EIN_ATTR(CUDNN_ATTR_EXECUTION_PLAN_HANDLE),
                      &device.handle);
      descriptors.set(plan, EIN_ATTR(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG),
                      &configs[i]);
      if (cudnnStatus_t status = api.cudnnBackendFinalize(plan);
          status != CUDNN_STATUS_SUCCESS) {
        std::string why = what + " from " + source +
                          " did not finalize: " + api.explain(status);
        cudnnLog(described + ": " + why);
        refusals += "; " + why;
        continue;
      }
      int64_t bytes = 0;
      descriptors.get(plan, EIN_ATTR(CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE),
                      &bytes, 1);
      ChosenPlan chosen;
      chosen.plan = plan;
      chosen.engine = index;
      // Rounded up, so that callers can pack workspaces back to back.
      chosen.workspace = (static_cast<size_t>(bytes) + 255) / 256 * 256;
      cudnnLog(described + ": " + what + " from " + source +
               " finalized; workspace " + std::to_string(bytes) + " bytes");
      return chosen;
    }
  }
  throw RuntimeError("no cuDNN " + api.version + " engine runs " + described +
                     refusals +
                     (api.preloadFailures.empty()
                          ? ""
                          : "; did not preload: " + api.preloadFailures));
}

cudnnBackendDescriptor_t
operationGraph(Descriptors &descriptors, DeviceHandle &device,
               const std::vector<cudnnBackendDescriptor_t> &operations,
               const std::string &described) {
  std::string ops;
  for (cudnnBackendDescriptor_t op : operations)
    ops += (ops.empty() ? "" : ", ") + descriptors.what(op);
  cudnnLog(described + ": graph of " + ops);
  cudnnBackendDescriptor_t graph = descriptors.create(
      CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, "the operation graph");
  descriptors.set(graph, EIN_ATTR(CUDNN_ATTR_OPERATIONGRAPH_OPS),
                  operations.data(), static_cast<int64_t>(operations.size()));
  descriptors.set(graph, EIN_ATTR(CUDNN_ATTR_OPERATIONGRAPH_HANDLE),
                  &device.handle);
  descriptors.finalize(graph);
  return graph;
}

void executePlan(const Cudnn &api, DeviceHandle &device, int planned,
                 const std::string &subject, const ChosenPlan &plan,
                 const std::vector<int64_t> &uids,
                 const std::vector<void *> &pointers, void *workspace,
                 cudaStream_t stream) {
  int current = -1;
  if (cudaError_t status = cudaGetDevice(&current); status != cudaSuccess)
    throw RuntimeError(subject +
                       ": cudaGetDevice failed: " + cudaGetErrorString(status));
  if (current != planned)
    throw RuntimeError(subject + " was planned on GPU " +
                       std::to_string(planned) + " but runs with GPU " +
                       std::to_string(current) + " current");
  std::lock_guard<std::mutex> lock(device.mutex);
  Descriptors call(api, subject);
  call.check(api.cudnnSetStream(device.handle, stream), "cudnnSetStream");
  cudnnBackendDescriptor_t pack =
      call.create(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, "the variant pack");
  auto count = static_cast<int64_t>(uids.size());
  call.set(pack, EIN_ATTR(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS), uids.data(),
           count);
  call.setPointers(pack, EIN_ATTR(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS),
                   pointers.data(), count);
  call.setPointers(pack, EIN_ATTR(CUDNN_ATTR_VARIANT_PACK_WORKSPACE),
                   &workspace, 1);
  call.finalize(pack);
  call.check(api.cudnnBackendExecute(device.handle, plan.plan, pack),
             "cudnnBackendExecute with engine " + std::to_string(plan.engine));
}
} // namespace ein::cuda
