//===- cuda_backend.cpp - The schedule as one multi-GPU CUDA graph --------===//
//
// Setup: every GPU the bundle uses must exist, be the bundle's chip and reach
// every other by peer access; each device gets one arena (the bundle's static
// buffer plan), a stream, and, when it runs gemms, a cuBLASLt handle and
// workspace. A device map (BackendOptions::deviceMap) runs device d on GPU
// gpu(d): devices that share a GPU keep their own arenas, streams and
// events there, and a transfer between two of them is the same
// cudaMemcpy*Async(cudaMemcpyDefault) or copy kernel as a peer copy, on the
// same stream, which CUDA runs device to device. Kernels load from the bundle's
// .cubin files and from the backend's own fatbin (aggregation, strided copies).
// cuBLASLt's heuristics are queried, and every attention step planned (cuDNN's
// fused SDPA or the runtime's own kernel, attention.h), before capture.
//
// The schedule is issued once eagerly (which also loads every kernel into
// every context) and once under stream capture into a single graph spanning
// the GPUs: each step goes to its device's stream in schedule order, and a
// dependency on another device's step becomes an event edge. Each run
// replays the graph.
//
// Under a launcher (BackendOptions::ranks), the process holds its node's
// devices only (the device map, if any, names their GPUs, one entry per
// device of the node), and a transfer between nodes goes through one of
// two transports, chosen at load (EIN_TRANSPORT; chooseTransport):
//  - NCCL, where every device of the run has a GPU of its own (NCCL 2.28
//    refuses two of its ranks on one GPU): one communicator per device,
//    NCCL rank = bundle device, the id shared through MPI. The sender
//    packs the copies' regions into a device staging buffer and ncclSends
//    it, the receiver ncclRecvs and unpacks, all on the step's stream, so
//    the step stays one CUDA graph per rank.
//  - MPI otherwise: a host step at the transfer's place in the schedule,
//    which no graph can hold, so every run issues the node's steps eagerly.
//    The sending rank packs into a pinned staging buffer after the step's
//    waits, synchronizes the stream and sends the message; the receiving
//    rank receives it into its own and unpacks it on the step's stream,
//    before the consumers (which wait on the step's event as on any other).
// The message is packed as the CPU backend packs it (each copy's extent,
// dense, in order), and every rank meets every transfer in the one schedule
// order, so no rank waits for a message a peer sends only later (nor does
// an NCCL communicator); every wait is bounded (ranks.h; waitForStreams).
//
//===----------------------------------------------------------------------===//

#include "../backend.h"
#include "../ranks.h"
#include "attention.h"
#include "copy_plan.h"
#include "cublaslt.h"
#include "cuda_check.h"
#include "cudnn_conv.h"
#include "gemm_pad.h"
#include "kernels_abi.h"
#include "nccl.h"

#include "ein/partition.h"
#include "ein/signature.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <set>

extern "C" const unsigned char ein_cuda_kernels_fatbin[];

namespace ein {
namespace {

constexpr size_t kWorkspaceBytes = size_t(32) << 20;
/// EIN_GEMM_TUNE=on: how many of cuBLASLt's heuristic candidates are timed
/// per gemm problem, and how many runs each.
constexpr int kGemmCandidates = 8;
constexpr int kGemmTuneRepeats = 5;
/// EIN_GEMM_TUNE=hot: the candidates are timed at the sustained clock, where
/// a step's time follows its energy (docs/performance.md): the GPU first runs
/// the heuristic's choice for about kGemmHeatMs, then every candidate
/// kGemmTuneRepeats times in each of kGemmHotRounds interleaved rounds.
constexpr float kGemmHeatMs = 1500;
constexpr int kGemmHotRounds = 6;
/// The longest a profile's gate holds the GPUs (kernels.cu's ein_gate).
constexpr unsigned long long kGateLimitNs = 2000000000ull;
constexpr int kThreads = 256;

/// The value of environment variable `name`, one of `allowed` (the first is
/// the default).
std::string choice(const char *name,
                   std::initializer_list<const char *> allowed) {
  const char *value = std::getenv(name);
  if (!value)
    return *allowed.begin();
  std::string known;
  for (const char *a : allowed) {
    if (value == std::string(a))
      return value;
    known += (known.empty() ? "" : ", ") + std::string(a);
  }
  throw RuntimeError(std::string(name) + "=" + value + " is not one of " +
                     known);
}

using cuda::check;

/// How a GPU's steps spread over streams: all on one; transfers on a
/// second; or, for a dataflow bundle, transfers on a second and kernels over
/// kDataflowStreams compute streams, so a step waits for its dependencies
/// only.
enum class Lanes { One, Copy, Dataflow };
constexpr int kDataflowStreams = 2;

/// As the bundle says (`dataflow`), unless EIN_CUDA_STREAMS says 1, 2 or
/// dataflow.
Lanes lanesFor(const Manifest &m) {
  std::string streams =
      choice("EIN_CUDA_STREAMS", {"bundle", "1", "2", "dataflow"});
  if (streams == "bundle")
    return m.dataflow ? Lanes::Dataflow : Lanes::One;
  return streams == "1"   ? Lanes::One
         : streams == "2" ? Lanes::Copy
                          : Lanes::Dataflow;
}

std::string mib(size_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MiB", bytes / 1048576.0);
  return text;
}

cuda::ElementType elementType(DType t) {
  switch (t) {
  case DType::F64:
    return cuda::F64;
  case DType::F32:
    return cuda::F32;
  case DType::F16:
    return cuda::F16;
  default:
    return cuda::BF16;
  }
}

cudaDataType_t libraryType(DType t) {
  return t == DType::F32   ? CUDA_R_32F
         : t == DType::F16 ? CUDA_R_16F
                           : CUDA_R_16BF;
}

class CudaBackend final : public DeviceBackend {
public:
  CudaBackend(const Bundle &bundle, const BackendOptions &options)
      : bundle(bundle), own(localManifest(bundle.manifest, options)), m(own),
        options(options), node(options.ranks ? options.ranks->rank() : -1),
        firstLocal(node < 0 ? 0 : node * m.devicesPerNode()),
        copyMode(choice("EIN_CUDA_COPY", {"auto", "engine", "kernel"})),
        useGraph(choice("EIN_CUDA_GRAPH", {"on", "off"}) == "on"),
        laneMode(lanesFor(bundle.manifest)),
        padMode(
            gemmPadMode(choice("EIN_GEMM_PAD", {"auto", "always", "never"}))),
        gemmTune(choice("EIN_GEMM_TUNE", {"off", "on", "hot"})) {
    try {
      checkMachine();
      chooseTransport();
      // Under MPI the transfers between nodes are host steps, which no
      // graph can hold: every run is issued eagerly.
      if (transport == Transport::Mpi)
        useGraph = false;
      assignLanes();
      allocate();
      loadKernels();
      planGemms();
      planAttentions();
      createEvents();
      // Eagerly once: loads every kernel into every context and surfaces
      // errors outside capture, where they are easier to read. (Not over
      // MPI: that run would exchange messages at load.)
      if (transport != Transport::Mpi) {
        issueSchedule();
        synchronize("the first run of the schedule");
      }
      if (useGraph)
        capture();
    } catch (...) {
      release(); // no destructor runs for a constructor that throws
      throw;
    }
  }

  ~CudaBackend() override { release(); }

  void release() {
    for (int d = 0; d < int(streams.size()); ++d) {
      if (!streams[d])
        continue;
      cudaSetDevice(gpu(d));
      cudaStreamSynchronize(streams[d]);
    }
    for (auto &[step, buffer] : staging) {
      if (transport == Transport::Nccl) {
        cudaSetDevice(gpu(m.steps[step].device));
        cudaFree(buffer);
      } else {
        cudaFreeHost(buffer);
      }
    }
    staging.clear();
    nccl.reset();
    for (size_t i = 0; i < extraStreams.size(); ++i) {
      if (!extraStreams[i])
        continue;
      cudaSetDevice(gpu(int(i % m.devices)));
      cudaStreamSynchronize(extraStreams[i]);
      cudaStreamDestroy(extraStreams[i]);
    }
    if (exec)
      cudaGraphExecDestroy(exec);
    if (graph)
      cudaGraphDestroy(graph);
    for (cudaEvent_t e : events)
      cudaEventDestroy(e);
    attentions.clear();
    convs.clear();
    for (size_t i = 0; i < attentionWorkspaces.size(); ++i)
      if (attentionWorkspaces[i]) {
        cudaSetDevice(gpu(int(i % m.devices)));
        cudaFree(attentionWorkspaces[i]);
      }
    for (auto &[step, plan] : gemms) {
      lt.cublasLtMatmulDescDestroy(plan.desc);
      for (cublasLtMatrixLayout_t l : {plan.a, plan.b, plan.c})
        lt.cublasLtMatrixLayoutDestroy(l);
      cudaSetDevice(gpu(m.steps[step].device));
      for (const PaddedOperand *p :
           {&plan.padA, &plan.padB, &plan.padC, &plan.padBias})
        cudaFree(p->buffer);
    }
    for (int d = 0; d < int(handles.size()); ++d)
      if (handles[d]) {
        cudaSetDevice(gpu(d));
        lt.cublasLtDestroy(handles[d]);
      }
    for (size_t i = 0; i < workspaces.size(); ++i)
      if (workspaces[i]) {
        cudaSetDevice(gpu(int(i % m.devices)));
        cudaFree(workspaces[i]);
      }
    for (cudaLibrary_t library : libraries)
      cudaLibraryUnload(library);
    // (A failed setup may have allocated one arena more than streams.)
    for (int d = 0; d < int(arenas.size()); ++d) {
      if (!arenas[d])
        continue;
      cudaSetDevice(gpu(d));
      cudaFree(arenas[d]);
    }
    for (int d = 0; d < int(streams.size()); ++d) {
      if (!streams[d])
        continue;
      cudaSetDevice(gpu(d));
      cudaStreamDestroy(streams[d]);
    }
  }

  void writeBuffer(int buffer, const unsigned char *host) override {
    const Buffer &b = m.buffers[buffer];
    check(cudaSetDevice(gpu(b.device)), "cudaSetDevice");
    check(cudaMemcpy(arenas[b.device] + b.offset, host, b.bytes(),
                     cudaMemcpyHostToDevice),
          "copying input buffer '" + b.name + "' to " + deviceName(b.device));
  }

  void readBuffer(int buffer, unsigned char *host) const override {
    const Buffer &b = m.buffers[buffer];
    check(cudaSetDevice(gpu(b.device)), "cudaSetDevice");
    check(cudaMemcpy(host, arenas[b.device] + b.offset, b.bytes(),
                     cudaMemcpyDeviceToHost),
          "copying output buffer '" + b.name + "' from " +
              deviceName(b.device));
  }

  void copyBetween(const std::vector<BufferCopy> &copies) override {
    std::set<int> used;
    for (const BufferCopy &c : copies) {
      const Buffer &from = m.buffers[c.src], &to = m.buffers[c.dst];
      std::string where = "carrying buffer '" + from.name + "' into '" +
                          to.name + "' on " + deviceName(to.device);
      int64_t width = dtypeBytes(to.type.dtype), bytes = width;
      for (int64_t e : c.extent)
        bytes *= e;
      cuda::CopyPlan plan;
      try {
        plan = cuda::planCopy(address(c.src), from.type.shape, c.srcOffset,
                              address(c.dst), to.type.shape, c.dstOffset,
                              c.extent, width, useCopyKernel(bytes));
      } catch (const std::invalid_argument &e) {
        throw RuntimeError(where + ": " + e.what());
      }
      check(cudaSetDevice(gpu(to.device)), "cudaSetDevice");
      issueCopy(plan, streams[to.device], where);
      used.insert(to.device);
    }
    for (int device : used) {
      check(cudaSetDevice(gpu(device)), "cudaSetDevice");
      check(cudaStreamSynchronize(streams[device]),
            "carrying outputs into inputs on " + deviceName(device));
    }
  }

  void run() override {
    if (options.debug)
      poison();
    launchStep();
    synchronize("running the step");
  }

  double timedRun() override {
    if (options.debug)
      poison();
    check(cudaSetDevice(gpu(firstLocal)), "cudaSetDevice");
    check(cudaEventRecord(start, streams[firstLocal]), "cudaEventRecord");
    launchStep();
    check(cudaSetDevice(gpu(firstLocal)), "cudaSetDevice");
    check(cudaEventRecord(stop, streams[firstLocal]), "cudaEventRecord");
    synchronize("running the step");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    return ms;
  }

  std::string describe() const override {
    cudaDeviceProp props;
    cudaGetDeviceProperties(&props, gpu(firstLocal));
    int held = node < 0 ? m.devices : m.devicesPerNode();
    std::string how =
        useGraph ? "one CUDA graph of " + std::to_string(graphNodes) + " nodes"
                 : std::string("eager stream launches");
    std::string text = "cuda: " + std::to_string(held) + " x " + props.name +
                       " (" + m.chip + "), " + how;
    if (!options.deviceMap.empty())
      text = "cuda: " + std::to_string(held) + " logical devices on " +
             std::to_string(gpus().size()) + " x " + props.name + " (" +
             m.chip + "; device map " + mapText() + "), " + how;
    if (node >= 0)
      text += "; this rank holds node " + std::to_string(node) + "'s devices " +
              std::to_string(firstLocal) + " to " +
              std::to_string(firstLocal + held - 1) +
              ", transfers between nodes through " +
              (transport == Transport::Nccl
                   ? "NCCL " + cuda::nccl().version + " (" + transportWhy + ")"
                   : "MPI (pinned host staging, " + options.ranks->engine() +
                         "; " + transportWhy + ")");
    if (laneMode == Lanes::Copy)
      text += ", transfers on a second stream per GPU";
    if (laneMode == Lanes::Dataflow)
      text += ", dataflow: " + std::to_string(kDataflowStreams) +
              " compute streams and a copy stream per GPU";
    if (lt.loaded())
      text += ", cuBLASLt from " + lt.path;
    std::set<std::string> names;
    for (const auto &[step, attention] : attentions)
      names.insert(attention->name());
    for (const std::string &name : names)
      text += ", attention by " + name;
    names.clear();
    for (const auto &[step, conv] : convs)
      names.insert(conv->name());
    for (const std::string &name : names)
      text += ", convolution by " + name;
    return text;
  }

  std::vector<StepTime> profile() override {
    if (options.debug)
      poison();
    // Timing events around every step, on the step's device, and one on
    // each device's stream before the schedule: the devices are idle then,
    // so their origins agree to within the host's issue time.
    std::vector<std::pair<cudaEvent_t, cudaEvent_t>> marks;
    std::vector<cudaEvent_t> origins;
    // Every lane waits behind a gate while the host issues the schedule
    // (kernels.cu's ein_gate), so that a step's time is the GPU's, not the
    // host's issuing it: issued onto idle GPUs, the first steps measured
    // several times their time in the step (a 8 us LayerNorm at 39 us, a
    // 45 us gemm at 117 us).
    volatile int *open = nullptr;
    auto destroy = [&] {
      if (open) {
        *open = 1; // a gate still closed opens before its memory goes
        for (int d = 0; d < m.devices; ++d) {
          if (!local(d))
            continue;
          cudaSetDevice(gpu(d));
          cudaDeviceSynchronize();
        }
        cudaFreeHost(const_cast<int *>(open));
      }
      for (auto [begin, end] : marks) {
        if (begin)
          cudaEventDestroy(begin);
        if (end)
          cudaEventDestroy(end);
      }
      for (cudaEvent_t origin : origins)
        if (origin)
          cudaEventDestroy(origin);
    };
    try {
      synchronize("starting the profile");
      for (int d = 0; d < m.devices; ++d) {
        if (!local(d)) {
          origins.push_back(nullptr);
          continue;
        }
        check(cudaSetDevice(gpu(d)), "cudaSetDevice");
        cudaEvent_t origin;
        check(cudaEventCreate(&origin), "cudaEventCreate");
        origins.push_back(origin);
      }
      for (const Step &s : m.steps) {
        if (!local(s.device)) {
          marks.push_back({nullptr, nullptr});
          continue;
        }
        check(cudaSetDevice(gpu(s.device)), "cudaSetDevice");
        cudaEvent_t begin, end;
        check(cudaEventCreate(&begin), "cudaEventCreate");
        marks.push_back({begin, nullptr});
        check(cudaEventCreate(&end), "cudaEventCreate");
        marks.back().second = end;
      }
      void *mapped = nullptr;
      check(cudaHostAlloc(&mapped, sizeof(int),
                          cudaHostAllocMapped | cudaHostAllocPortable),
            "allocating the profile's gate");
      open = static_cast<volatile int *>(mapped);
      *open = 0;
      const int *gate = static_cast<const int *>(mapped); // UVA: one address
      unsigned long long limitNs = kGateLimitNs;
      void *gateArgs[] = {&gate, &limitNs};
      // (Not under a launcher: a transfer between nodes waits on the host
      // for its stream, which the gate would hold.)
      for (int lane = 0; lane < lanes() && node < 0; ++lane) {
        check(cudaSetDevice(gpu(lane % m.devices)), "cudaSetDevice");
        launch(gateKernel, dim3(1), dim3(1), gateArgs, 0, laneStream(lane),
               "the profile's gate");
      }
      for (int d = 0; d < m.devices; ++d) {
        if (!local(d))
          continue;
        check(cudaSetDevice(gpu(d)), "cudaSetDevice");
        check(cudaEventRecord(origins[d], streams[d]), "cudaEventRecord");
      }
      issueSchedule(&marks);
      std::atomic_thread_fence(std::memory_order_seq_cst);
      *open = 1;
      synchronize("profiling the step");
      std::vector<StepTime> times;
      for (size_t i = 0; i < marks.size(); ++i) {
        const Step &s = m.steps[i];
        if (!local(s.device)) {
          times.push_back({0, 0, 0});
          continue;
        }
        float start = 0, end = 0;
        check(cudaEventElapsedTime(&start, origins[s.device], marks[i].first),
              "cudaEventElapsedTime");
        check(cudaEventElapsedTime(&end, origins[s.device], marks[i].second),
              "cudaEventElapsedTime");
        times.push_back({start, end, laneOf(s) / m.devices});
      }
      destroy();
      return times;
    } catch (...) {
      destroy();
      throw;
    }
  }

  ein_memory_info memory(int device) const override {
    if (!local(device)) // another rank's: its plan alone
      return {size_t(m.arenaBytes[device]), 0};
    size_t planned =
        size_t(m.arenaBytes[device]) +
        size_t(computeStreams()) *
            (attentionWorkspaceBytes[device] +
             (device < int(handles.size()) && handles[device] ? kWorkspaceBytes
                                                              : 0)) +
        (device < int(padBytes.size()) ? padBytes[device] : 0);
    // Devices that share a GPU share its free memory: what it lost since
    // the first of them allocated is that one's, the others' is 0, so the
    // devices' figures still add up to the GPU's.
    for (int d = firstLocal; d < device; ++d)
      if (gpu(d) == gpu(device))
        return {planned, 0};
    check(cudaSetDevice(gpu(device)), "cudaSetDevice");
    size_t free = 0, total = 0;
    check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
    return {planned, freeBefore[device] > free ? freeBefore[device] - free : 0};
  }

private:
  const Bundle &bundle;
  /// The manifest as this process runs it: under a launcher, a transfer
  /// between nodes runs on its end on this rank's node (its device is the
  /// sending device on the sending rank, the receiving one on the other).
  Manifest own;
  const Manifest &m;
  BackendOptions options;
  /// The node whose devices this process holds (-1: all, no launcher), and
  /// its first device.
  int node, firstLocal;
  /// Per transfer between nodes (by step), its staging buffer: the copies'
  /// regions, dense, one after another; pinned host memory for MPI, the
  /// step's device's for NCCL.
  std::map<size_t, unsigned char *> staging;
  /// How transfers between nodes move (chooseTransport); None without a
  /// launcher.
  enum class Transport { None, Mpi, Nccl } transport = Transport::None;
  /// Why that one, for describe().
  std::string transportWhy;
  /// Under NCCL: one communicator per device of this node.
  std::unique_ptr<cuda::NcclGroup> nccl;
  /// The ranks this node exchanges messages with, for messages.
  std::set<int> peers;

  static Manifest localManifest(const Manifest &manifest,
                                const BackendOptions &options) {
    Manifest local = manifest;
    if (!options.ranks)
      return local;
    int node = options.ranks->rank();
    for (Step &s : local.steps) {
      if (s.kind != StepKind::Transfer || s.copies.empty())
        continue;
      auto [from, to] = local.transferEnds(s);
      if (local.nodeOf(from) == node)
        s.device = from;
      else if (local.nodeOf(to) == node)
        s.device = to;
    }
    return local;
  }

  /// Whether device `d` is this process's.
  bool local(int d) const { return node < 0 || m.nodeOf(d) == node; }
  /// Whether lane `lane` (laneOfStep) is on one of this process's devices.
  bool localLane(int lane) const { return local(lane % m.devices); }
  /// Whether `s` is a transfer between this rank's node and another.
  bool betweenNodes(const Step &s) const {
    return node >= 0 && m.crossesNodes(s);
  }
  /// EIN_CUDA_COPY: "auto" (the copy kernel below the chip table's
  /// copyKernelBelowBytes,
  /// else the copy engine where one contiguous or 2-D call does), "engine"
  /// (wherever one call does) or "kernel" (always).
  std::string copyMode;
  /// EIN_CUDA_GRAPH=off issues the schedule eagerly on every run instead of
  /// replaying a graph: for measuring what the graph saves, and debugging.
  bool useGraph;
  /// How each GPU's steps spread over streams (Lanes): one stream; a
  /// second for its transfers (EIN_CUDA_STREAMS=2), so they overlap the
  /// GPU's kernels where the schedule's dependencies allow; or, for a
  /// dataflow bundle, that and several compute streams. The bundle's race
  /// check guarantees every conflicting pair of steps is ordered by
  /// dependencies, not by sharing a stream.
  Lanes laneMode;
  /// Per step, its lane: k * devices + its device, k = 0 the device's
  /// stream (`streams`), 1 its copy stream, 2.. its further compute streams
  /// (`extraStreams[(k - 1) * devices + device]`).
  std::vector<int> laneOfStep;
  std::vector<cudaStream_t> extraStreams;
  cuda::CublasLt lt; // declared first: unloaded after everything using it
  std::vector<unsigned char *> arenas;
  std::vector<cudaStream_t> streams;
  std::vector<cublasLtHandle_t> handles;
  std::vector<void *> workspaces;
  /// EIN_GEMM_PAD: when a gemm runs on zero-padded copies (gemm_pad.h).
  cuda::GemmPadMode padMode;
  /// EIN_GEMM_TUNE=on or hot: each gemm problem's candidates timed at load
  /// (tuneGemm); the choice per problem, by key.
  std::string gemmTune;
  /// EIN_GEMM_TUNE=hot: whether the GPU has been heated (tuneGemm).
  bool heated = false;
  std::map<std::string, size_t> tuned;
  static cuda::GemmPadMode gemmPadMode(const std::string &name) {
    return name == "always"  ? cuda::GemmPadMode::Always
           : name == "never" ? cuda::GemmPadMode::Never
                             : cuda::GemmPadMode::Auto;
  }
  /// A gemm operand's zero-padded copy; no buffer where it runs as stored.
  struct PaddedOperand {
    void *buffer = nullptr;
    std::vector<int64_t> shape;
  };
  struct GemmPlan {
    /// padBias: the bias vector padded to the padded columns.
    PaddedOperand padA, padB, padC, padBias;
    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
    cublasLtMatmulAlgo_t algo;
    /// The heuristic's candidates, best first (algo is one of them).
    std::vector<cublasLtMatmulAlgo_t> candidates;
    float alpha = 1, beta = 0;
    bool swapped = true; // cuBLAS's A is the step's b (row-major trick)
  };
  std::map<size_t, GemmPlan> gemms;
  std::vector<size_t> padBytes; // per device: the gemms' padded copies
  std::map<size_t, std::unique_ptr<cuda::Attention>> attentions;
  /// Per attention step, the bytes of the dense copies of its views at the
  /// start of the workspace (0: the attention reads them in place).
  std::map<size_t, size_t> attentionStagedBytes;
  std::map<size_t, std::unique_ptr<cuda::Conv>> convs;
  /// Per conv step, the bytes of its reordered filter (0: none).
  std::map<size_t, size_t> convFilterBytes;
  /// Shared by a device's attention and conv steps, which run one at a
  /// time on its compute stream.
  std::vector<void *> attentionWorkspaces;     // per device, may be null
  std::vector<size_t> attentionWorkspaceBytes; // per device
  /// Each device's free memory just before its arena was allocated.
  std::vector<size_t> freeBefore;
  std::vector<cudaLibrary_t> libraries;
  cudaKernel_t aggregateKernel = nullptr, copyKernel = nullptr,
               copyBatchKernel = nullptr, gateKernel = nullptr;
  std::map<std::string, cudaKernel_t> kernels;
  std::vector<cudaEvent_t> events;
  std::vector<cudaEvent_t> done; // per step, where another device waits
  cudaEvent_t forkEvent = nullptr;
  std::vector<cudaEvent_t> join;
  cudaEvent_t start = nullptr, stop = nullptr;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  size_t graphNodes = 0;

  /// One step of the schedule on every device: a graph replay, or the
  /// schedule issued eagerly.
  void launchStep() {
    check(cudaSetDevice(gpu(firstLocal)), "cudaSetDevice");
    if (useGraph)
      check(cudaGraphLaunch(exec, streams[firstLocal]),
            "launching the step's graph");
    else
      issueSchedule();
  }

  /// The GPU that runs device `d`: the device map's entry, or d itself.
  /// Under a launcher, device d is the (d - firstLocal)th of the node's:
  /// on that GPU of this machine, or the map's entry for it.
  int gpu(int d) const {
    int index = d - firstLocal;
    return options.deviceMap.empty() ? index : options.deviceMap[index];
  }
  /// Device `d` in messages: "GPU d", or under a device map "device d (GPU
  /// p)".
  std::string deviceName(int d) const {
    if (options.deviceMap.empty())
      return "GPU " + std::to_string(d);
    return "device " + std::to_string(d) + " (GPU " + std::to_string(gpu(d)) +
           ")";
  }
  /// The distinct GPUs the devices run on, in increasing order.
  std::vector<int> gpus() const {
    std::set<int> used;
    for (int d = 0; d < m.devices; ++d)
      if (local(d))
        used.insert(gpu(d));
    return {used.begin(), used.end()};
  }
  /// "0,0,1,1": the device map, for messages.
  std::string mapText() const {
    std::string text;
    for (int p : options.deviceMap)
      text += (text.empty() ? "" : ",") + std::to_string(p);
    return text;
  }

  void checkMachine() {
    int count = 0;
    cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess)
      throw RuntimeError(
          std::string("the bundle targets cuda, but no CUDA GPU is usable "
                      "here (") +
          cudaGetErrorString(status) + ")");
    if (options.deviceMap.empty()) {
      int need = node < 0 ? m.devices : m.devicesPerNode();
      if (count < need)
        throw RuntimeError(
            (node < 0 ? "the bundle needs " : "each rank needs ") +
            std::to_string(need) + " GPUs; this machine has " +
            std::to_string(count) +
            (node < 0 ? ""
                      : " (or give --device-map one GPU per device "
                        "of the node)"));
    } else {
      for (int d = 0; d < m.devices; ++d)
        if (local(d) && gpu(d) >= count)
          throw RuntimeError(
              "the device map " + mapText() + " puts device " +
              std::to_string(d) + " on GPU " + std::to_string(gpu(d)) +
              ", but this machine has " + std::to_string(count) + " GPU" +
              (count == 1 ? "" : "s") + " (CUDA devices 0 to " +
              std::to_string(count - 1) + ")");
    }
    // Each GPU once, however many devices it runs.
    std::vector<int> used = gpus();
    for (int d : used) {
      cudaDeviceProp props;
      check(cudaGetDeviceProperties(&props, d), "cudaGetDeviceProperties");
      std::string chip = "sm_" + std::to_string(props.major * 10 + props.minor);
      if (chip != m.chip)
        throw RuntimeError("the bundle is compiled for " + m.chip +
                           ", but GPU " + std::to_string(d) + " (" +
                           props.name + ") is " + chip);
    }
    // Peer access between distinct GPUs only: devices that share a GPU
    // reach each other's arenas as their own.
    for (int d : used) {
      check(cudaSetDevice(d), "cudaSetDevice");
      for (int e : used) {
        if (e == d)
          continue;
        int can = 0;
        check(cudaDeviceCanAccessPeer(&can, d, e), "cudaDeviceCanAccessPeer");
        if (!can)
          throw RuntimeError("GPU " + std::to_string(d) +
                             " cannot access GPU " + std::to_string(e) +
                             "'s memory (no peer access); the bundle's "
                             "transfers need it between every pair");
        // Peer access lasts as long as the process; enable each pair once
        // (enabling it again is an error CUDA reports).
        static std::mutex mutex;
        static std::set<std::pair<int, int>> enabled;
        std::lock_guard<std::mutex> lock(mutex);
        if (enabled.count({d, e}))
          continue;
        cudaError_t status = cudaDeviceEnablePeerAccess(e, 0);
        if (status == cudaErrorPeerAccessAlreadyEnabled)
          cudaGetLastError(); // another library in the process enabled it
        else
          check(status, "enabling peer access from GPU " + std::to_string(d) +
                            " to GPU " + std::to_string(e));
        enabled.insert({d, e});
      }
    }
  }

  bool runsGemm(int device) const {
    return std::any_of(m.steps.begin(), m.steps.end(), [&](const Step &s) {
      return s.kind == StepKind::Library && s.call == "gemm" &&
             s.device == device;
    });
  }

  void allocate() {
    for (int d = 0; d < m.devices; ++d) {
      if (!local(d)) { // another rank's
        freeBefore.push_back(0);
        arenas.push_back(nullptr);
        streams.push_back(nullptr);
        continue;
      }
      check(cudaSetDevice(gpu(d)), "cudaSetDevice");
      size_t free = 0, total = 0;
      check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
      freeBefore.push_back(free);
      size_t workspace =
          runsGemm(d) ? kWorkspaceBytes * size_t(computeStreams()) : 0;
      size_t need = size_t(m.arenaBytes[d]) + workspace;
      if (need > free)
        throw RuntimeError("out of memory on " + deviceName(d) +
                           ": the plan needs " + mib(need) + " (arena " +
                           mib(m.arenaBytes[d]) + ", cuBLASLt workspace " +
                           mib(workspace) + ") but only " + mib(free) + " of " +
                           mib(total) + " are free");
      void *arena = nullptr;
      check(cudaMalloc(&arena, std::max<size_t>(m.arenaBytes[d], 256)),
            "allocating " + deviceName(d) + "'s arena");
      arenas.push_back(static_cast<unsigned char *>(arena));
      // The first run happens before any input is set: let it read zeros,
      // not whatever the allocation held (indices into gathers, say).
      check(cudaMemset(arena, 0, std::max<size_t>(m.arenaBytes[d], 256)),
            "clearing " + deviceName(d) + "'s arena");
      cudaStream_t stream;
      check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
            "cudaStreamCreate");
      streams.push_back(stream);
    }
    for (int lane = m.devices; lane < lanes(); ++lane) {
      if (!localLane(lane)) {
        extraStreams.push_back(nullptr);
        continue;
      }
      check(cudaSetDevice(gpu(lane % m.devices)), "cudaSetDevice");
      cudaStream_t stream;
      check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
            "cudaStreamCreate");
      extraStreams.push_back(stream);
    }
    // For each transfer between this node and another: device memory for
    // NCCL; for MPI, pinned host memory (mapped, so the copy kernel reaches
    // it too).
    for (size_t i = 0; i < m.steps.size(); ++i) {
      const Step &s = m.steps[i];
      if (!local(s.device) || !betweenNodes(s))
        continue;
      check(cudaSetDevice(gpu(s.device)), "cudaSetDevice");
      void *buffer = nullptr;
      size_t bytes = std::max<size_t>(m.messageBytes(s), 1);
      check(transport == Transport::Nccl
                ? cudaMalloc(&buffer, bytes)
                : cudaHostAlloc(&buffer, bytes,
                                cudaHostAllocMapped | cudaHostAllocPortable),
            "allocating the staging buffer of transfer step " +
                std::to_string(i) + " (" + mib(m.messageBytes(s)) + ")");
      staging[i] = static_cast<unsigned char *>(buffer);
    }
  }

  cudaLibrary_t loadLibrary(const void *image, const std::string &what) {
    cudaLibrary_t library = nullptr;
    check(cudaLibraryLoadData(&library, image, nullptr, nullptr, 0, nullptr,
                              nullptr, 0),
          "cannot load " + what);
    libraries.push_back(library);
    return library;
  }

  /// The library's signature table: its device global's bytes, up to the
  /// first NUL.
  std::string signatureText(cudaLibrary_t library, const std::string &path) {
    void *global = nullptr;
    size_t bytes = 0;
    if (cudaLibraryGetGlobal(&global, &bytes, library, kSignatureSymbol) !=
            cudaSuccess ||
        !global || bytes > (size_t(64) << 20)) {
      cudaGetLastError();
      throw RuntimeError("kernel library '" + path + "' has no '" +
                         kSignatureSymbol +
                         "' table (built by an older ein-compile, or not a "
                         "bundle's library; recompile the bundle)");
    }
    std::string text(bytes, '\0');
    check(cudaMemcpy(&text[0], global, bytes, cudaMemcpyDeviceToHost),
          "reading the signature table of '" + path + "'");
    return std::string(text.c_str());
  }

  void loadKernels() {
    cudaLibrary_t builtin =
        loadLibrary(ein_cuda_kernels_fatbin, "the runtime's own kernels");
    check(cudaLibraryGetKernel(&aggregateKernel, builtin, "ein_aggregate"),
          "ein_aggregate");
    check(cudaLibraryGetKernel(&copyKernel, builtin, "ein_copy"), "ein_copy");
    check(cudaLibraryGetKernel(&copyBatchKernel, builtin, "ein_copy_batch"),
          "ein_copy_batch");
    check(cudaLibraryGetKernel(&gateKernel, builtin, "ein_gate"), "ein_gate");
    // Each library's hash is checked before CUDA sees it, its signature
    // table read, and every kernel step checked against the tables before
    // anything runs.
    loadKernelLibraries(
        bundle, kernels,
        [&](const std::string &path, const std::string &image) {
          // CUDA may load lazily and accept anything here: check the magic
          // of an ELF cubin or a fatbin first.
          bool elf = image.compare(0, 4,
                                   "\x7f"
                                   "ELF") == 0;
          bool fatbin = image.size() >= 4 &&
                        static_cast<unsigned char>(image[0]) == 0x50 &&
                        static_cast<unsigned char>(image[1]) == 0xed &&
                        static_cast<unsigned char>(image[2]) == 0x55 &&
                        static_cast<unsigned char>(image[3]) == 0xba;
          if (!elf && !fatbin)
            throw RuntimeError("cannot load kernel library '" + path +
                               "': it is neither a cubin (ELF) nor a fatbin");
          cudaLibrary_t library =
              loadLibrary(image.data(), "kernel library '" + path + "'");
          // Loading may be lazy; counting the kernels makes a bad image fail
          // here, with the library's name, instead of at its first kernel.
          unsigned count = 0;
          check(cudaLibraryGetKernelCount(&count, library),
                "cannot load kernel library '" + path + "'");
          return library;
        },
        [&](cudaLibrary_t library, const std::string &path) {
          return signatureText(library, path);
        },
        [](cudaLibrary_t library, const std::string &name) {
          cudaKernel_t kernel = nullptr;
          cudaError_t status =
              cudaLibraryGetKernel(&kernel, library, name.c_str());
          // A library without the kernel is no error of the run.
          cudaGetLastError();
          return status == cudaSuccess ? kernel : nullptr;
        });
  }

  void planGemms() {
    for (size_t i = 0; i < m.steps.size(); ++i) {
      const Step &s = m.steps[i];
      if (s.kind != StepKind::Library || s.call != "gemm" || !local(s.device))
        continue;
      if (!lt.loaded())
        lt.load();
      if (handles.empty()) {
        handles.assign(m.devices, nullptr);
        workspaces.assign(size_t(m.devices) * computeStreams(), nullptr);
        padBytes.assign(m.devices, 0);
      }
      check(cudaSetDevice(gpu(s.device)), "cudaSetDevice");
      if (!handles[s.device]) {
        ltCheck(lt.cublasLtCreate(&handles[s.device]), "cublasLtCreate");
        // One workspace per compute stream: gemms on two streams may run
        // at once.
        for (int k = 0; k < computeStreams(); ++k)
          check(cudaMalloc(&workspaces[k * m.devices + s.device],
                           kWorkspaceBytes),
                "allocating the cuBLASLt workspace");
      }
      gemms[i] = planGemm(i, s);
    }
  }

  /// Plans every attention step on its device (EIN_ATTENTION chooses the
  /// implementation, attention.h) and every conv step (cuDNN), and gives
  /// each device the largest workspace its steps need.
  void planAttentions() {
    std::string implementation =
        choice("EIN_ATTENTION", {"auto", "cudnn", "kernel"});
    std::vector<size_t> workspace(m.devices, 0);
    for (size_t i = 0; i < m.steps.size(); ++i) {
      const Step &s = m.steps[i];
      if (s.kind != StepKind::Library || s.call != "attention" ||
          !local(s.device))
        continue;
      const std::vector<int64_t> &q = viewOf(m, s.q, s.qView).shape,
                                 &k = viewOf(m, s.k, s.kView).shape,
                                 &v = viewOf(m, s.v, s.vView).shape;
      cuda::AttentionProblem p;
      p.batch = q[0];
      p.heads = q[1];
      p.kvHeads = k[1];
      p.queries = q[2];
      p.keys = k[2];
      p.headDim = q[3];
      p.valueDim = v[3];
      p.type = elementType(m.buffers[s.q].type.dtype);
      p.scale = static_cast<float>(s.scale);
      p.causal = s.causal;
      p.diagonal = s.diagonal;
      p.withLse = s.lse >= 0;
      std::array<std::array<int64_t, 4> *, 4> strides = {
          &p.qStrides, &p.kStrides, &p.vStrides, &p.oStrides};
      for (int t = 0; t < 4; ++t)
        if (const std::optional<StridedView> &view = *attentionViews(s)[t])
          std::copy(view->strides.begin(), view->strides.end(),
                    strides[t]->begin());
      check(cudaSetDevice(gpu(s.device)), "cudaSetDevice");
      size_t staged = 0;
      try {
        try {
          attentions[i] = cuda::createAttention(p, implementation);
        } catch (const RuntimeError &) {
          if (p.dense())
            throw;
          // Where no implementation reads the views in place, they are
          // gathered into (and o scattered from) dense copies at the start
          // of the workspace.
          for (const std::optional<StridedView> *view : attentionViews(s))
            if (*view)
              staged += stagedBytes((*view)->shape, m.buffers[s.q].type.dtype);
          cuda::AttentionProblem dense = p;
          dense.qStrides = dense.kStrides = dense.vStrides =
              dense.oStrides = {};
          attentions[i] = cuda::createAttention(dense, implementation);
        }
      } catch (const RuntimeError &e) {
        throw RuntimeError("attention step " + std::to_string(i) + ": " +
                           e.what());
      }
      attentionStagedBytes[i] = staged;
      workspace[s.device] = std::max(workspace[s.device],
                                     staged + attentions[i]->workspaceBytes());
    }
    for (size_t i = 0; i < m.steps.size(); ++i) {
      const Step &s = m.steps[i];
      if (s.kind != StepKind::Library || s.call != "conv" || !local(s.device))
        continue;
      const TensorType &x = m.buffers[s.a].type, &w = m.buffers[s.b].type,
                       &y = m.buffers[s.c].type;
      bool last = s.conv.layout == "nhwc";
      // [n, c, h, w] of a tensor in the step's layout.
      auto nchw = [&](const std::vector<int64_t> &t) {
        return last ? std::array<int64_t, 4>{t[0], t[3], t[1], t[2]}
                    : std::array<int64_t, 4>{t[0], t[1], t[2], t[3]};
      };
      cuda::ConvProblem p;
      p.channelsLast = last;
      auto [n, c, h, wd] = nchw(x.shape);
      p.batch = n;
      p.channels = c;
      p.rows = h;
      p.columns = wd;
      std::array<int64_t, 4> out = nchw(y.shape);
      p.features = out[1];
      p.outRows = out[2];
      p.outColumns = out[3];
      p.windowRows = last ? w.shape[0] : w.shape[2];
      p.windowColumns = last ? w.shape[1] : w.shape[3];
      for (int d = 0; d < 2; ++d) {
        p.strides[d] = s.conv.strides[d];
        p.dilations[d] = s.conv.dilations[d];
        p.padLow[d] = s.conv.padLow[d];
        p.padHigh[d] = s.conv.padHigh[d];
      }
      p.groups = s.conv.groups;
      p.type = elementType(x.dtype);
      check(cudaSetDevice(gpu(s.device)), "cudaSetDevice");
      try {
        convs[i] = cuda::createCudnnConv(p);
      } catch (const RuntimeError &e) {
        throw RuntimeError("conv step " + std::to_string(i) + ": " + e.what());
      }
      // A channels-last filter is reordered from hwcf to fhwc at the start
      // of the workspace (kernels_abi.h's copy, strided), cuDNN's after it.
      size_t reordered = 0;
      if (last)
        reordered = stagedBytes(w.shape, w.dtype);
      convFilterBytes[i] = reordered;
      workspace[s.device] =
          std::max(workspace[s.device], reordered + convs[i]->workspaceBytes());
    }
    // One per compute stream: attention and conv steps on two streams may
    // run at once.
    attentionWorkspaces.assign(size_t(m.devices) * computeStreams(), nullptr);
    attentionWorkspaceBytes = workspace;
    for (size_t i = 0; i < attentionWorkspaces.size(); ++i) {
      int d = int(i % m.devices);
      if (!workspace[d])
        continue;
      check(cudaSetDevice(gpu(d)), "cudaSetDevice");
      check(cudaMalloc(&attentionWorkspaces[i], workspace[d]),
            "allocating " + deviceName(d) + "'s attention workspace (" +
                mib(workspace[d]) + ")");
    }
  }

  void ltCheck(cublasStatus_t status, const std::string &what) {
    if (status != CUBLAS_STATUS_SUCCESS)
      throw RuntimeError(what + ": " + lt.describe(status));
  }

  /// Row-major c = op(a) op(b) is column-major c^T = op(b)^T op(a)^T: cuBLAS
  /// sees the step's b as its A and the step's a as its B, both as stored.
  ///
  /// A gemm with a ragged dimension may run on zero-padded copies of its
  /// operands instead (gemm_pad.h). They are allocated and cleared here;
  /// copies in write only their unpadded corners, so the inner dimension's
  /// padding stays zero (the result's padding is computed and dropped). In
  /// auto mode a gemm whose copies do not fit in memory runs as stored.
  GemmPlan planGemm(size_t index, const Step &s) {
    const TensorType &ta = m.buffers[s.a].type, &tc = m.buffers[s.c].type;
    size_t rank = tc.shape.size();
    cuda::GemmDims dims;
    dims.rows = tc.shape[rank - 2];
    dims.cols = tc.shape[rank - 1];
    dims.inner = ta.shape[ta.shape.size() - (s.transposeA ? 2 : 1)];
    dims.batch = product(tc.shape) / (dims.rows * dims.cols);
    dims.inputBytes = dtypeBytes(ta.dtype);
    dims.outputBytes = dtypeBytes(tc.dtype);
    dims.transposeA = s.transposeA;
    dims.transposeB = s.transposeB;
    cuda::GemmDims padded = cuda::padGemm(dims, padMode);
    GemmPlan plan = planGemmAs(index, s, padded);
    if (!allocatePads(plan, s, index)) {
      lt.cublasLtMatmulDescDestroy(plan.desc);
      for (cublasLtMatrixLayout_t l : {plan.a, plan.b, plan.c})
        lt.cublasLtMatrixLayoutDestroy(l);
      plan = planGemmAs(index, s, dims);
    }
    if (s.bias >= 0) {
      // Its address is fixed now: the arena's, or its padded copy's.
      void *bias = plan.padBias.buffer ? plan.padBias.buffer : address(s.bias);
      ltCheck(
          lt.cublasLtMatmulDescSetAttribute(
              plan.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias),
          "gemm step " + std::to_string(index));
    }
    if (gemmTune != "off")
      tuneGemm(plan, s, index);
    return plan;
  }

  /// Allocates and clears `plan`'s padded operands (those whose shape
  /// differs from the stored one). False, with nothing kept, where they do
  /// not fit and padding is not required (EIN_GEMM_PAD=auto).
  bool allocatePads(GemmPlan &plan, const Step &s, size_t index) {
    std::string where = "gemm step " + std::to_string(index);
    std::vector<std::pair<PaddedOperand *, int>> operands = {
        {&plan.padA, s.a}, {&plan.padB, s.b}, {&plan.padC, s.c}};
    if (s.bias >= 0)
      operands.push_back({&plan.padBias, s.bias});
    size_t total = 0;
    for (auto [operand, buffer] : operands) {
      const TensorType &type = m.buffers[buffer].type;
      if (operand->shape == type.shape)
        continue;
      size_t bytes = size_t(product(operand->shape)) * dtypeBytes(type.dtype);
      cudaError_t status = cudaMalloc(&operand->buffer, bytes);
      if (status != cudaSuccess) {
        operand->buffer = nullptr;
        if (padMode == cuda::GemmPadMode::Always)
          check(status,
                where + ": allocating a padded operand (" + mib(bytes) + ")");
        cudaGetLastError(); // clear it: running unpadded is the fallback
        for (auto [other, unused] : operands) {
          cudaFree(other->buffer);
          other->buffer = nullptr;
        }
        return false;
      }
      check(cudaMemset(operand->buffer, 0, bytes), where);
      total += bytes;
    }
    // The clears run on the legacy stream; finish them before any step.
    check(cudaDeviceSynchronize(), where);
    padBytes[s.device] += total;
    return true;
  }

  /// The cuBLASLt plan of gemm step `s` computed with dimensions `dims`
  /// (the stored ones, or padded: then the operands' padded shapes are
  /// recorded, their buffers not yet allocated).
  GemmPlan planGemmAs(size_t index, const Step &s, const cuda::GemmDims &dims) {
    const TensorType &ta = m.buffers[s.a].type, &tb = m.buffers[s.b].type,
                     &tc = m.buffers[s.c].type;
    std::string where = "gemm step " + std::to_string(index);
    size_t rank = tc.shape.size();
    GemmPlan plan;
    plan.padA.shape =
        cuda::withMatrix(ta.shape, s.transposeA ? dims.inner : dims.rows,
                         s.transposeA ? dims.rows : dims.inner);
    plan.padB.shape =
        cuda::withMatrix(tb.shape, s.transposeB ? dims.cols : dims.inner,
                         s.transposeB ? dims.inner : dims.cols);
    plan.padC.shape = cuda::withMatrix(tc.shape, dims.rows, dims.cols);
    plan.padBias.shape = {dims.cols};
    uint64_t rows = dims.rows, cols = dims.cols, inner = dims.inner;
    int64_t batch = dims.batch;
    bool aBatched = ta.shape.size() == rank, bBatched = tb.shape.size() == rank;
    // A batch over a shared b folds into the rows when a is not transposed.
    if (batch > 1 && aBatched && !bBatched && !s.transposeA) {
      rows *= batch;
      batch = 1;
    }
    if (batch > INT32_MAX)
      throw RuntimeError("gemm step " + std::to_string(index) + ": " +
                         std::to_string(batch) +
                         " batches exceed cuBLASLt's 2^31 - 1");
    plan.alpha = static_cast<float>(s.alpha);
    plan.beta = static_cast<float>(s.beta);
    ltCheck(
        lt.cublasLtMatmulDescCreate(&plan.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F),
        where);
    cublasOperation_t opA = s.transposeB ? CUBLAS_OP_T : CUBLAS_OP_N,
                      opB = s.transposeA ? CUBLAS_OP_T : CUBLAS_OP_N;
    ltCheck(lt.cublasLtMatmulDescSetAttribute(
                plan.desc, CUBLASLT_MATMUL_DESC_TRANSA, &opA, sizeof opA),
            where);
    ltCheck(lt.cublasLtMatmulDescSetAttribute(
                plan.desc, CUBLASLT_MATMUL_DESC_TRANSB, &opB, sizeof opB),
            where);
    // The epilogue: cuBLAS's rows are the step's columns, so its bias (one
    // value per row of D) is the step's per-column bias, shared by every
    // batch (bias batch stride 0). The addend is cuBLAS's C (beta 1).
    uint32_t epilogue =
        s.activation == Activation::Relu       ? CUBLASLT_EPILOGUE_RELU
        : s.activation == Activation::GeluTanh ? CUBLASLT_EPILOGUE_GELU
                                               : CUBLASLT_EPILOGUE_DEFAULT;
    if (s.bias >= 0)
      epilogue = epilogue == CUBLASLT_EPILOGUE_DEFAULT
                     ? uint32_t(CUBLASLT_EPILOGUE_BIAS)
                     : epilogue | uint32_t(CUBLASLT_EPILOGUE_BIAS);
    ltCheck(lt.cublasLtMatmulDescSetAttribute(plan.desc,
                                              CUBLASLT_MATMUL_DESC_EPILOGUE,
                                              &epilogue, sizeof epilogue),
            where);
    if (s.addend >= 0)
      plan.beta = 1;
    auto layout = [&](cublasLtMatrixLayout_t &l, DType t, uint64_t r,
                      uint64_t c, bool batched) {
      ltCheck(lt.cublasLtMatrixLayoutCreate(&l, libraryType(t), r, c, r),
              where);
      if (batch > 1) {
        int32_t count = static_cast<int32_t>(batch);
        int64_t stride = batched ? int64_t(r * c) : 0;
        ltCheck(
            lt.cublasLtMatrixLayoutSetAttribute(
                l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count),
            where);
        ltCheck(lt.cublasLtMatrixLayoutSetAttribute(
                    l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                    sizeof stride),
                where);
      }
    };
    layout(plan.a, tb.dtype, s.transposeB ? inner : cols,
           s.transposeB ? cols : inner, bBatched);
    layout(plan.b, ta.dtype, s.transposeA ? rows : inner,
           s.transposeA ? inner : rows, aBatched);
    layout(plan.c, tc.dtype, cols, rows, true);
    cublasLtMatmulPreference_t preference;
    ltCheck(lt.cublasLtMatmulPreferenceCreate(&preference), where);
    size_t workspace = kWorkspaceBytes;
    ltCheck(lt.cublasLtMatmulPreferenceSetAttribute(
                preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                &workspace, sizeof workspace),
            where);
    cublasLtMatmulHeuristicResult_t results[kGemmCandidates] = {};
    int found = 0;
    cublasStatus_t status = lt.cublasLtMatmulAlgoGetHeuristic(
        handles[s.device], plan.desc, plan.a, plan.b, plan.c, plan.c,
        preference, gemmTune != "off" ? kGemmCandidates : 1, results, &found);
    lt.cublasLtMatmulPreferenceDestroy(preference);
    const cublasLtMatmulHeuristicResult_t &result = results[0];
    if (status != CUBLAS_STATUS_SUCCESS || found == 0)
      throw RuntimeError(where + " (" + dtypeName(ta.dtype) + " x " +
                         dtypeName(tb.dtype) + " -> " + dtypeName(tc.dtype) +
                         "): cuBLASLt has no algorithm for it (" +
                         lt.describe(status) + ")");
    plan.algo = result.algo;
    for (int i = 0; i < found; ++i)
      if (results[i].state == CUBLAS_STATUS_SUCCESS)
        plan.candidates.push_back(results[i].algo);
    return plan;
  }

  /// Runs `plan` with `algo` on the step's operands as they sit (padded
  /// copies where it has them, already filled): D is c, C is c too, or the
  /// addend (its padded copy is c's).
  cublasStatus_t matmul(const GemmPlan &plan, const Step &s,
                        const cublasLtMatmulAlgo_t &algo, cudaStream_t stream) {
    auto at = [&](const PaddedOperand &padded, int buffer) {
      return padded.buffer ? padded.buffer : address(buffer);
    };
    void *a = at(plan.padA, s.a), *b = at(plan.padB, s.b),
         *d = at(plan.padC, s.c);
    void *c = s.addend >= 0 && !plan.padC.buffer ? address(s.addend) : d;
    return lt.cublasLtMatmul(handles[s.device], plan.desc, &plan.alpha, b,
                             plan.a, a, plan.b, &plan.beta, c, plan.c, d,
                             plan.c, &algo, workspaces[workspaceOf(s)],
                             kWorkspaceBytes, stream);
  }

  /// With EIN_GEMM_TUNE=on: times each of `plan`'s candidates on the step's
  /// own buffers (still the cleared arena: the first run has not happened)
  /// and keeps the fastest, once per distinct problem (dimensions, types,
  /// transposes, scales) in the process. cuBLASLt's heuristic ranks by a
  /// model; the same shapes ran some 12% slower through its first choice
  /// than through PyTorch's kernels (docs/performance.md).
  void tuneGemm(GemmPlan &plan, const Step &s, size_t index) {
    if (plan.candidates.size() < 2)
      return;
    const TensorType &ta = m.buffers[s.a].type, &tb = m.buffers[s.b].type,
                     &tc = m.buffers[s.c].type;
    std::string key =
        std::string(dtypeName(ta.dtype)) + dtypeName(tb.dtype) +
        dtypeName(tc.dtype) + (s.transposeA ? "T" : "N") +
        (s.transposeB ? "T" : "N") + std::to_string(plan.alpha) + "/" +
        std::to_string(plan.beta) + "/" + activationName(s.activation) +
        (s.bias >= 0 ? "+bias" : "") + (s.addend >= 0 ? "+addend" : "");
    for (const std::vector<int64_t> *shape :
         {&plan.padA.shape, &plan.padB.shape, &plan.padC.shape}) {
      key += ";";
      for (int64_t d : *shape)
        key += std::to_string(d) + "x";
    }
    if (auto it = tuned.find(key); it != tuned.end()) {
      if (it->second < plan.candidates.size())
        plan.algo = plan.candidates[it->second];
      return;
    }
    std::string where = "tuning gemm step " + std::to_string(index);
    cudaStream_t stream = streams[s.device];
    cudaEvent_t begin, end;
    check(cudaEventCreate(&begin), where);
    check(cudaEventCreate(&end), where);
    // Runs candidate i `times` times between the two events; its time in ms,
    // or infinity where it cannot run here.
    auto timeCandidate = [&](size_t i, int times) {
      auto launch = [&] { return matmul(plan, s, plan.candidates[i], stream); };
      if (launch() != CUBLAS_STATUS_SUCCESS)
        return std::numeric_limits<float>::infinity();
      check(cudaEventRecord(begin, stream), where);
      for (int r = 0; r < times; ++r)
        ltCheck(launch(), where);
      check(cudaEventRecord(end, stream), where);
      check(cudaEventSynchronize(end), where);
      float ms = 0;
      check(cudaEventElapsedTime(&ms, begin, end), where);
      return ms;
    };
    bool hot = gemmTune == "hot";
    if (hot && !heated) {
      // Heat the GPU to its sustained clock before the first timing.
      float once = std::max(timeCandidate(0, 1), 1e-3f);
      int times = std::clamp(int(100 / once), 1, 10000); // ~100 ms a batch
      for (float spent = 0; spent < kGemmHeatMs;) {
        float ms = timeCandidate(0, times);
        if (!std::isfinite(ms))
          break;
        spent += ms;
      }
      heated = true;
    }
    std::vector<float> total(plan.candidates.size(), 0);
    for (int round = 0; round < (hot ? kGemmHotRounds : 1); ++round)
      for (size_t i = 0; i < plan.candidates.size(); ++i)
        total[i] += timeCandidate(i, kGemmTuneRepeats);
    size_t best = 0;
    for (size_t i = 1; i < total.size(); ++i)
      if (total[i] < total[best])
        best = i;
    cudaEventDestroy(begin);
    cudaEventDestroy(end);
    check(cudaStreamSynchronize(stream), where);
    tuned[key] = best;
    plan.algo = plan.candidates[best];
  }

  cudaEvent_t newEvent(int device) {
    check(cudaSetDevice(gpu(device)), "cudaSetDevice");
    cudaEvent_t e;
    check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming),
          "cudaEventCreate");
    events.push_back(e);
    return e;
  }

  /// The lane a step runs on (laneOfStep).
  int laneOf(const Step &s) const { return laneOfStep[&s - m.steps.data()]; }
  /// Streams per device that run kernels.
  int computeStreams() const {
    return laneMode == Lanes::Dataflow ? kDataflowStreams : 1;
  }
  int lanes() const {
    return m.devices * (laneMode == Lanes::One ? 1 : 1 + computeStreams());
  }
  cudaStream_t laneStream(int lane) const {
    return lane < m.devices ? streams[lane] : extraStreams[lane - m.devices];
  }
  /// The workspaces (cuBLASLt's, the attention's) a kernel step uses: its
  /// compute stream's.
  size_t workspaceOf(const Step &s) const {
    int k = laneOf(s) / m.devices;
    return size_t(k == 0 ? 0 : k - 1) * m.devices + s.device;
  }

  /// Every step's lane. Transfers go to the copy stream (Copy, Dataflow).
  /// In a dataflow bundle a kernel step follows the compute stream of its
  /// first dependency on its device that is a kernel step, so a chain of
  /// dependent steps stays on one stream; a step with none takes the
  /// device's compute streams in turn, so independent chains (a chunked
  /// plan's chunks) run on different streams and one waiting for a
  /// transfer does not hold back the others.
  void assignLanes() {
    laneOfStep.assign(m.steps.size(), 0);
    std::vector<int> next(m.devices, 0);
    for (size_t i = 0; i < m.steps.size(); ++i) {
      const Step &s = m.steps[i];
      int lane = s.device;
      if (s.kind == StepKind::Transfer && laneMode != Lanes::One) {
        lane = m.devices + s.device;
      } else if (laneMode == Lanes::Dataflow) {
        lane = -1;
        for (int d : s.deps)
          if (m.steps[d].device == s.device &&
              m.steps[d].kind != StepKind::Transfer) {
            lane = laneOfStep[d];
            break;
          }
        if (lane < 0) {
          int k = next[s.device]++ % kDataflowStreams;
          lane = (k == 0 ? 0 : k + 1) * m.devices + s.device;
        }
      }
      laneOfStep[i] = lane;
    }
  }

  void createEvents() {
    done.assign(m.steps.size(), nullptr);
    // (Under a launcher, a dependency on another rank's step is met by the
    // message between them.)
    for (const Step &s : m.steps)
      for (int d : s.deps)
        if (local(s.device) && local(m.steps[d].device) &&
            laneOf(m.steps[d]) != laneOf(s) && !done[d])
          done[d] = newEvent(m.steps[d].device);
    forkEvent = newEvent(firstLocal);
    join.push_back(nullptr);
    for (int lane = 1; lane < lanes(); ++lane)
      join.push_back(localLane(lane) ? newEvent(lane % m.devices) : nullptr);
    check(cudaSetDevice(gpu(firstLocal)), "cudaSetDevice");
    check(cudaEventCreate(&start), "cudaEventCreate");
    check(cudaEventCreate(&stop), "cudaEventCreate");
    events.push_back(start);
    events.push_back(stop);
  }

  unsigned char *address(int buffer) const {
    const Buffer &b = m.buffers[buffer];
    return arenas[b.device] + b.offset;
  }

  /// Every step on its device's stream, in order; other devices' steps it
  /// depends on as event waits. Stream 0 forks the others and joins them,
  /// so under capture this is one graph. With `marks`, each step's pair of
  /// events is recorded after its waits and after the step.
  void issueSchedule(
      const std::vector<std::pair<cudaEvent_t, cudaEvent_t>> *marks = nullptr) {
    check(cudaSetDevice(gpu(firstLocal)), "cudaSetDevice");
    check(cudaEventRecord(forkEvent, streams[firstLocal]), "cudaEventRecord");
    for (int lane = 0; lane < lanes(); ++lane) {
      if (lane == firstLocal || !localLane(lane))
        continue;
      check(cudaSetDevice(gpu(lane % m.devices)), "cudaSetDevice");
      check(cudaStreamWaitEvent(laneStream(lane), forkEvent, 0),
            "cudaStreamWaitEvent");
    }
    for (size_t i = 0; i < m.steps.size(); ++i) {
      const Step &s = m.steps[i];
      if (!local(s.device))
        continue; // another rank's
      check(cudaSetDevice(gpu(s.device)), "cudaSetDevice");
      cudaStream_t stream = laneStream(laneOf(s));
      for (int d : s.deps)
        if (local(m.steps[d].device) && laneOf(m.steps[d]) != laneOf(s))
          check(cudaStreamWaitEvent(stream, done[d], 0), "cudaStreamWaitEvent");
      if (marks)
        check(cudaEventRecord((*marks)[i].first, stream), "cudaEventRecord");
      issueStep(i, s, stream);
      if (marks)
        check(cudaEventRecord((*marks)[i].second, stream), "cudaEventRecord");
      if (done[i])
        check(cudaEventRecord(done[i], stream), "cudaEventRecord");
    }
    for (int lane = 0; lane < lanes(); ++lane) {
      if (lane == firstLocal || !localLane(lane))
        continue;
      check(cudaSetDevice(gpu(lane % m.devices)), "cudaSetDevice");
      check(cudaEventRecord(join[lane], laneStream(lane)), "cudaEventRecord");
      check(cudaSetDevice(gpu(firstLocal)), "cudaSetDevice");
      check(cudaStreamWaitEvent(streams[firstLocal], join[lane], 0),
            "cudaStreamWaitEvent");
    }
  }

  static dim3 gridFor(int64_t count) {
    int64_t blocks = (count + kThreads - 1) / kThreads;
    return dim3(static_cast<unsigned>(std::min<int64_t>(blocks, 65535)));
  }

  void launch(cudaKernel_t kernel, dim3 grid, dim3 block, void **args,
              size_t shared, cudaStream_t stream, const std::string &what) {
    check(cudaLaunchKernel(reinterpret_cast<const void *>(kernel), grid, block,
                           args, shared, stream),
          what);
  }

  void issueStep(size_t index, const Step &s, cudaStream_t stream) {
    std::string where = std::string(stepKindName(s.kind)) + " step " +
                        std::to_string(index) +
                        (s.label.empty() ? "" : " ('" + s.label + "')");
    switch (s.kind) {
    case StepKind::Kernel: {
      std::vector<void *> pointers;
      for (const KernelArg &a : s.args)
        pointers.push_back(address(a.buffer));
      std::vector<int64_t> scalars = s.scalars;
      std::vector<void *> params;
      for (void *&p : pointers)
        params.push_back(&p);
      for (int64_t &x : scalars)
        params.push_back(&x);
      launch(kernels.at(s.kernel),
             dim3(unsigned(s.launch.grid[0]), unsigned(s.launch.grid[1]),
                  unsigned(s.launch.grid[2])),
             dim3(unsigned(s.launch.block[0]), unsigned(s.launch.block[1]),
                  unsigned(s.launch.block[2])),
             params.data(), size_t(s.launch.sharedBytes), stream, where);
      return;
    }
    case StepKind::Library: {
      if (s.call == "conv") {
        auto *scratch =
            static_cast<unsigned char *>(attentionWorkspaces[workspaceOf(s)]);
        void *filter = address(s.b);
        if (size_t bytes = convFilterBytes.at(index)) {
          // hwcf [r, s, c, k] to fhwc [k, r, s, c]: the filter gathered
          // through the view that reads it in fhwc order.
          const std::vector<int64_t> &w = m.buffers[s.b].type.shape;
          int64_t r = w[0], sc = w[1], c = w[2], k = w[3];
          StridedView fhwc{{k, r, sc, c}, {1, sc * c * k, c * k, k}, 0};
          stridedCopy(fhwc, static_cast<unsigned char *>(filter),
                      /*toView=*/false, scratch,
                      dtypeBytes(m.buffers[s.b].type.dtype), stream, where);
          filter = scratch;
          scratch += bytes;
        }
        convs.at(index)->run(address(s.a), filter, address(s.c), scratch,
                             stream);
        return;
      }
      if (s.call == "attention") {
        runAttention(index, s, stream, where);
        return;
      }
      const GemmPlan &plan = gemms.at(index);
      // The operands' padded copies where it has them: the inputs copied
      // in, c too when the gemm accumulates into it (or the addend, which
      // the padded c then holds), and c copied out.
      auto copyIn = [&](const PaddedOperand &padded, int buffer) {
        if (!padded.buffer)
          return;
        const TensorType &t = m.buffers[buffer].type;
        copy(address(buffer), t.shape, padded.buffer, padded.shape, t, stream,
             where);
      };
      copyIn(plan.padA, s.a);
      copyIn(plan.padB, s.b);
      if (s.bias >= 0)
        copyIn(plan.padBias, s.bias);
      if (s.addend >= 0)
        copyIn(plan.padC, s.addend);
      else if (plan.beta != 0)
        copyIn(plan.padC, s.c);
      ltCheck(matmul(plan, s, plan.algo, stream), where);
      if (plan.padC.buffer) {
        const TensorType &t = m.buffers[s.c].type;
        copy(plan.padC.buffer, plan.padC.shape, address(s.c), t.shape, t,
             stream, where);
      }
      return;
    }
    case StepKind::Transfer:
      if (betweenNodes(s))
        transferBetweenNodes(index, s, stream, where);
      else
        transfer(s, stream, where);
      return;
    case StepKind::Aggregate:
      aggregate(s, stream, where);
      return;
    }
  }

  /// Whether a copy of `bytes` runs on the copy kernel (EIN_CUDA_COPY).
  bool useCopyKernel(int64_t bytes) const {
    if (copyMode != "auto")
      return copyMode == "kernel";
    return bytes < chipInfo(m.chip).copyKernelBelowBytes;
  }

  /// A transfer step: one copy as planned; a batch's copies that run on the
  /// copy kernel in launches of up to kMaxBatchCopies, the others one call
  /// each.
  void transfer(const Step &s, cudaStream_t stream, const std::string &where) {
    std::vector<cuda::CopyPlan> kernels;
    for (const Step::Copy &c : s.copies) {
      const Buffer &from = m.buffers[c.src.buffer],
                   &to = m.buffers[c.dst.buffer];
      cuda::CopyPlan plan;
      try {
        plan = cuda::planCopy(
            address(c.src.buffer), from.type.shape, c.src.offset,
            address(c.dst.buffer), to.type.shape, c.dst.offset, c.src.extent,
            dtypeBytes(from.type.dtype),
            useCopyKernel(product(c.src.extent) * dtypeBytes(from.type.dtype)));
      } catch (const std::invalid_argument &e) {
        throw RuntimeError(where + ": " + e.what());
      }
      if (plan.kind == cuda::CopyPlan::Kernel && s.copies.size() > 1)
        kernels.push_back(plan);
      else
        issueCopy(plan, stream, where);
    }
    for (size_t first = 0; first < kernels.size();
         first += cuda::kMaxBatchCopies) {
      cuda::CopyBatchParams p = {};
      int64_t most = 0;
      for (size_t i = first;
           i < kernels.size() && p.count < cuda::kMaxBatchCopies; ++i) {
        p.copies[p.count++] = kernels[i].kernel;
        most = std::max(most, kernels[i].kernel.count);
      }
      void *args[] = {&p};
      dim3 grid = gridFor(most);
      grid.y = static_cast<unsigned>(p.count);
      launch(copyBatchKernel, grid, dim3(kThreads), args, 0, stream, where);
    }
  }

  /// A transfer between nodes: the sending rank packs each copy's source
  /// region, dense, into the step's staging buffer after the step's waits
  /// and sends the message (NCCL: ncclSend on the stream; MPI: once the
  /// stream is done, from the host); the receiving rank receives it (NCCL:
  /// ncclRecv on the stream; MPI: into pinned memory, on the host) and
  /// copies it out to the destinations on the stream, where the step's
  /// consumers wait for it. The message is the CPU backend's
  /// (cpu_backend.cpp), and like it each rank sends or receives at the
  /// step's place in the schedule.
  void transferBetweenNodes(size_t index, const Step &s, cudaStream_t stream,
                            const std::string &where) {
    auto [fromDevice, toDevice] = m.transferEnds(s);
    int from = m.nodeOf(fromDevice), to = m.nodeOf(toDevice);
    bool sending = from == node;
    unsigned char *message = staging.at(index);
    size_t total = m.messageBytes(s);
    std::string what = "transfer step " + std::to_string(index) +
                       (s.label.empty() ? "" : " '" + s.label + "'") + ", " +
                       std::to_string(total) + " bytes";
    if (!sending && transport == Transport::Nccl)
      nccl->receive(fromDevice, toDevice, message, total, stream);
    else if (!sending)
      options.ranks->receive(from, message, total, what);
    size_t at = 0;
    for (const Step::Copy &c : s.copies) {
      const Region &r = sending ? c.src : c.dst;
      const Buffer &b = m.buffers[r.buffer];
      int width = dtypeBytes(b.type.dtype);
      std::vector<int64_t> origin(r.extent.size(), 0);
      cuda::CopyPlan plan;
      try {
        // The copy engine where one call does; the copy kernel (through the
        // mapping, for host staging) where not.
        plan = sending ? cuda::planCopy(address(r.buffer), b.type.shape,
                                        r.offset, message + at, r.extent,
                                        origin, r.extent, width, false)
                       : cuda::planCopy(message + at, r.extent, origin,
                                        address(r.buffer), b.type.shape,
                                        r.offset, r.extent, width, false);
      } catch (const std::invalid_argument &e) {
        throw RuntimeError(where + ": " + e.what());
      }
      issueCopy(plan, stream, where);
      at += size_t(product(r.extent)) * width;
    }
    if (sending && transport == Transport::Nccl) {
      nccl->send(fromDevice, toDevice, message, total, stream);
    } else if (sending) {
      check(cudaStreamSynchronize(stream),
            where + ": copying the message to the host");
      options.ranks->send(to, message, total, what);
    }
  }

  /// An attention step's q, k, v and o views in that order (absent: read
  /// or written whole).
  static std::array<const std::optional<StridedView> *, 4>
  attentionViews(const Step &s) {
    return {&s.qView, &s.kView, &s.vView, &s.oView};
  }

  /// The workspace bytes a dense copy of `shape` takes, 256-byte aligned.
  static size_t stagedBytes(const std::vector<int64_t> &shape, DType dtype) {
    return (size_t(product(shape)) * dtypeBytes(dtype) + 255) / 256 * 256;
  }

  /// Attention step `index`: in place, or through dense copies of its views
  /// where its implementation reads dense tensors only.
  void runAttention(size_t index, const Step &s, cudaStream_t stream,
                    const std::string &where) {
    // What the implementation reads and writes: each buffer, at its view's
    // offset, or (staged) a dense copy of its view in the workspace.
    std::array<void *, 4> operand = {address(s.q), address(s.k), address(s.v),
                                     address(s.o)};
    auto *scratch =
        static_cast<unsigned char *>(attentionWorkspaces[workspaceOf(s)]);
    DType dtype = m.buffers[s.q].type.dtype;
    int width = dtypeBytes(dtype);
    bool staged = attentionStagedBytes.at(index) > 0;
    for (int t = 0; t < 4; ++t) {
      const std::optional<StridedView> &view = *attentionViews(s)[t];
      if (!view)
        continue;
      auto *base = static_cast<unsigned char *>(operand[t]);
      if (!staged) {
        operand[t] = base + view->offset * width;
        continue;
      }
      operand[t] = scratch;
      scratch += stagedBytes(view->shape, dtype);
      if (t < 3)
        stridedCopy(*view, base, /*toView=*/false, operand[t], width, stream,
                    where);
    }
    attentions.at(index)->run(
        operand[0], operand[1], operand[2], operand[3],
        s.lse >= 0 ? reinterpret_cast<float *>(address(s.lse)) : nullptr,
        scratch, stream);
    if (staged && s.oView)
      stridedCopy(*s.oView, static_cast<unsigned char *>(address(s.o)),
                  /*toView=*/true, operand[3], width, stream, where);
  }

  /// Copies between a view of `base` and a dense tensor of its shape at
  /// `dense`, into the view where `toView`.
  void stridedCopy(const StridedView &view, unsigned char *base, bool toView,
                   void *dense, int width, cudaStream_t stream,
                   const std::string &where) {
    cuda::CopyParams p{};
    unsigned char *viewed = base + view.offset * width;
    p.src = toView ? static_cast<const unsigned char *>(dense) : viewed;
    p.dst = toView ? viewed : static_cast<unsigned char *>(dense);
    p.rank = int32_t(view.shape.size());
    p.width = width;
    int64_t stride = 1;
    for (int d = p.rank - 1; d >= 0; --d) {
      p.extent[d] = view.shape[d];
      (toView ? p.srcStride : p.dstStride)[d] = stride;
      (toView ? p.dstStride : p.srcStride)[d] = view.strides[d];
      stride *= view.shape[d];
    }
    p.count = stride;
    void *args[] = {&p};
    launch(copyKernel, gridFor(p.count), dim3(kThreads), args, 0, stream,
           where);
  }

  /// Copies the whole of a `type` tensor into the leading corner of a
  /// larger one of shape `toShape` (or back: `fromShape` the larger), on one
  /// device: a padded gemm operand.
  void copy(const void *from, const std::vector<int64_t> &fromShape, void *to,
            const std::vector<int64_t> &toShape, const TensorType &type,
            cudaStream_t stream, const std::string &where) {
    std::vector<int64_t> origin(type.shape.size(), 0);
    cuda::CopyPlan plan;
    try {
      plan = cuda::planCopy(
          static_cast<const unsigned char *>(from), fromShape, origin,
          static_cast<unsigned char *>(to), toShape, origin, type.shape,
          dtypeBytes(type.dtype),
          useCopyKernel(type.numElements() * dtypeBytes(type.dtype)));
    } catch (const std::invalid_argument &e) {
      throw RuntimeError(where + ": " + e.what());
    }
    issueCopy(plan, stream, where);
  }

  void issueCopy(cuda::CopyPlan plan, cudaStream_t stream,
                 const std::string &where) {
    switch (plan.kind) {
    case cuda::CopyPlan::Contiguous:
      check(cudaMemcpyAsync(plan.dst, plan.src, plan.bytes, cudaMemcpyDefault,
                            stream),
            where);
      return;
    case cuda::CopyPlan::TwoD:
      check(cudaMemcpy2DAsync(plan.dst, plan.dstPitch, plan.src, plan.srcPitch,
                              plan.bytes, plan.rows, cudaMemcpyDefault, stream),
            where);
      return;
    case cuda::CopyPlan::Kernel: {
      void *args[] = {&plan.kernel};
      launch(copyKernel, gridFor(plan.kernel.count), dim3(kThreads), args, 0,
             stream, where);
      return;
    }
    }
  }

  /// One launch reads every partial (the manifest allows at most
  /// kMaxAggregateInputs) and writes the output once, in place or not.
  void aggregate(const Step &s, cudaStream_t stream, const std::string &where) {
    const Buffer &out = m.buffers[s.output];
    cuda::AggregateParams p = {};
    p.out = address(s.output);
    p.outType = elementType(out.type.dtype);
    p.op = s.op == Agg::Add   ? cuda::Add
           : s.op == Agg::Max ? cuda::Max
           : s.op == Agg::Min ? cuda::Min
                              : cuda::Mul;
    p.count = out.type.numElements();
    for (int id : s.inputs) {
      p.in[p.inputs] = address(id);
      p.inType[p.inputs++] = elementType(m.buffers[id].type.dtype);
    }
    void *args[] = {&p};
    launch(aggregateKernel, gridFor(p.count), dim3(kThreads), args, 0, stream,
           where);
  }

  void synchronize(const std::string &what) {
    if (transport == Transport::Nccl)
      waitForStreams(what);
    for (int lane = 0; lane < lanes(); ++lane) {
      if (!localLane(lane))
        continue;
      check(cudaSetDevice(gpu(lane % m.devices)), "cudaSetDevice");
      check(cudaStreamSynchronize(laneStream(lane)), what);
    }
    check(cudaGetLastError(), what);
  }

  /// Under NCCL, a step whose peer died would wait forever in ncclRecv:
  /// polls every stream of this rank against the rank timeout (ranks.h),
  /// and past it, or on an NCCL error, aborts the communicators (which ends
  /// the operations in flight), takes the run for broken and throws,
  /// naming the ranks this one exchanges with.
  void waitForStreams(const std::string &what) {
    double timeout = rankTimeoutSeconds();
    std::string failed; // NCCL's asynchronous error, once there is one
    bool idle = false;
    pollUntil(timeout, [&] {
      idle = true;
      for (int lane = 0; lane < lanes() && idle; ++lane) {
        if (!localLane(lane))
          continue;
        check(cudaSetDevice(gpu(lane % m.devices)), "cudaSetDevice");
        cudaError_t status = cudaStreamQuery(laneStream(lane));
        if (status == cudaErrorNotReady)
          idle = false;
        else
          check(status, what);
      }
      if (!idle)
        failed = nccl->asyncError();
      return idle || !failed.empty();
    });
    if (idle)
      return;
    std::string ranks;
    for (int p : peers)
      ranks += (ranks.empty() ? "" : ", ") + std::to_string(p);
    std::string who = peers.empty()       ? std::string("another rank")
                      : peers.size() == 1 ? "rank " + ranks
                                          : "one of ranks " + ranks;
    nccl->abort();
    options.ranks->abandon();
    throw RuntimeError(
        options.ranks->prefix() + what + ": " +
        (failed.empty()
             ? "waited " + secondsText(timeout) +
                   " s for the step's NCCL transfers: " + who +
                   " has died or hangs (EIN_RANK_TIMEOUT sets the "
                   "wait)"
             : "NCCL failed (" + failed + "); " + who + " has likely died"));
  }

  /// Under a launcher, how transfers between nodes move: every rank's GPUs
  /// (by UUID) are gathered at rank 0, which chooses (chooseGpuTransport;
  /// auto falls back to MPI where NCCL does not load there) and broadcasts
  /// the choice with NCCL's id; every rank then opens its devices'
  /// communicators.
  void chooseTransport() {
    if (node < 0)
      return;
    Communicator &ranks = *options.ranks;
    for (const Step &s : m.steps)
      if (local(s.device) && betweenNodes(s)) {
        auto [from, to] = m.transferEnds(s);
        peers.insert(m.nodeOf(from) != node ? m.nodeOf(from) : m.nodeOf(to));
      }
    // This node's devices, their GPUs, and those GPUs' identities.
    std::vector<int> devices, ordinals;
    std::string mine;
    for (int d = firstLocal; d < firstLocal + m.devicesPerNode(); ++d) {
      cudaDeviceProp props;
      check(cudaGetDeviceProperties(&props, gpu(d)), "cudaGetDeviceProperties");
      mine.append(props.uuid.bytes, sizeof props.uuid.bytes);
      devices.push_back(d);
      ordinals.push_back(gpu(d));
    }
    std::vector<std::string> all = ranks.gather(mine, "the ranks' GPUs");
    // Rank 0's verdict: "mpi:" or "nccl:" and why (NCCL's id after a
    // newline), or "!" and the error.
    std::string verdict;
    if (node == 0) {
      GpuTransport choice = chooseGpuTransport(
          options.transport, all, sizeof(cudaUUID_t), m.devicesPerNode());
      if (choice.kind == GpuTransport::Kind::Refused) {
        verdict = "!" + choice.why;
      } else if (choice.kind == GpuTransport::Kind::Mpi) {
        verdict = "mpi:" + choice.why;
      } else {
        try {
          const cuda::Nccl &n = cuda::nccl();
          cuda::NcclUniqueId id;
          n.check(n.getUniqueId(&id), "ncclGetUniqueId");
          verdict = "nccl:" + choice.why + "\n" +
                    std::string(id.internal, sizeof id.internal);
        } catch (const RuntimeError &e) {
          verdict = options.transport == "nccl"
                        ? "!EIN_TRANSPORT=nccl: " + std::string(e.what())
                        : "mpi:EIN_TRANSPORT=auto, NCCL not usable on rank "
                          "0 (" +
                              std::string(e.what()) + ")";
        }
      }
    }
    verdict = ranks.broadcast(verdict, "the transport between nodes");
    if (verdict.empty() || verdict[0] == '!')
      throw RuntimeError(ranks.prefix() + verdict.substr(1));
    if (verdict.rfind("mpi:", 0) == 0) {
      transport = Transport::Mpi;
      transportWhy = verdict.substr(4);
      return;
    }
    size_t newline = verdict.find('\n');
    cuda::NcclUniqueId id;
    if (newline == std::string::npos ||
        verdict.size() - newline - 1 != sizeof id.internal)
      throw RuntimeError(ranks.prefix() + "rank 0's NCCL id is malformed");
    std::memcpy(id.internal, verdict.data() + newline + 1, sizeof id.internal);
    transport = Transport::Nccl;
    transportWhy = verdict.substr(5, newline - 5);
    try {
      nccl =
          std::make_unique<cuda::NcclGroup>(id, m.devices, devices, ordinals);
    } catch (const RuntimeError &e) {
      throw RuntimeError(ranks.prefix() +
                         "opening NCCL's communicators: " + e.what());
    }
  }

  void capture() {
    cudaStream_t first = streams[firstLocal];
    check(cudaSetDevice(gpu(firstLocal)), "cudaSetDevice");
    check(cudaStreamBeginCapture(first, cudaStreamCaptureModeThreadLocal),
          "beginning the graph capture");
    try {
      issueSchedule();
    } catch (...) {
      cudaGraph_t partial = nullptr;
      cudaSetDevice(gpu(firstLocal));
      cudaStreamEndCapture(first, &partial);
      if (partial)
        cudaGraphDestroy(partial);
      throw;
    }
    check(cudaSetDevice(gpu(firstLocal)), "cudaSetDevice");
    check(cudaStreamEndCapture(first, &graph), "capturing the schedule");
    check(cudaGraphGetNodes(graph, nullptr, &graphNodes), "cudaGraphGetNodes");
    // Every step is at least one node (this rank's only, under a launcher).
    size_t least =
        std::count_if(m.steps.begin(), m.steps.end(),
                      [&](const Step &s) { return local(s.device); });
    if (graphNodes < least)
      throw RuntimeError("the captured graph has " +
                         std::to_string(graphNodes) +
                         " nodes, fewer than the schedule's " +
                         std::to_string(least) + " steps need");
    check(cudaGraphInstantiate(&exec, graph, 0), "instantiating the graph");
  }

  /// Debug mode: every byte of every arena that no input holds becomes 0xff.
  void poison() {
    for (int d = 0; d < m.devices; ++d) {
      if (!local(d))
        continue;
      check(cudaSetDevice(gpu(d)), "cudaSetDevice");
      for (auto [first, last] : nonInputSpans(m, d))
        check(
            cudaMemsetAsync(arenas[d] + first, 0xff, last - first, streams[d]),
            "poisoning the arena");
      check(cudaStreamSynchronize(streams[d]), "poisoning the arena");
    }
  }
};

} // namespace

std::unique_ptr<DeviceBackend>
createCudaBackend(const Bundle &bundle, const BackendOptions &options) {
  return std::make_unique<CudaBackend>(bundle, options);
}

} // namespace ein
