//===- runtime.cpp - The C API over bundles and backends ------------------===//

#include "ein/runtime.h"

#include "backend.h"
#include "ein/chip.h"
#include "ein/partition.h"
#include "ein/program.h"
#include "ein/region.h"
#include "ranks.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <vector>

struct ein_bundle {
  ein::Bundle bundle;
  /// The load's device map (ein_load_options), checked; empty: none.
  std::vector<int> deviceMap;
  /// A run of several ranks: this process's link to the others (null for a
  /// single process). Declared before the backend, which uses it, so it
  /// outlives it.
  std::unique_ptr<ein::Communicator> ranks;
  /// EIN_TRANSPORT, read when the ranks are joined (BackendOptions).
  std::string transport = "auto";
  std::unique_ptr<ein::DeviceBackend> backend;
  std::vector<bool> inputSet;
  bool ran = false;
  mutable std::string description;
};

namespace {

thread_local std::string lastError;

ein_status failure(const std::string &message) {
  lastError = message;
  return EIN_ERROR;
}

/// The bundles ein_bundle_load made and ein_bundle_free has not freed. A
/// handle is looked up here before anything reads it, so NULL (what the
/// Python package passes once a bundle is closed), a freed handle or a stray
/// pointer is an error instead of a crash. Never destroyed: a bundle may be
/// freed from another static's destructor at exit.
std::mutex &liveMutex() {
  static std::mutex *mutex = new std::mutex;
  return *mutex;
}
std::set<const ein_bundle *> &liveBundles() {
  static std::set<const ein_bundle *> *live = new std::set<const ein_bundle *>;
  return *live;
}

/// Whether `bundle` is one to use; sets the error naming `function` if not.
bool isLive(const ein_bundle *bundle, const char *function) {
  if (!bundle) {
    failure(std::string(function) + ": the bundle handle is NULL");
    return false;
  }
  std::lock_guard<std::mutex> lock(liveMutex());
  if (!liveBundles().count(bundle)) {
    failure(std::string(function) +
            ": not a bundle ein_bundle_load returned (or one ein_bundle_free "
            "has freed)");
    return false;
  }
  return true;
}

/// Runs `body`, turning what it throws into an error status.
template <typename Body> ein_status guarded(Body &&body) {
  try {
    return body();
  } catch (const std::bad_alloc &) {
    return failure("out of host memory");
  } catch (const std::exception &e) {
    return failure(e.what());
  }
}

const ein::TensorLayout *layout(const ein_bundle *b, bool output, int index) {
  const auto &list =
      output ? b->bundle.manifest.outputs : b->bundle.manifest.inputs;
  if (index < 0 || size_t(index) >= list.size())
    return nullptr;
  return &list[index];
}

size_t tensorBytes(const ein::TensorType &type) {
  return size_t(type.numElements()) * ein::dtypeBytes(type.dtype);
}

ein_status info(const ein_bundle *b, bool output, int index,
                ein_tensor_info *out) {
  const ein::TensorLayout *l = layout(b, output, index);
  if (!l)
    return failure(std::string("no ") + (output ? "output " : "input ") +
                   std::to_string(index));
  out->dtype = ein::dtypeName(l->type.dtype);
  out->rank = static_cast<int>(l->type.shape.size());
  out->shape = l->type.shape.data();
  out->bytes = tensorBytes(l->type);
  return EIN_OK;
}

/// The sizes a data pointer must come with; an error status otherwise.
ein_status checkBytes(const ein::TensorLayout *l, bool output, int index,
                      const void *data, size_t bytes) {
  const char *what = output ? "output " : "input ";
  if (!l)
    return failure(std::string("no ") + what + std::to_string(index));
  if (!data)
    return failure(std::string(what) + std::to_string(index) +
                   ": null data pointer");
  if (bytes != tensorBytes(l->type))
    return failure(std::string(what) + std::to_string(index) + " holds " +
                   std::to_string(tensorBytes(l->type)) + " bytes, got " +
                   std::to_string(bytes));
  return EIN_OK;
}

/// Copies block `p` out of a whole dense tensor into the block's own bytes
/// (`toBlock`), or from the block's bytes into its place in the tensor.
void copyBlock(const ein::TensorLayout &l, const ein::Buffer &buffer,
               const ein::BlockPlacement &p, const unsigned char *from,
               unsigned char *to, bool toBlock) {
  std::vector<int64_t> origin(buffer.type.shape.size(), 0);
  int width = ein::dtypeBytes(l.type.dtype);
  if (toBlock)
    ein::copyRegion(from, l.type.shape, p.offset, to, buffer.type.shape, origin,
                    buffer.type.shape, width);
  else
    ein::copyRegion(from, buffer.type.shape, origin, to, l.type.shape, p.offset,
                    buffer.type.shape, width);
}

/// The distinct GPUs the bundle runs on (ein_bundle_gpus).
int gpusOf(const ein_bundle *b) {
  const ein::Manifest &m = b->bundle.manifest;
  if (m.backend != ein::Backend::Cuda)
    return 0;
  if (b->deviceMap.empty())
    return m.devices;
  return int(std::set<int>(b->deviceMap.begin(), b->deviceMap.end()).size());
}

/// This process's rank (0 for a single process).
int rankOf(const ein_bundle *b) { return b->ranks ? b->ranks->rank() : 0; }

/// The rank that holds buffer `buffer`.
int ownerOf(const ein_bundle *b, int buffer) {
  const ein::Manifest &m = b->bundle.manifest;
  return b->ranks ? m.nodeOf(m.buffers[buffer].device) : 0;
}

/// Scatters the dense tensor `data` of layout `l` into its blocks. In a run
/// of several ranks, `data` is rank 0's, which sends each block to the rank
/// that holds it; with `everywhere`, every rank has `data` (a constant) and
/// fills its own blocks.
void scatter(ein_bundle *b, const ein::TensorLayout &l,
             const unsigned char *data, bool everywhere = false) {
  const ein::Manifest &m = b->bundle.manifest;
  int rank = rankOf(b);
  std::vector<unsigned char> block;
  for (size_t k = 0; k < l.blocks.size(); ++k) {
    const ein::BlockPlacement &p = l.blocks[k];
    const ein::Buffer &buffer = m.buffers[p.buffer];
    int owner = ownerOf(b, p.buffer);
    bool local = owner == rank;
    // Rank 0 sends an input's blocks that other ranks hold; they receive.
    bool moves = !everywhere && owner != 0;
    if (!local && !(moves && rank == 0))
      continue;
    block.resize(buffer.bytes());
    std::string what =
        moves ? "block " + std::to_string(k) + " of an input" : "";
    if (moves && local)
      b->ranks->receive(0, block.data(), block.size(), what);
    else
      copyBlock(l, buffer, p, data, block.data(), /*toBlock=*/true);
    if (local)
      b->backend->writeBuffer(p.buffer, block.data());
    else
      b->ranks->send(owner, block.data(), block.size(), what);
  }
}

/// The blocks an output is read from: one of each set of replicas (blocks
/// of one region), rank 0's where it holds one.
std::vector<size_t> outputBlocks(const ein_bundle *b,
                                 const ein::TensorLayout &l) {
  const ein::Manifest &m = b->bundle.manifest;
  std::vector<size_t> chosen;
  for (size_t k = 0; k < l.blocks.size(); ++k) {
    const ein::BlockPlacement &p = l.blocks[k];
    auto same = std::find_if(chosen.begin(), chosen.end(), [&](size_t j) {
      const ein::BlockPlacement &q = l.blocks[j];
      return q.offset == p.offset &&
             m.buffers[q.buffer].type.shape == m.buffers[p.buffer].type.shape;
    });
    if (same == chosen.end())
      chosen.push_back(k);
    else if (ownerOf(b, p.buffer) == 0 && ownerOf(b, l.blocks[*same].buffer))
      *same = k;
  }
  return chosen;
}

/// Output `index` (of layout `l`) of the last run, gathered from its
/// blocks into rank 0's `data` (every rank calls it; the others' `data` is
/// not read).
void gatherOutput(const ein_bundle *b, const ein::TensorLayout &l, int index,
                  unsigned char *data) {
  const ein::Manifest &m = b->bundle.manifest;
  int rank = rankOf(b);
  std::vector<unsigned char> block;
  for (size_t k : outputBlocks(b, l)) {
    const ein::BlockPlacement &p = l.blocks[k];
    const ein::Buffer &buffer = m.buffers[p.buffer];
    int owner = ownerOf(b, p.buffer);
    if (rank != 0 && owner != rank)
      continue;
    block.resize(buffer.bytes());
    std::string what =
        "block " + std::to_string(k) + " of output " + std::to_string(index);
    if (owner == rank)
      b->backend->readBuffer(p.buffer, block.data());
    else
      b->ranks->receive(owner, block.data(), block.size(), what);
    if (rank == 0)
      copyBlock(l, buffer, p, block.data(), data, /*toBlock=*/false);
    else
      b->ranks->send(0, block.data(), block.size(), what);
  }
}

/// Every rank's bundle is this one (the same manifest) and the launcher
/// started one process per node; otherwise throws, on every rank, the
/// same verdict.
void checkAgreement(ein_bundle *b) {
  ein::Communicator &c = *b->ranks;
  const ein::Manifest &m = b->bundle.manifest;
  std::string mine = b->bundle.manifestSha256 + " " + std::to_string(m.nodes);
  std::string verdict;
  if (c.rank() == 0) {
    std::vector<std::string> all = c.gather(mine, "the bundle's hash");
    for (size_t r = 1; r < all.size() && verdict.empty(); ++r)
      if (all[r].substr(0, 64) != b->bundle.manifestSha256)
        verdict = "rank " + std::to_string(r) +
                  " runs another bundle than rank 0 (its manifest.json's "
                  "SHA-256 is " +
                  all[r].substr(0, 16) + "..., rank 0's " +
                  b->bundle.manifestSha256.substr(0, 16) + "...)";
    if (verdict.empty() && m.nodes != c.size())
      verdict = "the bundle is for " + std::to_string(m.nodes) + " node" +
                (m.nodes == 1 ? "" : "s") + ", one process each, but " +
                std::to_string(c.size()) + " processes were started";
  } else {
    c.gather(mine, "the bundle's hash");
  }
  verdict = c.broadcast(verdict, "the ranks' agreement");
  if (!verdict.empty())
    throw ein::RuntimeError(c.prefix() + verdict);
}

/// EIN_TRANSPORT for a CUDA bundle's ranks: "auto" (the default: NCCL
/// where every device of the run has a GPU of its own, MPI otherwise),
/// "mpi" or "nccl"; throws RuntimeError naming the variable for anything
/// else.
std::string cudaTransport() {
  const char *value = std::getenv("EIN_TRANSPORT");
  if (!value || !*value)
    return "auto";
  std::string text = value;
  if (text != "auto" && text != "mpi" && text != "nccl")
    throw ein::RuntimeError("EIN_TRANSPORT='" + text +
                            "' is not a transport between GPU processes: "
                            "auto (the default), mpi or nccl");
  return text;
}

/// Joins the ranks a launcher started, if any (a launch of one process for
/// a bundle of one node needs none).
void joinRanks(ein_bundle *b) {
  const ein::Manifest &m = b->bundle.manifest;
  ein::Launch launch = ein::detectLaunch();
  if (launch.kind == ein::Launch::Kind::None ||
      (launch.size == 1 && m.nodes == 1))
    return;
  std::string where = "rank " + std::to_string(launch.rank) + " of " +
                      std::to_string(launch.size) + ": ";
  if (launch.size == 1)
    throw ein::RuntimeError(
        where + "the bundle is for " + std::to_string(m.nodes) +
        " nodes, one process each, but 1 process was started (launch " +
        std::to_string(m.nodes) +
        " processes, or run it without a launcher to run " +
        "every node in one process)");
  bool cuda = m.backend == ein::Backend::Cuda;
  if (cuda) {
    // The transport is chosen with the ranks' GPUs known (cuda_backend.cpp);
    // its variable is read here, so a bad value stops every rank at once.
    try {
      b->transport = cudaTransport();
    } catch (const ein::RuntimeError &e) {
      throw ein::RuntimeError(where + e.what());
    }
  }
  if (launch.kind == ein::Launch::Kind::Torchrun)
    throw ein::RuntimeError(
        where +
        (cuda ? "the ranks of a CUDA bundle meet through MPI (which shares "
                "NCCL's id and carries the MPI transport)"
              : "the ranks of a CPU bundle talk through MPI, which starts "
                "them") +
        ": launch with mpirun -n " + std::to_string(m.nodes) +
        " instead of torchrun-style variables");
  try {
    b->ranks = ein::openMpiCommunicator(launch);
  } catch (const ein::RuntimeError &e) {
    throw ein::RuntimeError(where + e.what());
  }
  checkAgreement(b);
}

/// Fills the bundle's constants from program.json's values (checkAgreement
/// made sure each names a constant op of its type).
void fillConstants(ein_bundle *b) {
  for (const ein::TensorLayout &l : b->bundle.manifest.constants) {
    const ein::Op *op = ein::constantOp(b->bundle.program, l.value);
    int width = ein::dtypeBytes(l.type.dtype);
    std::vector<unsigned char> dense(tensorBytes(l.type));
    for (int64_t i = 0, n = l.type.numElements(); i < n; ++i)
      ein::encodeElement(l.type.dtype,
                         op->values.size() == 1 ? op->values[0] : op->values[i],
                         dense.data() + i * width);
    scatter(b, l, dense.data(), /*everywhere=*/true);
  }
}

/// "0,0,1" for messages.
std::string mapText(const std::vector<int> &map) {
  std::string text;
  for (int gpu : map)
    text += (text.empty() ? "" : ",") + std::to_string(gpu);
  return text;
}

/// The device map of `options` (the fields the caller's `size` covers),
/// checked for what needs no bundle: a count of 0 or more, entries where
/// there are some, each 0 or more. Throws RuntimeError.
std::vector<int> readDeviceMap(const ein_load_options &options, size_t size) {
  if (size < sizeof(ein_load_options))
    return {};
  int count = options.device_map_size;
  if (count < 0)
    throw ein::RuntimeError("the device map has a negative size (" +
                            std::to_string(count) + ")");
  if (count > 0 && !options.device_map)
    throw ein::RuntimeError("the device map has " + std::to_string(count) +
                            " entries but a NULL pointer to them");
  std::vector<int> map(options.device_map, options.device_map + count);
  for (int d = 0; d < count; ++d)
    if (map[d] < 0)
      throw ein::RuntimeError("the device map " + mapText(map) +
                              " puts device " + std::to_string(d) + " on GPU " +
                              std::to_string(map[d]) +
                              ": a GPU is a CUDA device index, 0 or more");
  return map;
}

/// Checks `map` against the bundle it is for: the CUDA backend's only, one
/// entry per device this process holds (every device, or under a launcher
/// its node's; `ranks` says which: null before joining or without one).
void checkDeviceMap(const ein::Manifest &m, const std::vector<int> &map,
                    const ein::Communicator *ranks, bool countToo) {
  if (map.empty())
    return;
  if (m.backend != ein::Backend::Cuda)
    throw ein::RuntimeError(
        "the device map " + mapText(map) +
        " applies to the CUDA backend, and this bundle targets " +
        ein::backendName(m.backend) +
        " (its devices are virtual GPUs in this process's memory)");
  if (!countToo)
    return;
  if (ranks) {
    int held = m.devicesPerNode();
    if (int(map.size()) != held)
      throw ein::RuntimeError(
          ranks->prefix() + "the device map " + mapText(map) + " has " +
          std::to_string(map.size()) + " entr" +
          (map.size() == 1 ? "y" : "ies") + ", but this rank holds " +
          std::to_string(held) + " device" + (held == 1 ? "" : "s") +
          " (under a launcher the map names the GPU of each device of the "
          "rank's node, one entry each)");
    return;
  }
  if (int(map.size()) != m.devices)
    throw ein::RuntimeError(
        "the device map " + mapText(map) + " has " +
        std::to_string(map.size()) + " entr" + (map.size() == 1 ? "y" : "ies") +
        ", but the bundle has " + std::to_string(m.devices) + " device" +
        (m.devices == 1 ? "" : "s") +
        " (one entry per device: the GPU it runs on)");
}

} // namespace

extern "C" {

const char *ein_last_error(void) { return lastError.c_str(); }

ein_status ein_bundle_load(const char *directory,
                           const ein_load_options *options,
                           ein_bundle **bundle) {
  // The struct as it first was: `debug` alone.
  return ein_bundle_load_with(
      directory, options, offsetof(ein_load_options, device_map_size), bundle);
}

ein_status ein_bundle_load_with(const char *directory,
                                const ein_load_options *options,
                                size_t options_size, ein_bundle **bundle) {
  if (!directory || !bundle)
    return failure("ein_bundle_load: null argument");
  *bundle = nullptr;
  // The sizes the struct has had: `debug` alone, then with the device map.
  constexpr size_t first = offsetof(ein_load_options, device_map_size);
  if (options && options_size != first && options_size != sizeof *options)
    return failure("ein_bundle_load_with: options_size is " +
                   std::to_string(options_size) +
                   " bytes, which is no size ein_load_options has had (" +
                   std::to_string(first) + " or " +
                   std::to_string(sizeof *options) +
                   "): pass sizeof(ein_load_options) of the runtime.h you "
                   "built against");
  // The caller's bytes of the struct, the rest left zero.
  ein_load_options given = {};
  if (options)
    std::memcpy(&given, options, options_size);
  return guarded([&] {
    auto b = std::make_unique<ein_bundle>();
    b->deviceMap = readDeviceMap(given, options ? options_size : 0);
    std::string error;
    if (!ein::readBundle(directory, b->bundle, error))
      return failure(error);
    // Its size once the ranks are known: under a launcher, one entry per
    // device of the rank's node.
    checkDeviceMap(b->bundle.manifest, b->deviceMap, nullptr,
                   /*countToo=*/false);
    joinRanks(b.get());
    checkDeviceMap(b->bundle.manifest, b->deviceMap, b->ranks.get(),
                   /*countToo=*/true);
    ein::BackendOptions backendOptions;
    backendOptions.debug = given.debug;
    backendOptions.ranks = b->ranks.get();
    backendOptions.deviceMap = b->deviceMap;
    backendOptions.transport = b->transport;
    switch (b->bundle.manifest.backend) {
    case ein::Backend::Cpu:
      b->backend = ein::createCpuBackend(b->bundle, backendOptions);
      break;
    case ein::Backend::Cuda:
#ifdef EIN_HAVE_CUDA
      b->backend = ein::createCudaBackend(b->bundle, backendOptions);
      break;
#else
      return failure(std::string("the bundle targets ") +
                     ein::backendName(ein::Backend::Cuda) +
                     ", but this runtime was built without its CUDA backend");
#endif
    }
    fillConstants(b.get());
    b->inputSet.assign(b->bundle.manifest.inputs.size(), false);
    {
      std::lock_guard<std::mutex> lock(liveMutex());
      liveBundles().insert(b.get());
    }
    *bundle = b.release();
    return EIN_OK;
  });
}

void ein_bundle_free(ein_bundle *bundle) {
  if (!bundle)
    return; // as free(NULL)
  {
    std::lock_guard<std::mutex> lock(liveMutex());
    // Freed twice, or never loaded: refused, not freed again.
    if (!liveBundles().erase(bundle)) {
      failure("ein_bundle_free: not a bundle ein_bundle_load returned (or "
              "one ein_bundle_free has freed)");
      return;
    }
  }
  delete bundle;
}

const char *ein_bundle_target(const ein_bundle *bundle) {
  if (!isLive(bundle, "ein_bundle_target"))
    return nullptr;
  return ein::backendName(bundle->bundle.manifest.backend);
}

int ein_bundle_devices(const ein_bundle *bundle) {
  if (!isLive(bundle, "ein_bundle_devices"))
    return -1;
  return bundle->bundle.manifest.devices;
}

int ein_bundle_gpus(const ein_bundle *bundle) {
  if (!isLive(bundle, "ein_bundle_gpus"))
    return -1;
  return gpusOf(bundle);
}

int ein_bundle_nodes(const ein_bundle *bundle) {
  if (!isLive(bundle, "ein_bundle_nodes"))
    return -1;
  return bundle->bundle.manifest.nodes;
}

int ein_bundle_rank(const ein_bundle *bundle) {
  if (!isLive(bundle, "ein_bundle_rank"))
    return -1;
  return rankOf(bundle);
}

int ein_bundle_ranks(const ein_bundle *bundle) {
  if (!isLive(bundle, "ein_bundle_ranks"))
    return -1;
  return bundle->ranks ? bundle->ranks->size() : 1;
}

const char *ein_bundle_describe(const ein_bundle *bundle) {
  if (!isLive(bundle, "ein_bundle_describe"))
    return nullptr;
  bundle->description = bundle->backend->describe();
  return bundle->description.c_str();
}

double ein_bundle_flops(const ein_bundle *bundle) {
  if (!isLive(bundle, "ein_bundle_flops"))
    return -1;
  return ein::programFlops(bundle->bundle.program);
}

double ein_bundle_peak_flops(const ein_bundle *bundle) {
  if (!isLive(bundle, "ein_bundle_peak_flops"))
    return -1;
  const ein::Manifest &m = bundle->bundle.manifest;
  if (m.backend != ein::Backend::Cuda)
    return 0;
  return gpusOf(bundle) * ein::chipInfo(m.chip).gemmFlopsPerSecond;
}

int ein_bundle_num_inputs(const ein_bundle *bundle) {
  if (!isLive(bundle, "ein_bundle_num_inputs"))
    return -1;
  return static_cast<int>(bundle->bundle.manifest.inputs.size());
}

int ein_bundle_num_outputs(const ein_bundle *bundle) {
  if (!isLive(bundle, "ein_bundle_num_outputs"))
    return -1;
  return static_cast<int>(bundle->bundle.manifest.outputs.size());
}

ein_status ein_bundle_input_info(const ein_bundle *bundle, int index,
                                 ein_tensor_info *out) {
  if (!isLive(bundle, "ein_bundle_input_info"))
    return EIN_ERROR;
  if (!out)
    return failure("ein_bundle_input_info: no result pointer");
  return info(bundle, /*output=*/false, index, out);
}

ein_status ein_bundle_output_info(const ein_bundle *bundle, int index,
                                  ein_tensor_info *out) {
  if (!isLive(bundle, "ein_bundle_output_info"))
    return EIN_ERROR;
  if (!out)
    return failure("ein_bundle_output_info: no result pointer");
  return info(bundle, /*output=*/true, index, out);
}

ein_status ein_bundle_set_input(ein_bundle *bundle, int index, const void *data,
                                size_t bytes) {
  if (!isLive(bundle, "ein_bundle_set_input"))
    return EIN_ERROR;
  const ein::TensorLayout *l = layout(bundle, /*output=*/false, index);
  if (!l || rankOf(bundle) == 0)
    if (checkBytes(l, false, index, data, bytes) != EIN_OK)
      return EIN_ERROR;
  return guarded([&] {
    scatter(bundle, *l, static_cast<const unsigned char *>(data));
    bundle->inputSet[index] = true;
    return EIN_OK;
  });
}

static ein_status checkInputsSet(const ein_bundle *bundle) {
  for (size_t i = 0; i < bundle->inputSet.size(); ++i)
    if (!bundle->inputSet[i])
      return failure("input " + std::to_string(i) + " was not set");
  return EIN_OK;
}

ein_status ein_bundle_run(ein_bundle *bundle) {
  if (!isLive(bundle, "ein_bundle_run"))
    return EIN_ERROR;
  if (checkInputsSet(bundle) != EIN_OK)
    return EIN_ERROR;
  bundle->ran = false; // a failed run leaves no outputs to read
  return guarded([&] {
    bundle->backend->run();
    bundle->ran = true;
    return EIN_OK;
  });
}

ein_status ein_bundle_get_output(const ein_bundle *bundle, int index,
                                 void *data, size_t bytes) {
  if (!isLive(bundle, "ein_bundle_get_output"))
    return EIN_ERROR;
  const ein::TensorLayout *l = layout(bundle, /*output=*/true, index);
  int rank = rankOf(bundle);
  if (!l || rank == 0)
    if (checkBytes(l, true, index, data, bytes) != EIN_OK)
      return EIN_ERROR;
  if (!bundle->ran)
    return failure("the bundle has not run yet");
  return guarded([&] {
    gatherOutput(bundle, *l, index, static_cast<unsigned char *>(data));
    return EIN_OK;
  });
}

ein_status ein_bundle_output_updates(const ein_bundle *bundle, int index,
                                     int *input) {
  if (!isLive(bundle, "ein_bundle_output_updates"))
    return EIN_ERROR;
  if (!input)
    return failure("ein_bundle_output_updates: no result pointer");
  const ein::TensorLayout *l = layout(bundle, /*output=*/true, index);
  if (!l)
    return failure("ein_bundle_output_updates: output " +
                   std::to_string(index) + " does not exist (the bundle has " +
                   std::to_string(bundle->bundle.manifest.outputs.size()) +
                   ")");
  *input = l->updates;
  return EIN_OK;
}

ein_status ein_bundle_carry(ein_bundle *bundle) {
  if (!isLive(bundle, "ein_bundle_carry"))
    return EIN_ERROR;
  if (!bundle->ran)
    return failure("ein_bundle_carry: the bundle has not run yet");
  return guarded([&] {
    const ein::Manifest &m = bundle->bundle.manifest;
    // Each block of an updated input takes its region from the output
    // blocks that overlap it (one of each set of replicas).
    std::vector<ein::BufferCopy> copies;
    // The buffers whose bytes the inputs' blocks are (a view's: its root's).
    auto root = [&](int id) {
      return m.buffers[id].viewOf >= 0 ? m.buffers[id].viewOf : id;
    };
    std::set<int> written;
    for (const ein::TensorLayout &out : m.outputs) {
      if (out.updates < 0)
        continue;
      std::vector<size_t> sources = outputBlocks(bundle, out);
      for (const ein::BlockPlacement &q : m.inputs[out.updates].blocks) {
        const std::vector<int64_t> &qs = m.buffers[q.buffer].type.shape;
        written.insert(root(q.buffer));
        for (size_t k : sources) {
          const ein::BlockPlacement &p = out.blocks[k];
          const std::vector<int64_t> &ps = m.buffers[p.buffer].type.shape;
          ein::BufferCopy c;
          c.src = p.buffer;
          c.dst = q.buffer;
          bool empty = false;
          for (size_t d = 0; d < ps.size(); ++d) {
            int64_t lo = std::max(p.offset[d], q.offset[d]);
            int64_t hi = std::min(p.offset[d] + ps[d], q.offset[d] + qs[d]);
            empty |= hi <= lo;
            c.srcOffset.push_back(lo - p.offset[d]);
            c.dstOffset.push_back(lo - q.offset[d]);
            c.extent.push_back(hi - lo);
          }
          if (!empty)
            copies.push_back(std::move(c));
        }
      }
    }
    // Between ranks, or where an output's block shares bytes with an
    // input's (a value passed through, or a view of it), the outputs go
    // through the host: all read before any is written.
    bool viaHost = bundle->ranks != nullptr;
    for (const ein::BufferCopy &c : copies)
      viaHost |= written.count(root(c.src)) > 0;
    if (!viaHost) {
      bundle->backend->copyBetween(copies);
      return EIN_OK;
    }
    std::vector<std::vector<unsigned char>> values(m.outputs.size());
    for (size_t o = 0; o < m.outputs.size(); ++o)
      if (m.outputs[o].updates >= 0) {
        values[o].resize(m.outputs[o].type.numElements() *
                         ein::dtypeBytes(m.outputs[o].type.dtype));
        gatherOutput(bundle, m.outputs[o], static_cast<int>(o),
                     values[o].data());
      }
    for (size_t o = 0; o < m.outputs.size(); ++o)
      if (m.outputs[o].updates >= 0)
        scatter(bundle, m.inputs[m.outputs[o].updates], values[o].data());
    return EIN_OK;
  });
}

ein_status ein_bundle_bench_with(ein_bundle *bundle, ein_timer timer,
                                 int warmup, int iterations,
                                 double *median_ms) {
  if (!isLive(bundle, "ein_bundle_bench_with"))
    return EIN_ERROR;
  if (warmup < 0 || iterations < 1 || !median_ms)
    return failure("ein_bundle_bench: needs warmup >= 0, iterations >= 1 "
                   "and a result pointer");
  // A C caller may pass any int: read the bits, not an enum value C++ may
  // assume is one of its enumerators.
  int chosen = 0;
  static_assert(sizeof chosen == sizeof timer, "ein_timer is an int");
  std::memcpy(&chosen, &timer, sizeof chosen);
  if (chosen != EIN_TIMER_DEVICE && chosen != EIN_TIMER_HOST)
    return failure("ein_bundle_bench: unknown timer " + std::to_string(chosen));
  if (checkInputsSet(bundle) != EIN_OK)
    return EIN_ERROR;
  bundle->ran = false;
  return guarded([&] {
    for (int i = 0; i < warmup; ++i)
      bundle->backend->run();
    std::vector<double> times;
    for (int i = 0; i < iterations; ++i) {
      // Ranks start each step together; the step took the slowest's time.
      if (bundle->ranks)
        bundle->ranks->barrier("the start of a timed step");
      double ms = 0;
      if (timer == EIN_TIMER_DEVICE) {
        ms = bundle->backend->timedRun();
      } else {
        auto start = std::chrono::steady_clock::now();
        bundle->backend->run();
        ms = std::chrono::duration<double, std::milli>(
                 std::chrono::steady_clock::now() - start)
                 .count();
      }
      if (bundle->ranks)
        ms = bundle->ranks->maximum(ms, "a timed step's milliseconds");
      times.push_back(ms);
    }
    std::sort(times.begin(), times.end());
    size_t n = times.size();
    *median_ms = n % 2 ? times[n / 2] : (times[n / 2 - 1] + times[n / 2]) / 2;
    bundle->ran = true;
    return EIN_OK;
  });
}

ein_status ein_bundle_bench(ein_bundle *bundle, int warmup, int iterations,
                            double *median_ms) {
  if (!isLive(bundle, "ein_bundle_bench"))
    return EIN_ERROR;
  return ein_bundle_bench_with(bundle, EIN_TIMER_DEVICE, warmup, iterations,
                               median_ms);
}

ein_status ein_bundle_memory(const ein_bundle *bundle, int device,
                             ein_memory_info *info) {
  if (!isLive(bundle, "ein_bundle_memory"))
    return EIN_ERROR;
  int devices = bundle->bundle.manifest.devices;
  if (!info)
    return failure("ein_bundle_memory: no result pointer");
  if (device < 0 || device >= devices)
    return failure("ein_bundle_memory: device " + std::to_string(device) +
                   " is not one of the bundle's " + std::to_string(devices));
  return guarded([&] {
    *info = bundle->backend->memory(device);
    return EIN_OK;
  });
}

int ein_bundle_num_steps(const ein_bundle *bundle) {
  if (!isLive(bundle, "ein_bundle_num_steps"))
    return -1;
  return static_cast<int>(bundle->bundle.manifest.steps.size());
}

ein_status ein_bundle_step_info(const ein_bundle *bundle, int index,
                                ein_step_info *info) {
  if (!isLive(bundle, "ein_bundle_step_info"))
    return EIN_ERROR;
  const std::vector<ein::Step> &steps = bundle->bundle.manifest.steps;
  if (!info)
    return failure("ein_bundle_step_info: no result pointer");
  if (index < 0 || size_t(index) >= steps.size())
    return failure("no step " + std::to_string(index));
  const ein::Step &s = steps[index];
  info->device = s.device;
  info->kind = s.kind == ein::StepKind::Library ? s.call.c_str()
                                                : ein::stepKindName(s.kind);
  info->label = s.label.c_str();
  return EIN_OK;
}

/// Runs the profile (DeviceBackend::profile); over ranks, rank 0 takes
/// each step's times from the rank that ran it (each rank's clock starts at
/// its own run's start).
static ein_status profileSteps(ein_bundle *bundle, const char *function,
                               size_t count,
                               std::vector<ein::StepTime> &times) {
  if (!isLive(bundle, function))
    return EIN_ERROR;
  size_t steps = bundle->bundle.manifest.steps.size();
  if (count != steps)
    return failure(std::string(function) + ": needs room for the bundle's " +
                   std::to_string(steps) + " steps, got " +
                   std::to_string(count));
  if (checkInputsSet(bundle) != EIN_OK)
    return EIN_ERROR;
  bundle->ran = false;
  return guarded([&] {
    times = bundle->backend->profile();
    if (bundle->ranks) {
      std::vector<double> flat;
      for (const ein::StepTime &t : times)
        flat.insert(flat.end(), {t.start, t.end, double(t.lane)});
      std::string mine(flat.size() * sizeof(double), '\0');
      std::memcpy(mine.data(), flat.data(), mine.size());
      std::vector<std::string> all =
          bundle->ranks->gather(mine, "the profile's step times");
      const ein::Manifest &m = bundle->bundle.manifest;
      for (size_t r = 0; r < all.size(); ++r) {
        if (all[r].size() != mine.size())
          throw ein::RuntimeError(bundle->ranks->prefix() + "rank " +
                                  std::to_string(r) +
                                  " profiled another number of steps");
        for (size_t i = 0; i < times.size(); ++i)
          if (m.nodeOf(m.steps[i].device) == int(r)) {
            double t[3];
            std::memcpy(t, all[r].data() + 3 * i * sizeof(double), sizeof(t));
            times[i] = {t[0], t[1], int(t[2])};
          }
      }
    }
    bundle->ran = true;
    return EIN_OK;
  });
}

ein_status ein_bundle_profile(ein_bundle *bundle, double *step_ms,
                              size_t count) {
  std::vector<ein::StepTime> times;
  if (profileSteps(bundle, "ein_bundle_profile", step_ms ? count : 0, times) !=
      EIN_OK)
    return EIN_ERROR;
  for (size_t i = 0; i < times.size(); ++i)
    step_ms[i] = times[i].end - times[i].start;
  return EIN_OK;
}

ein_status ein_bundle_profile_timeline(ein_bundle *bundle, double *start_ms,
                                       double *end_ms, int *lane,
                                       size_t count) {
  std::vector<ein::StepTime> times;
  if (profileSteps(bundle, "ein_bundle_profile_timeline",
                   start_ms && end_ms && lane ? count : 0, times) != EIN_OK)
    return EIN_ERROR;
  for (size_t i = 0; i < times.size(); ++i) {
    start_ms[i] = times[i].start;
    end_ms[i] = times[i].end;
    lane[i] = times[i].lane;
  }
  return EIN_OK;
}

} // extern "C"
