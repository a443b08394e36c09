//===- bundle.cpp - manifest.json: its schema, reader and writer ----------===//

#include "ein/bundle.h"

#include "ein/partition.h"
#include "ein/region.h"
#include "ein/sha256.h"
#include "json_node.h"
#include "json_write.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

namespace ein {

using namespace format;

int64_t Buffer::bytes() const {
  return type.numElements() * dtypeBytes(type.dtype);
}

size_t Manifest::messageBytes(const Step &transfer) const {
  size_t total = 0;
  for (const Step::Copy &c : transfer.copies)
    total += size_t(product(c.src.extent)) *
             dtypeBytes(buffers[c.src.buffer].type.dtype);
  return total;
}

namespace {

constexpr const char *kFormatName = "ein-bundle";

constexpr Spelling<StepKind> kStepKinds[] = {
    {StepKind::Kernel, "kernel"},
    {StepKind::Library, "library"},
    {StepKind::Transfer, "transfer"},
    {StepKind::Aggregate, "aggregate"}};

constexpr Spelling<Activation> kActivations[] = {
    {Activation::None, "none"},
    {Activation::Relu, "relu"},
    {Activation::GeluTanh, "gelu_tanh"}};

/// Step::call of the library calls this runtime knows.
constexpr const char *kGemm = "gemm", *kAttention = "attention",
                     *kConv = "conv";

} // namespace

const char *stepKindName(StepKind kind) { return spell(kStepKinds, kind); }

const char *activationName(Activation a) { return spell(kActivations, a); }

double applyActivation(Activation a, double x) {
  switch (a) {
  case Activation::None:
    return x;
  case Activation::Relu:
    // PyTorch's relu: a NaN stays NaN (x > 0 alone would make it 0).
    return std::isnan(x) || x > 0 ? x : 0.0;
  case Activation::GeluTanh: {
    const double k = std::sqrt(2.0 / 3.14159265358979323846);
    return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
  }
  }
  return x;
}

namespace {

std::string inQuotes(const std::string &s) { return "'" + s + "'"; }

/// Whether `view` holds each of `elements` elements once: its dimensions
/// (of extent above 1), by stride, nest densely from stride 1.
bool coversOnce(const StridedView &view, int64_t elements) {
  std::vector<std::pair<int64_t, int64_t>> dims; // stride, extent
  int64_t count = 1;
  for (size_t d = 0; d < view.shape.size(); ++d) {
    count *= view.shape[d];
    if (view.shape[d] > 1)
      dims.push_back({view.strides[d], view.shape[d]});
  }
  if (view.offset != 0 || count != elements)
    return false;
  std::sort(dims.begin(), dims.end());
  int64_t next = 1;
  for (auto [stride, extent] : dims) {
    if (stride != next)
      return false;
    next *= extent;
  }
  return true;
}

bool isGemmType(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16;
}

/// Whether [offset, offset + extent) lies inside `shape`, all extents
/// positive.
bool regionInside(const std::vector<int64_t> &offset,
                  const std::vector<int64_t> &extent,
                  const std::vector<int64_t> &shape) {
  if (offset.size() != shape.size() || extent.size() != shape.size())
    return false;
  for (size_t d = 0; d < shape.size(); ++d)
    if (offset[d] < 0 || extent[d] < 1 || offset[d] > shape[d] - extent[d])
      return false;
  return true;
}

bool regionsIntersect(const std::vector<int64_t> &aOffset,
                      const std::vector<int64_t> &aExtent,
                      const std::vector<int64_t> &bOffset,
                      const std::vector<int64_t> &bExtent) {
  for (size_t d = 0; d < aOffset.size(); ++d)
    if (aOffset[d] >= bOffset[d] + bExtent[d] ||
        bOffset[d] >= aOffset[d] + aExtent[d])
      return false;
  return true;
}

class ManifestReader {
public:
  explicit ManifestReader(Manifest &m) : m(m) {}

  void read(const json &root) {
    Node top{root, "manifest"};
    top.only({"format", "version", "target", "chip", "devices", "nodes",
              "dataflow", "arena_bytes", "kernel_libraries",
              "kernel_library_sha256", "buffers", "inputs", "outputs",
              "constants", "steps"});
    if (top.at("format").str() != kFormatName)
      fail("manifest.format", std::string("expected \"") + kFormatName + "\"");
    int64_t version = top.at("version").integer();
    if (version != kBundleFormatVersion)
      fail("manifest.version", "this runtime understands bundle version " +
                                   std::to_string(kBundleFormatVersion) +
                                   ", the bundle has version " +
                                   std::to_string(version));
    readTarget(top);
    if (top.has("dataflow"))
      m.dataflow = top.at("dataflow").boolean();
    readArenas(top.at("arena_bytes"));
    Node libs = top.at("kernel_libraries");
    for (size_t i = 0, e = libs.size(); i < e; ++i) {
      std::string path = libs[i].str();
      if (path.empty() || path[0] == '/' ||
          path.find("..") != std::string::npos)
        fail(libs[i].path, "kernel library paths are relative to the bundle "
                           "and stay inside it, got " +
                               inQuotes(path));
      m.kernelLibraries.push_back(path);
    }
    if (!m.kernelLibraries.empty() || top.has("kernel_library_sha256")) {
      Node hashes = top.at("kernel_library_sha256");
      if (hashes.size() != m.kernelLibraries.size())
        fail(hashes.path, "expected one hash per kernel library (" +
                              std::to_string(m.kernelLibraries.size()) +
                              "), got " + std::to_string(hashes.size()));
      for (size_t i = 0, e = hashes.size(); i < e; ++i) {
        std::string hex = hashes[i].str();
        if (hex.size() != 64 ||
            hex.find_first_not_of("0123456789abcdef") != std::string::npos)
          fail(hashes[i].path,
               "expected a SHA-256 as 64 lowercase hex digits, got " +
                   inQuotes(hex));
        m.kernelLibraryHashes.push_back(hex);
      }
    }
    readBuffers(top.at("buffers"));
    readLayouts(top.at("inputs"), m.inputs, LayoutKind::Input);
    readLayouts(top.at("outputs"), m.outputs, LayoutKind::Output);
    if (top.has("constants"))
      readLayouts(top.at("constants"), m.constants, LayoutKind::Constant);
    Node steps = top.at("steps");
    for (size_t i = 0, e = steps.size(); i < e; ++i)
      m.steps.push_back(readStep(steps[i], static_cast<int>(i)));
  }

private:
  Manifest &m;
  std::map<std::string, int> bufferIds;
  /// (is an input, buffer) -> the block it holds.
  std::map<std::pair<bool, int>, std::pair<size_t, std::vector<int64_t>>>
      blockOfBuffer;

  /// Through target.h, which the compiler checks its target with too.
  void readTarget(const Node &top) {
    std::string error;
    Node target = top.at("target"), chip = top.at("chip"),
         devices = top.at("devices");
    if (!parseBackend(target.str(), m.backend, error))
      fail(target.path, error);
    m.chip = chip.str();
    if (!checkChipForBackend(m.backend, m.chip, error))
      fail(chip.path, error);
    if (!checkDevices(devices.integer(), error))
      fail(devices.path, error);
    m.devices = static_cast<int>(devices.integer());
    if (top.has("nodes")) {
      Node nodes = top.at("nodes");
      int64_t k = nodes.integer();
      if (k < 1 || k > m.devices || m.devices % k != 0)
        fail(nodes.path, "the bundle's " + std::to_string(m.devices) +
                             " devices cannot sit on " + std::to_string(k) +
                             " nodes of equal size");
      m.nodes = static_cast<int>(k);
    }
  }

  void readArenas(const Node &node) {
    m.arenaBytes = node.integers();
    if (m.arenaBytes.size() != size_t(m.devices))
      fail(node.path, "lists " + std::to_string(m.arenaBytes.size()) +
                          " arenas for " + std::to_string(m.devices) +
                          " devices");
    for (size_t d = 0; d < m.arenaBytes.size(); ++d)
      if (m.arenaBytes[d] < 0 || m.arenaBytes[d] > (int64_t(1) << 48))
        fail(node[d].path, "arena size out of range");
  }

  void readBuffers(const Node &node) {
    for (size_t i = 0, e = node.size(); i < e; ++i) {
      Node n = node[i];
      n.only({"name", "device", "offset", "type", "view_of"});
      Buffer b;
      b.name = n.at("name").str();
      b.device = readDevice(n.at("device"));
      b.offset = n.at("offset").integer();
      b.type = parseType(n.at("type"));
      if (b.offset < 0 || b.offset % kBufferAlignment != 0)
        fail(n.path + ".offset", "must be a non-negative multiple of " +
                                     std::to_string(kBufferAlignment) +
                                     ", got " + std::to_string(b.offset));
      // (bytes() is at most 2^51 and the arena 2^48: no overflow here.)
      // (The end is printed as offset + size: a crafted offset near 2^63
      // would overflow the sum.)
      if (b.offset > m.arenaBytes[b.device] - b.bytes())
        fail(n.path, "bytes [" + std::to_string(b.offset) + ", " +
                         std::to_string(b.offset) + " + " +
                         std::to_string(b.bytes()) + ") exceed device " +
                         std::to_string(b.device) + "'s arena of " +
                         std::to_string(m.arenaBytes[b.device]) + " bytes");
      if (!bufferIds.emplace(b.name, static_cast<int>(i)).second)
        fail(n.path + ".name",
             "buffer " + inQuotes(b.name) + " is defined twice");
      m.buffers.push_back(std::move(b));
    }
    // A view may come before the buffer it views (a part assembled in place
    // is made before the whole).
    for (size_t i = 0, e = node.size(); i < e; ++i) {
      Node n = node[i];
      Buffer &b = m.buffers[i];
      if (n.has("view_of")) {
        Node of = n.at("view_of");
        int id = readBuffer(of);
        const Buffer &root = m.buffers[id];
        if (node[id].has("view_of"))
          fail(of.path, "buffer " + inQuotes(root.name) +
                            " is itself a view; name the buffer it views");
        b.viewOf = id;
        // A reshape's view holds all its root's bytes; a slice's, a run of
        // them (a block of rows, say), whole elements in; and its shape
        // must be what those elements are, or the data-flow check and the
        // steps would read other elements than its rows stand for.
        std::string field, why;
        if (!checkView(b, root, field, why))
          fail(field == "view_of" ? of.path : n.path + "." + field, why);
      }
    }
  }

  int readDevice(const Node &node) {
    int64_t d = node.integer();
    if (d < 0 || d >= m.devices)
      fail(node.path, "device " + std::to_string(d) + " does not exist (the " +
                          "bundle has " + std::to_string(m.devices) + ")");
    return static_cast<int>(d);
  }

  int readBuffer(const Node &node) {
    std::string name = node.str();
    auto it = bufferIds.find(name);
    if (it == bufferIds.end())
      fail(node.path, "no buffer is named " + inQuotes(name));
    return it->second;
  }

  const Buffer &buffer(int id) const { return m.buffers[id]; }

  /// A buffer the step on `device` reads or writes directly.
  int readLocalBuffer(const Node &node, int device) {
    int id = readBuffer(node);
    if (buffer(id).device != device)
      fail(node.path, "buffer " + inQuotes(buffer(id).name) + " is on device " +
                          std::to_string(buffer(id).device) +
                          " but the step runs on device " +
                          std::to_string(device));
    return id;
  }

  enum class LayoutKind { Input, Output, Constant };

  void readLayouts(const Node &node, std::vector<TensorLayout> &layouts,
                   LayoutKind kind) {
    // A constant's blocks are filled like an input's, once, at load.
    bool isInput = kind != LayoutKind::Output;
    for (size_t i = 0, e = node.size(); i < e; ++i) {
      Node n = node[i];
      TensorLayout layout;
      if (kind == LayoutKind::Constant) {
        n.only({"value", "type", "blocks"});
        layout.value = n.at("value").str();
      } else if (kind == LayoutKind::Output) {
        n.only({"type", "blocks", "updates"});
      } else {
        n.only({"type", "blocks"});
      }
      layout.type = parseType(n.at("type"));
      Node blocks = n.at("blocks");
      for (size_t j = 0, f = blocks.size(); j < f; ++j) {
        Node bn = blocks[j];
        bn.only({"buffer", "offset"});
        BlockPlacement p;
        p.buffer = readBuffer(bn.at("buffer"));
        p.offset = bn.has("offset")
                       ? bn.at("offset").integers()
                       : std::vector<int64_t>(layout.type.shape.size(), 0);
        const Buffer &b = buffer(p.buffer);
        if (b.type.dtype != layout.type.dtype)
          fail(bn.path + ".buffer", "buffer " + inQuotes(b.name) + " holds " +
                                        dtypeName(b.type.dtype) +
                                        " but the tensor is " +
                                        dtypeName(layout.type.dtype));
        if (!regionInside(p.offset, b.type.shape, layout.type.shape))
          fail(bn.path, "block of shape " + shapeText(b.type.shape) + " at " +
                            shapeText(p.offset) +
                            " does not fit in the tensor's shape " +
                            shapeText(layout.type.shape));
        // A buffer holds one block of one input (replicas are distinct
        // buffers), else scattering would overwrite a block with another;
        // likewise for outputs. (One buffer may be an input's block and an
        // output's: a value passed through.)
        auto [it, fresh] = blockOfBuffer.emplace(
            std::make_pair(isInput, p.buffer), std::make_pair(i, p.offset));
        if (!fresh)
          fail(bn.path + ".buffer",
               "buffer " + inQuotes(b.name) + " already holds another block");
        layout.blocks.push_back(std::move(p));
      }
      // An input's blocks are each filled from their region: they may
      // overlap (a weight laid out twice) and need not cover it.
      if (!isInput)
        checkTiling(n.path, layout);
      if (kind == LayoutKind::Output && n.has("updates"))
        layout.updates = readUpdates(n.at("updates"), layout, layouts);
      layouts.push_back(std::move(layout));
    }
  }

  /// An output's distinct block regions must be disjoint and cover it;
  /// blocks with equal regions are replicas.
  /// An output's `updates`: an input of the same type that no earlier
  /// output updates (the inputs are read first).
  int readUpdates(const Node &node, const TensorLayout &layout,
                  const std::vector<TensorLayout> &earlier) {
    int64_t k = node.integer();
    if (k < 0 || k >= static_cast<int64_t>(m.inputs.size()))
      fail(node.path, "names input " + std::to_string(k) + " of " +
                          std::to_string(m.inputs.size()));
    const TensorType &in = m.inputs[k].type;
    if (in.dtype != layout.type.dtype || in.shape != layout.type.shape)
      fail(node.path, std::string("the output is ") +
                          dtypeName(layout.type.dtype) + " " +
                          shapeText(layout.type.shape) + " but input " +
                          std::to_string(k) + " is " + dtypeName(in.dtype) +
                          " " + shapeText(in.shape));
    for (const TensorLayout &other : earlier)
      if (other.updates == k)
        fail(node.path, "input " + std::to_string(k) +
                            " is already updated by another output");
    return static_cast<int>(k);
  }

  void checkTiling(const std::string &path, const TensorLayout &layout) {
    std::set<std::vector<int64_t>> seen;
    std::vector<const BlockPlacement *> distinct;
    for (const BlockPlacement &p : layout.blocks) {
      std::vector<int64_t> key = p.offset;
      const std::vector<int64_t> &shape = buffer(p.buffer).type.shape;
      key.insert(key.end(), shape.begin(), shape.end());
      if (seen.insert(key).second)
        distinct.push_back(&p);
    }
    int64_t covered = 0;
    for (size_t i = 0; i < distinct.size(); ++i) {
      const std::vector<int64_t> &si = buffer(distinct[i]->buffer).type.shape;
      covered += product(si);
      for (size_t j = 0; j < i; ++j)
        if (regionsIntersect(distinct[i]->offset, si, distinct[j]->offset,
                             buffer(distinct[j]->buffer).type.shape))
          fail(path + ".blocks",
               "blocks in buffers " +
                   inQuotes(buffer(distinct[j]->buffer).name) + " and " +
                   inQuotes(buffer(distinct[i]->buffer).name) +
                   " overlap without being replicas");
    }
    if (covered != layout.type.numElements())
      fail(path + ".blocks", std::string("the blocks cover ") +
                                 std::to_string(covered) + " of the " +
                                 std::to_string(layout.type.numElements()) +
                                 " elements of the output");
  }

  Region readRegion(const Node &step, const char *bufferKey,
                    const char *offsetKey, int device, bool local) {
    Region r;
    Node bn = step.at(bufferKey);
    r.buffer = local ? readLocalBuffer(bn, device) : readBuffer(bn);
    const Buffer &b = buffer(r.buffer);
    r.offset = step.has(offsetKey)
                   ? step.at(offsetKey).integers()
                   : std::vector<int64_t>(b.type.shape.size(), 0);
    return r;
  }

  Step readStep(const Node &n, int index) {
    Step s;
    s.kind = parseSpelling(kStepKinds, n.at("kind"), "step kind");
    s.device = readDevice(n.at("device"));
    if (n.has("label"))
      s.label = n.at("label").str();
    if (n.has("deps")) {
      Node deps = n.at("deps");
      for (size_t i = 0, e = deps.size(); i < e; ++i) {
        int64_t d = deps[i].integer();
        if (d < 0 || d >= index)
          fail(deps[i].path, "a step depends on earlier steps only (0 to " +
                                 std::to_string(index - 1) + "), got " +
                                 std::to_string(d));
        s.deps.push_back(static_cast<int>(d));
      }
    }
    switch (s.kind) {
    case StepKind::Kernel:
      readKernel(n, s);
      break;
    case StepKind::Library:
      readLibrary(n, s);
      break;
    case StepKind::Transfer:
      readTransfer(n, s);
      break;
    case StepKind::Aggregate:
      readAggregate(n, s);
      break;
    }
    return s;
  }

  void readKernel(const Node &n, Step &s) {
    n.only({"kind", "device", "deps", "label", "kernel", "args", "scalars",
            "launch"});
    if (m.kernelLibraries.empty())
      fail(n.path, "a kernel step needs a kernel library, and "
                   "manifest.kernel_libraries is empty");
    s.kernel = n.at("kernel").str();
    if (s.kernel.empty())
      fail(n.path + ".kernel", "empty kernel name");
    Node args = n.at("args");
    for (size_t i = 0, e = args.size(); i < e; ++i) {
      args[i].only({"buffer", "access"});
      KernelArg a;
      a.buffer = readLocalBuffer(args[i].at("buffer"), s.device);
      a.access = parseSpelling(kAccesses, args[i].at("access"), "access");
      s.args.push_back(a);
    }
    if (n.has("scalars"))
      s.scalars = n.at("scalars").integers();
    bool cuda = m.backend == Backend::Cuda;
    if (n.has("launch") != cuda)
      fail(n.path, cuda ? "a cuda kernel step needs 'launch' (grid, block)"
                        : "a cpu kernel step takes no 'launch'");
    if (cuda) {
      Node l = n.at("launch");
      l.only({"grid", "block", "shared_bytes"});
      for (auto [key, dims] : {std::pair{"grid", s.launch.grid},
                               std::pair{"block", s.launch.block}}) {
        std::vector<int64_t> v = l.at(key).integers();
        if (v.size() != 3 || v[0] < 1 || v[1] < 1 || v[2] < 1)
          fail(l.path + "." + key, "expected three positive sizes");
        std::copy(v.begin(), v.end(), dims);
      }
      // CUDA's limits: grid x below 2^31, y and z at most 65535; at most
      // 1024 threads a block (x, y at most 1024, z at most 64).
      const int64_t *g = s.launch.grid, *b = s.launch.block;
      if (g[0] > (int64_t(1) << 31) - 1 || g[1] > 65535 || g[2] > 65535)
        fail(l.path + ".grid", "exceeds CUDA's grid limits (2^31 - 1, 65535, "
                               "65535)");
      if (b[0] > 1024 || b[1] > 1024 || b[2] > 64 || b[0] * b[1] * b[2] > 1024)
        fail(l.path + ".block", "exceeds CUDA's block limits (1024 threads, "
                                "z at most 64)");
      if (l.has("shared_bytes"))
        s.launch.sharedBytes = l.at("shared_bytes").integer();
      if (s.launch.sharedBytes < 0)
        fail(l.path + ".shared_bytes", "must not be negative");
    }
  }

  void readLibrary(const Node &n, Step &s) {
    s.call = n.at("call").str();
    if (s.call == kAttention)
      return readAttention(n, s);
    if (s.call == kConv)
      return readConv(n, s);
    if (s.call != kGemm)
      fail(n.path + ".call", "unknown library call " + inQuotes(s.call) +
                                 "; this runtime knows " + kGemm + ", " +
                                 kAttention + " and " + kConv);
    n.only({"kind", "device", "deps", "label", "call", "a", "b", "c",
            "transpose_a", "transpose_b", "alpha", "beta", "bias", "addend",
            "activation"});
    s.a = readLocalBuffer(n.at("a"), s.device);
    s.b = readLocalBuffer(n.at("b"), s.device);
    s.c = readLocalBuffer(n.at("c"), s.device);
    if (n.has("transpose_a"))
      s.transposeA = n.at("transpose_a").boolean();
    if (n.has("transpose_b"))
      s.transposeB = n.at("transpose_b").boolean();
    if (n.has("alpha"))
      s.alpha = n.at("alpha").number();
    if (n.has("beta"))
      s.beta = n.at("beta").number();
    if (n.has("bias"))
      s.bias = readLocalBuffer(n.at("bias"), s.device);
    if (n.has("addend"))
      s.addend = readLocalBuffer(n.at("addend"), s.device);
    if (n.has("activation"))
      s.activation =
          parseSpelling(kActivations, n.at("activation"), "activation");
    checkGemm(n.path, s);
    checkEpilogue(n.path, s);
  }

  /// The epilogue's operands: a bias of c's last extent, an addend of c's
  /// shape, both of c's type and neither c itself; an addend only where c
  /// is not accumulated into.
  void checkEpilogue(const std::string &path, const Step &s) {
    const TensorType &c = buffer(s.c).type;
    if (s.bias >= 0) {
      const TensorType &bias = buffer(s.bias).type;
      if (bias.dtype != c.dtype || bias.shape.size() != 1 ||
          bias.shape[0] != c.shape.back())
        fail(path + ".bias", "a gemm's bias is a vector of c's last extent "
                             "and type (" +
                                 std::string(dtypeName(c.dtype)) + " [" +
                                 std::to_string(c.shape.back()) + "]), got " +
                                 dtypeName(bias.dtype) + " " +
                                 shapeText(bias.shape));
    }
    if (s.addend >= 0) {
      const TensorType &addend = buffer(s.addend).type;
      if (addend.dtype != c.dtype || addend.shape != c.shape)
        fail(path + ".addend", "a gemm's addend has c's shape and type (" +
                                   std::string(dtypeName(c.dtype)) + " " +
                                   shapeText(c.shape) + "), got " +
                                   dtypeName(addend.dtype) + " " +
                                   shapeText(addend.shape));
      if (s.beta != 0)
        fail(path + ".addend", "a gemm takes an addend or accumulates into c "
                               "(beta), not both");
    }
    for (int operand : {s.bias, s.addend})
      if (operand >= 0 && (operand == s.c || operand == s.a || operand == s.b))
        fail(path, "a gemm's bias and addend are buffers of their own, not "
                   "a, b or c");
  }

  void checkGemm(const std::string &path, const Step &s) {
    const TensorType &a = buffer(s.a).type, &b = buffer(s.b).type,
                     &c = buffer(s.c).type;
    if (a.dtype != b.dtype || !isGemmType(a.dtype) || !isGemmType(c.dtype))
      fail(path, std::string("gemm takes a and b of one type among f32, f16 "
                             "and bf16 and c of one of them, got ") +
                     dtypeName(a.dtype) + ", " + dtypeName(b.dtype) + ", " +
                     dtypeName(c.dtype));
    // cuBLASLt with f32 compute: f32 -> f32, f16 -> f16 or f32, bf16 ->
    // bf16 or f32. The CPU backend runs every combination; a bundle for
    // CUDA must use these.
    if (m.backend == Backend::Cuda && c.dtype != DType::F32 &&
        c.dtype != a.dtype)
      fail(path, std::string("cuBLASLt computes ") + dtypeName(a.dtype) +
                     " operands into f32 or " + dtypeName(a.dtype) + ", not " +
                     dtypeName(c.dtype));
    if (s.c == s.a || s.c == s.b)
      fail(path, "gemm's c must not be one of its operands");
    size_t rank = c.shape.size();
    auto shapeError = [&]() {
      fail(path, "gemm shapes do not agree: a " + shapeText(a.shape) +
                     (s.transposeA ? " (transposed)" : "") + ", b " +
                     shapeText(b.shape) +
                     (s.transposeB ? " (transposed)" : "") + ", c " +
                     shapeText(c.shape));
    };
    if (rank < 2 || a.shape.size() < 2 || b.shape.size() < 2)
      shapeError();
    for (const TensorType *t : {&a, &b})
      if (t->shape.size() != 2 && t->shape.size() != rank)
        shapeError();
    for (const TensorType *t : {&a, &b})
      if (t->shape.size() == rank &&
          !std::equal(c.shape.begin(), c.shape.end() - 2, t->shape.begin()))
        shapeError();
    auto dim = [](const TensorType &t, int fromEnd) {
      return t.shape[t.shape.size() - fromEnd];
    };
    int64_t m = dim(c, 2), n = dim(c, 1);
    int64_t am = dim(a, s.transposeA ? 1 : 2),
            ak = dim(a, s.transposeA ? 2 : 1);
    int64_t bk = dim(b, s.transposeB ? 1 : 2),
            bn = dim(b, s.transposeB ? 2 : 1);
    if (am != m || bn != n || ak != bk)
      shapeError();
  }

  void readConv(const Node &n, Step &s) {
    n.only({"kind", "device", "deps", "label", "call", "a", "b", "c", "layout",
            "strides", "dilations", "pad_low", "pad_high", "groups"});
    s.a = readLocalBuffer(n.at("a"), s.device);
    s.b = readLocalBuffer(n.at("b"), s.device);
    s.c = readLocalBuffer(n.at("c"), s.device);
    readWindow(n, s.conv);
    checkConv(n.path, s);
  }

  void checkConv(const std::string &path, const Step &s) {
    if (m.backend != Backend::Cuda)
      fail(path, "conv library steps run on cuda (cuDNN); a cpu bundle "
                 "convolves in its kernels");
    const TensorType &x = buffer(s.a).type, &w = buffer(s.b).type,
                     &y = buffer(s.c).type;
    if (x.dtype != w.dtype || x.dtype != y.dtype || !isGemmType(x.dtype))
      fail(path, std::string("conv takes a, b and c of one type among f32, "
                             "f16 and bf16, got ") +
                     dtypeName(x.dtype) + ", " + dtypeName(w.dtype) + ", " +
                     dtypeName(y.dtype));
    if (s.c == s.a || s.c == s.b)
      fail(path, "conv's c must not be one of its operands");
    std::string error;
    std::vector<int64_t> shape =
        convResultShape(s.conv, x.shape, w.shape, error);
    if (shape.empty() || shape != y.shape)
      fail(path, "conv of a " + shapeText(x.shape) + " by b " +
                     shapeText(w.shape) + " into c " + shapeText(y.shape) +
                     ": " +
                     (error.empty() ? "c must be " + shapeText(shape) : error));
  }

  void readAttention(const Node &n, Step &s) {
    n.only({"kind", "device", "deps", "label", "call", "q", "k", "v", "o",
            "lse", "causal", "diagonal", "scale", "q_view", "k_view", "v_view",
            "o_view"});
    s.q = readLocalBuffer(n.at("q"), s.device);
    s.k = readLocalBuffer(n.at("k"), s.device);
    s.v = readLocalBuffer(n.at("v"), s.device);
    s.o = readLocalBuffer(n.at("o"), s.device);
    s.qView = readView(n, "q_view", s.q);
    s.kView = readView(n, "k_view", s.k);
    s.vView = readView(n, "v_view", s.v);
    s.oView = readView(n, "o_view", s.o);
    if (s.oView && !coversOnce(*s.oView, buffer(s.o).type.numElements()))
      fail(n.at("o_view").path,
           "an attention's o view must hold each element of its buffer once "
           "(a permutation of its dimensions)");
    if (n.has("lse"))
      s.lse = readLocalBuffer(n.at("lse"), s.device);
    if (n.has("causal"))
      s.causal = n.at("causal").boolean();
    if (n.has("diagonal"))
      s.diagonal = n.at("diagonal").integer();
    s.scale = n.at("scale").number();
    checkAttention(n.path, s);
  }

  /// The strided view of `buffer` under `key`, if the step has one: every
  /// element it reads lies in the buffer.
  std::optional<StridedView> readView(const Node &step, const char *key,
                                      int id) {
    if (!step.has(key))
      return std::nullopt;
    const Node &n = step.at(key);
    n.only({"shape", "offset", "strides"});
    StridedView view;
    view.shape = n.at("shape").integers();
    view.strides = n.at("strides").integers();
    view.offset = n.at("offset").integer();
    if (view.shape.size() != view.strides.size())
      fail(n.path,
           "a view has one stride per dimension: " + shapeText(view.shape) +
               " with " + std::to_string(view.strides.size()) + " strides");
    if (view.offset < 0 ||
        std::any_of(
            view.strides.begin(), view.strides.end(),
            [](int64_t x) { return x < 0; }) ||
        std::any_of(
            view.shape.begin(), view.shape.end(),
            [](int64_t x) { return x < 1; }))
      fail(n.path, "a view's extents must be positive, its offset and "
                   "strides not negative");
    // Its last element and its element count, in 128 bits: crafted
    // extents must not wrap. A view never holds more elements than its
    // buffer (the compiler's views read each element once at most), which
    // bounds what a backend gathers.
    __int128 last = view.offset, count = 1;
    for (size_t d = 0; d < view.shape.size(); ++d) {
      last += __int128(view.shape[d] - 1) * view.strides[d];
      count = std::min<__int128>(count * view.shape[d], __int128(1) << 64);
    }
    int64_t elements = buffer(id).type.numElements();
    if (count > elements)
      fail(n.path, "the view holds more elements than buffer " +
                       inQuotes(buffer(id).name) + " (" +
                       std::to_string(elements) + ")");
    if (last >= elements)
      fail(n.path, "the view reads past the end of buffer " +
                       inQuotes(buffer(id).name) + " (" +
                       std::to_string(elements) + " elements)");
    return view;
  }

  void checkAttention(const std::string &path, const Step &s) {
    // The shapes attention sees: its views', or its buffers'.
    TensorType q = buffer(s.q).type, k = buffer(s.k).type, v = buffer(s.v).type,
               o = buffer(s.o).type;
    q.shape = viewOf(m, s.q, s.qView).shape;
    k.shape = viewOf(m, s.k, s.kView).shape;
    v.shape = viewOf(m, s.v, s.vView).shape;
    o.shape = viewOf(m, s.o, s.oView).shape;
    auto shapes = [&]() {
      return "q " + shapeText(q.shape) + ", k " + shapeText(k.shape) + ", v " +
             shapeText(v.shape) + ", o " + shapeText(o.shape);
    };
    if (q.dtype != k.dtype || q.dtype != v.dtype || q.dtype != o.dtype ||
        !isGemmType(q.dtype))
      fail(path, std::string("attention takes q, k, v and o of one type "
                             "among f32, f16 and bf16, got ") +
                     dtypeName(q.dtype) + ", " + dtypeName(k.dtype) + ", " +
                     dtypeName(v.dtype) + ", " + dtypeName(o.dtype));
    // cuDNN's and the runtime's fused kernels read 16-bit floats.
    if (m.backend == Backend::Cuda && q.dtype == DType::F32)
      fail(path, "attention on cuda takes f16 or bf16, not f32");
    if (q.shape.size() != 4 || k.shape.size() != 4 || v.shape.size() != 4 ||
        o.shape.size() != 4)
      fail(path, "attention takes rank-4 [batch, heads, tokens, dim] tensors, "
                 "got " +
                     shapes());
    if (k.shape[0] != q.shape[0] || v.shape[0] != q.shape[0] ||
        v.shape[1] != k.shape[1] || v.shape[2] != k.shape[2] ||
        k.shape[3] != q.shape[3] || o.shape[0] != q.shape[0] ||
        o.shape[1] != q.shape[1] || o.shape[2] != q.shape[2] ||
        o.shape[3] != v.shape[3])
      fail(path, "attention shapes do not agree: " + shapes());
    if (q.shape[1] % k.shape[1] != 0)
      fail(path, "attention's " + std::to_string(q.shape[1]) +
                     " query heads are not a multiple of its " +
                     std::to_string(k.shape[1]) + " KV heads: " + shapes());
    for (int in : {s.q, s.k, s.v})
      if (s.o == in || s.lse == in)
        fail(path, "attention's outputs must not be one of its inputs");
    if (s.lse >= 0) {
      const TensorType &l = buffer(s.lse).type;
      std::vector<int64_t> rows(q.shape.begin(), q.shape.end() - 1);
      if (l.dtype != DType::F32 || l.shape != rows)
        fail(path, "attention's lse must be f32 " + shapeText(rows) + ", got " +
                       dtypeName(l.dtype) + " " + shapeText(l.shape));
      if (s.lse == s.o)
        fail(path, "attention's lse and o must be different buffers");
    }
    if (!(s.scale > 0) || !std::isfinite(s.scale))
      fail(path, "attention's scale must be positive and finite");
  }

  void readTransfer(const Node &n, Step &s) {
    if (!n.has("regions")) {
      n.only({"kind", "device", "deps", "label", "from", "from_offset", "to",
              "to_offset", "extent"});
      s.copies.push_back(readCopy(n, s.device));
      return;
    }
    n.only({"kind", "device", "deps", "label", "regions"});
    Node regions = n.at("regions");
    if (regions.size() == 0)
      fail(regions.path, "a batched transfer needs at least one region");
    for (size_t i = 0, e = regions.size(); i < e; ++i) {
      Node r = regions[i];
      r.only({"from", "from_offset", "to", "to_offset", "extent"});
      s.copies.push_back(readCopy(r, s.device));
      const Step::Copy &c = s.copies.back(), &first = s.copies.front();
      if (buffer(c.src.buffer).device != buffer(first.src.buffer).device ||
          buffer(c.dst.buffer).device != buffer(first.dst.buffer).device)
        fail(r.path, "a batched transfer moves every region between the "
                     "same two devices, as region 0 does (" +
                         std::to_string(buffer(first.src.buffer).device) +
                         " to " +
                         std::to_string(buffer(first.dst.buffer).device) + ")");
      // Its regions move at once: none may write what another touches in
      // the same buffer (checkSchedule, which allows one step to read and
      // write one buffer, refuses the same through two buffers).
      for (size_t j = 0; j < i; ++j)
        for (const Region *x : {&s.copies[j].src, &s.copies[j].dst})
          for (const Region *y : {&c.src, &c.dst})
            if ((x == &s.copies[j].dst || y == &c.dst) &&
                x->buffer == y->buffer &&
                regionsIntersect(x->offset, x->extent, y->offset, y->extent))
              fail(r.path, "region " + std::to_string(i) + " and region " +
                               std::to_string(j) +
                               " of a batched transfer touch the same "
                               "bytes, and one writes them");
    }
  }

  /// One region copy of a transfer step, from `n`'s fields.
  Step::Copy readCopy(const Node &n, int device) {
    Step::Copy c;
    c.src = readRegion(n, "from", "from_offset", device, /*local=*/false);
    c.dst = readRegion(n, "to", "to_offset", device, /*local=*/false);
    const Buffer &from = buffer(c.src.buffer), &to = buffer(c.dst.buffer);
    if (from.device != device && to.device != device)
      fail(n.path + ".device",
           "a transfer runs on its sending or receiving device (" +
               std::to_string(from.device) + " or " +
               std::to_string(to.device) + "), not " + std::to_string(device));
    if (from.type.dtype != to.type.dtype)
      fail(n.path, std::string("a transfer copies ") +
                       dtypeName(from.type.dtype) + " into " +
                       dtypeName(to.type.dtype) + "; it does not convert");
    c.src.extent =
        n.has("extent") ? n.at("extent").integers() : from.type.shape;
    c.dst.extent = c.src.extent;
    for (const Region *r : {&c.src, &c.dst}) {
      const Buffer &b = buffer(r->buffer);
      if (!regionInside(r->offset, r->extent, b.type.shape))
        fail(n.path, "region of extent " + shapeText(r->extent) + " at " +
                         shapeText(r->offset) + " does not fit in buffer " +
                         inQuotes(b.name) + " of shape " +
                         shapeText(b.type.shape));
    }
    if (c.src.buffer == c.dst.buffer &&
        regionsIntersect(c.src.offset, c.src.extent, c.dst.offset,
                         c.dst.extent))
      fail(n.path, "a transfer's source and destination overlap");
    return c;
  }

  void readAggregate(const Node &n, Step &s) {
    n.only({"kind", "device", "deps", "label", "op", "inputs", "output"});
    s.op = parseAgg(n.at("op"));
    if (s.op == Agg::None)
      fail(n.path + ".op", "an aggregation combines with add, max, min or mul");
    Node inputs = n.at("inputs");
    for (size_t i = 0, e = inputs.size(); i < e; ++i)
      s.inputs.push_back(readLocalBuffer(inputs[i], s.device));
    if (s.inputs.empty())
      fail(inputs.path, "an aggregation needs at least one input");
    if (s.inputs.size() > size_t(kMaxDevices))
      fail(inputs.path, "an aggregation combines at most " +
                            std::to_string(kMaxDevices) + " inputs, got " +
                            std::to_string(s.inputs.size()));
    s.output = readLocalBuffer(n.at("output"), s.device);
    for (int id : s.inputs) {
      const TensorType &t = buffer(id).type, &out = buffer(s.output).type;
      if (t.shape != out.shape || !isFloat(t.dtype) || !isFloat(out.dtype))
        fail(n.path, "an aggregation combines float buffers of one shape; " +
                         inQuotes(buffer(id).name) + " is " +
                         shapeText(t.shape) + " " + dtypeName(t.dtype) +
                         " and the output " + shapeText(out.shape) + " " +
                         dtypeName(out.dtype));
    }
  }
};

/// The bytes [first, last) of the arena a region of a buffer spans.
std::pair<int64_t, int64_t> byteSpan(const Buffer &b,
                                     const std::vector<int64_t> &offset,
                                     const std::vector<int64_t> &extent) {
  int64_t first = 0, last = 0;
  for (size_t d = 0; d < b.type.shape.size(); ++d) {
    first = first * b.type.shape[d] + offset[d];
    last = last * b.type.shape[d] + offset[d] + extent[d] - 1;
  }
  int64_t width = dtypeBytes(b.type.dtype);
  return {b.offset + first * width, b.offset + (last + 1) * width};
}

} // namespace

std::vector<BufferAccess> stepAccesses(const Manifest &m, const Step &s) {
  auto whole = [&](int id, Access access) {
    const std::vector<int64_t> &shape = m.buffers[id].type.shape;
    return BufferAccess{id, access, std::vector<int64_t>(shape.size(), 0),
                        shape};
  };
  std::vector<BufferAccess> out;
  switch (s.kind) {
  case StepKind::Kernel:
    for (const KernelArg &a : s.args)
      out.push_back(whole(a.buffer, a.access));
    break;
  case StepKind::Library:
    if (s.call == kAttention) {
      for (int id : {s.q, s.k, s.v})
        out.push_back(whole(id, Access::Read));
      out.push_back(whole(s.o, Access::Write));
      if (s.lse >= 0)
        out.push_back(whole(s.lse, Access::Write));
      break;
    }
    out.push_back(whole(s.a, Access::Read));
    out.push_back(whole(s.b, Access::Read));
    for (int operand : {s.bias, s.addend})
      if (s.call == kGemm && operand >= 0)
        out.push_back(whole(operand, Access::Read));
    out.push_back(whole(s.c, s.call == kGemm && s.beta != 0 ? Access::ReadWrite
                                                            : Access::Write));
    break;
  case StepKind::Transfer:
    for (const Step::Copy &c : s.copies) {
      out.push_back({c.src.buffer, Access::Read, c.src.offset, c.src.extent});
      out.push_back({c.dst.buffer, Access::Write, c.dst.offset, c.dst.extent});
    }
    break;
  case StepKind::Aggregate:
    for (int id : s.inputs)
      out.push_back(whole(id, Access::Read));
    out.push_back(whole(s.output, Access::Write));
    break;
  }
  return out;
}

std::vector<std::pair<int64_t, int64_t>> nonInputSpans(const Manifest &m,
                                                       int device) {
  std::vector<std::pair<int64_t, int64_t>> keep, spans;
  for (const auto *layouts : {&m.inputs, &m.constants})
    for (const TensorLayout &layout : *layouts)
      for (const BlockPlacement &p : layout.blocks) {
        const Buffer &b = m.buffers[p.buffer];
        if (b.device == device)
          keep.push_back({b.offset, b.offset + b.bytes()});
      }
  std::sort(keep.begin(), keep.end());
  keep.push_back({m.arenaBytes[device], m.arenaBytes[device]});
  int64_t cursor = 0;
  for (auto [first, last] : keep) {
    if (first > cursor)
      spans.push_back({cursor, first});
    cursor = std::max(cursor, last);
  }
  return spans;
}

bool checkSchedule(const Manifest &m, std::string &error) {
  size_t n = m.steps.size(), words = (n + 63) / 64;
  // Row j of `before` holds a bit for every step that finishes before step
  // j starts.
  std::vector<uint64_t> before(n * words, 0);
  for (size_t j = 0; j < n; ++j)
    for (int d : m.steps[j].deps) {
      for (size_t w = 0; w < words; ++w)
        before[j * words + w] |= before[d * words + w];
      before[j * words + d / 64] |= uint64_t(1) << (d % 64);
    }
  auto ordered = [&](size_t i, size_t j) {
    return (before[j * words + i / 64] >> (i % 64)) & 1;
  };

  struct Span {
    int64_t first, last;
    size_t step;
    BufferAccess access;
  };
  auto overlap = [&](int x, int64_t first, int64_t last) {
    const Buffer &b = m.buffers[x];
    return first < b.offset + b.bytes() && b.offset < last;
  };
  // Constants' blocks are filled once at load and must stay intact too.
  std::set<int> inputBuffers, outputBuffers, constantBuffers;
  for (const auto *layouts : {&m.inputs, &m.constants})
    for (const TensorLayout &layout : *layouts)
      for (const BlockPlacement &p : layout.blocks) {
        inputBuffers.insert(p.buffer);
        if (layouts == &m.constants)
          constantBuffers.insert(p.buffer);
      }
  for (const TensorLayout &layout : m.outputs)
    for (const BlockPlacement &p : layout.blocks)
      outputBuffers.insert(p.buffer);
  // Inputs are scattered before the run, all at once.
  for (int x : inputBuffers)
    for (int y : inputBuffers) {
      const Buffer &bx = m.buffers[x], &by = m.buffers[y];
      if (x < y && bx.device == by.device &&
          overlap(x, by.offset, by.offset + by.bytes())) {
        error = "manifest.buffers: input buffers " + inQuotes(bx.name) +
                " and " + inQuotes(by.name) + " share bytes on device " +
                std::to_string(bx.device);
        return false;
      }
    }

  std::vector<std::vector<Span>> perDevice(m.devices);
  std::map<int, std::vector<size_t>> writers; // output buffer -> its writers
  std::vector<Span> writes;
  for (size_t i = 0; i < n; ++i)
    for (BufferAccess &a : stepAccesses(m, m.steps[i])) {
      const Buffer &b = m.buffers[a.buffer];
      auto [first, last] = byteSpan(b, a.offset, a.extent);
      if (a.access != Access::Read) {
        for (int id : inputBuffers)
          if (m.buffers[id].device == b.device && overlap(id, first, last)) {
            bool constant = constantBuffers.count(id);
            std::string kind = constant ? "constant" : "input";
            error = "manifest.steps[" + std::to_string(i) + "]: writes " +
                    (id == a.buffer
                         ? kind + " buffer " + inQuotes(b.name)
                         : "buffer " + inQuotes(b.name) +
                               ", which shares bytes with " + kind +
                               " buffer " + inQuotes(m.buffers[id].name)) +
                    (constant ? " (constants are filled once, when the "
                                "bundle loads)"
                              : " (inputs must survive a run so it can be "
                                "replayed)");
            return false;
          }
        // A write through a view of an output (a part assembled in place)
        // writes the output.
        int owner = b.viewOf >= 0 ? b.viewOf : a.buffer;
        if (outputBuffers.count(owner))
          writers[owner].push_back(i);
        writes.push_back({first, last, i, a});
      }
      perDevice[b.device].push_back({first, last, i, std::move(a)});
    }
  // What an output holds at the end is what its writers left: a write to its
  // bytes through another buffer must come before all of them.
  for (const Span &w : writes)
    for (int out : outputBuffers) {
      const Buffer &o = m.buffers[out];
      if (out == w.access.buffer || out == m.buffers[w.access.buffer].viewOf ||
          o.device != m.buffers[w.access.buffer].device ||
          !overlap(out, w.first, w.last))
        continue;
      for (size_t writer : writers[out])
        if (!ordered(w.step, writer)) {
          error = "manifest.steps[" + std::to_string(w.step) +
                  "]: writes buffer " +
                  inQuotes(m.buffers[w.access.buffer].name) +
                  ", which shares bytes with output buffer " +
                  inQuotes(o.name) + ", but does not come before step " +
                  std::to_string(writer) + ", which writes the output";
          return false;
        }
    }

  for (int device = 0; device < m.devices; ++device) {
    std::vector<Span> &spans = perDevice[device];
    std::sort(spans.begin(), spans.end(), [](const Span &x, const Span &y) {
      return std::tie(x.first, x.step) < std::tie(y.first, y.step);
    });
    // Sweep: every span is compared with the earlier-starting spans that
    // are still open.
    std::vector<const Span *> open;
    for (const Span &s : spans) {
      open.erase(
          std::remove_if(open.begin(), open.end(),
                         [&](const Span *o) { return o->last <= s.first; }),
          open.end());
      for (const Span *o : open) {
        if (o->access.access == Access::Read && s.access.access == Access::Read)
          continue;
        if (o->step == s.step) {
          // Within one step only the same buffer may be read and written
          // (an aggregation in place); other buffers over the same bytes
          // would make the step read what it is writing.
          if (o->access.buffer == s.access.buffer)
            continue;
          error = "manifest.steps[" + std::to_string(s.step) +
                  "]: writes bytes it also accesses through another buffer (" +
                  inQuotes(m.buffers[o->access.buffer].name) + " and " +
                  inQuotes(m.buffers[s.access.buffer].name) + " share bytes)";
          return false;
        }
        if (o->access.buffer == s.access.buffer &&
            !regionsIntersect(o->access.offset, o->access.extent,
                              s.access.offset, s.access.extent))
          continue;
        size_t i = std::min(o->step, s.step), j = std::max(o->step, s.step);
        if (ordered(i, j))
          continue;
        const std::string &bi = m.buffers[o->access.buffer].name,
                          &bj = m.buffers[s.access.buffer].name;
        error = "manifest.steps[" + std::to_string(j) + "]: touches " +
                (bi == bj ? "buffer " + inQuotes(bi)
                          : "bytes of buffer " + inQuotes(bj) +
                                " shared with buffer " + inQuotes(bi)) +
                " on device " + std::to_string(device) + " as step " +
                std::to_string(i) +
                " does, one of them writing, but does not depend on it";
        return false;
      }
      open.push_back(&s);
    }
  }
  return true;
}

bool checkView(const Buffer &view, const Buffer &root, std::string &field,
               std::string &why) {
  if (root.device != view.device || root.type.dtype != view.type.dtype ||
      view.offset < root.offset ||
      view.offset + view.bytes() > root.offset + root.bytes() ||
      (view.offset - root.offset) % dtypeBytes(view.type.dtype) != 0) {
    field = "view_of";
    why = "a view holds bytes of the buffer it views: the same device and "
          "element type as " +
          inQuotes(root.name) + ", its bytes within that buffer's";
    return false;
  }
  auto named = [](const Buffer &b) {
    return inQuotes(b.name) + " (" + shapeText(b.type.shape) + " " +
           dtypeName(b.type.dtype) + ")";
  };
  int64_t first = (view.offset - root.offset) / dtypeBytes(view.type.dtype),
          count = view.type.numElements(), total = root.type.numElements();
  if (first == 0 && count == total)
    return true; // a reshape
  field = "type";
  if (view.type.shape.empty()) {
    why = "view " + named(view) + " is a scalar, but " + named(root) +
          " holds " + std::to_string(total) +
          " elements: a scalar view is a reshape of a buffer of one element";
    return false;
  }
  // Rows [start, start + rows) of dimension k, at one index of the
  // dimensions before it: elements [first, first + count) with both ends
  // on a boundary of dimension k's rows and no boundary of dimension k - 1
  // inside; read as those rows, the view's last dimensions holding one row
  // each (any reshape of it) and the ones before them counting rows. (So a
  // view one column wider or narrower than the rows, whose rows would
  // start inside the buffer's, is refused even where its elements happen
  // to be whole rows.)
  const std::vector<int64_t> &shape = root.type.shape,
                             &viewShape = view.type.shape;
  auto endsInRows = [&](int64_t row) {
    int64_t suffix = 1;
    for (size_t d = viewShape.size(); suffix < row && d-- > 0;)
      suffix *= viewShape[d];
    return suffix == row;
  };
  int64_t inner = 1; // the elements of one row of dimension k
  for (size_t k = shape.size(); k-- > 0; inner *= shape[k])
    if (first % inner == 0 && count % inner == 0 &&
        first / inner % shape[k] + count / inner <= shape[k] &&
        endsInRows(inner))
      return true;
  // Whole rows of the last dimension in any shape (a part assembled in
  // place, read as one vector or as other rows, as multi-head attention's
  // projections on 4 GPUs make) may span rows of the dimensions before:
  // the data-flow check maps its elements one to one onto the run. What
  // the mutations that found the holes made, a view a column wider or
  // narrower, holds no whole rows.
  int64_t row = shape.empty() ? 1 : shape.back();
  if (first % row == 0 && count % row == 0)
    return true;
  why = "view " + named(view) + " holds elements [" + std::to_string(first) +
        ", " + std::to_string(first + count) + ") of " + named(root) +
        ": a view holds all of its buffer's elements (a reshape), a run "
        "of its rows (whole rows of one of its dimensions), its last "
        "dimensions one such row, or whole rows of its last dimension in "
        "any shape";
  return false;
}

bool parseManifest(const std::string &text, Manifest &manifest,
                   std::string &error) {
  return readJson(text, "manifest", error,
                  [&](const json &root) {
                    manifest = Manifest();
                    ManifestReader(manifest).read(root);
                  }) &&
         checkSchedule(manifest, error) && checkDataFlow(manifest, error);
}

StridedView viewOf(const Manifest &m, int buffer,
                   const std::optional<StridedView> &view) {
  if (view)
    return *view;
  StridedView dense;
  dense.shape = m.buffers[buffer].type.shape;
  dense.strides = rowMajorStrides(dense.shape);
  return dense;
}

namespace {

// The writer: what ein-write-bundle writes, field for field. Fields the
// compiler does not write are written only when they differ from what the
// reader assumes without them (noted where they are).

json writeCopy(const Manifest &m, const Step::Copy &c) {
  return {{"from", m.buffers[c.src.buffer].name},
          {"from_offset", c.src.offset},
          {"to", m.buffers[c.dst.buffer].name},
          {"to_offset", c.dst.offset},
          {"extent", c.src.extent}};
}

json writeStep(const Manifest &m, const Step &s) {
  auto name = [&](int buffer) { return m.buffers[buffer].name; };
  json step = {
      {"kind", stepKindName(s.kind)}, {"device", s.device}, {"deps", s.deps}};
  // Only when not empty (the compiler labels every step with its op and
  // source line; hand-written bundles may not).
  if (!s.label.empty())
    step["label"] = s.label;
  switch (s.kind) {
  case StepKind::Kernel: {
    json args = json::array();
    for (const KernelArg &a : s.args)
      args.push_back(json{{"buffer", name(a.buffer)},
                          {"access", spell(kAccesses, a.access)}});
    step["kernel"] = s.kernel;
    step["args"] = std::move(args);
    // Only when not empty: the compiler's kernels take no scalars.
    if (!s.scalars.empty())
      step["scalars"] = s.scalars;
    if (m.backend == Backend::Cuda)
      step["launch"] = {
          {"grid", std::vector<int64_t>(s.launch.grid, s.launch.grid + 3)},
          {"block", std::vector<int64_t>(s.launch.block, s.launch.block + 3)},
          {"shared_bytes", s.launch.sharedBytes}};
    break;
  }
  case StepKind::Library:
    step["call"] = s.call;
    if (s.call == kAttention) {
      step["q"] = name(s.q);
      step["k"] = name(s.k);
      step["v"] = name(s.v);
      step["o"] = name(s.o);
      // Only when there is one: the compiler asks for no log-sum-exp.
      if (s.lse >= 0)
        step["lse"] = name(s.lse);
      for (auto [key, view] :
           {std::pair{"q_view", &s.qView}, std::pair{"k_view", &s.kView},
            std::pair{"v_view", &s.vView}, std::pair{"o_view", &s.oView}})
        if (*view)
          step[key] = {{"shape", (*view)->shape},
                       {"offset", (*view)->offset},
                       {"strides", (*view)->strides}};
      step["causal"] = s.causal;
      step["diagonal"] = s.diagonal;
      step["scale"] = writeNumber(s.scale);
      break;
    }
    step["a"] = name(s.a);
    step["b"] = name(s.b);
    step["c"] = name(s.c);
    if (s.call == kConv) {
      writeWindow(step, s.conv);
      break;
    }
    step["transpose_a"] = s.transposeA;
    step["transpose_b"] = s.transposeB;
    // Only when not 1 and 0: the compiler's gemms are plain c = a b.
    if (s.alpha != 1)
      step["alpha"] = writeNumber(s.alpha);
    if (s.beta != 0)
      step["beta"] = writeNumber(s.beta);
    // The epilogue only where there is one.
    if (s.bias >= 0)
      step["bias"] = name(s.bias);
    if (s.addend >= 0)
      step["addend"] = name(s.addend);
    if (s.activation != Activation::None)
      step["activation"] = activationName(s.activation);
    break;
  case StepKind::Transfer:
    // One region flat in the step, several as a batch, as the compiler
    // writes them.
    if (s.copies.size() == 1) {
      step.update(writeCopy(m, s.copies[0]));
    } else {
      json regions = json::array();
      for (const Step::Copy &c : s.copies)
        regions.push_back(writeCopy(m, c));
      step["regions"] = std::move(regions);
    }
    break;
  case StepKind::Aggregate: {
    std::vector<std::string> inputs;
    for (int id : s.inputs)
      inputs.push_back(name(id));
    step["op"] = aggName(s.op);
    step["inputs"] = inputs;
    step["output"] = name(s.output);
    break;
  }
  }
  return step;
}

json writeLayouts(const Manifest &m, const std::vector<TensorLayout> &layouts,
                  bool constants = false) {
  json out = json::array();
  for (const TensorLayout &layout : layouts) {
    json blocks = json::array();
    for (const BlockPlacement &p : layout.blocks)
      blocks.push_back(
          json{{"buffer", m.buffers[p.buffer].name}, {"offset", p.offset}});
    json entry{{"type", writeType(layout.type)}, {"blocks", std::move(blocks)}};
    if (layout.updates >= 0)
      entry["updates"] = layout.updates;
    if (constants)
      entry["value"] = layout.value;
    out.push_back(std::move(entry));
  }
  return out;
}

} // namespace

std::string writeManifest(const Manifest &m) {
  json buffers = json::array(), steps = json::array();
  for (const Buffer &b : m.buffers) {
    json buffer = {{"name", b.name},
                   {"device", b.device},
                   {"offset", b.offset},
                   {"type", writeType(b.type)}};
    if (b.viewOf >= 0)
      buffer["view_of"] = m.buffers[b.viewOf].name;
    buffers.push_back(std::move(buffer));
  }
  for (const Step &s : m.steps)
    steps.push_back(writeStep(m, s));
  json root = {{"format", kFormatName},
               {"version", kBundleFormatVersion},
               {"target", backendName(m.backend)},
               {"chip", m.chip},
               {"devices", m.devices},
               {"arena_bytes", m.arenaBytes},
               {"kernel_libraries", m.kernelLibraries},
               {"buffers", std::move(buffers)},
               {"inputs", writeLayouts(m, m.inputs)},
               {"outputs", writeLayouts(m, m.outputs)},
               {"steps", std::move(steps)}};
  if (!m.kernelLibraries.empty())
    root["kernel_library_sha256"] = m.kernelLibraryHashes;
  // Only a bundle for several nodes says so; likewise a dataflow bundle.
  if (m.nodes > 1)
    root["nodes"] = m.nodes;
  if (m.dataflow)
    root["dataflow"] = true;
  // Only a bundle with constants says so (the others' bytes are unchanged).
  if (!m.constants.empty())
    root["constants"] = writeLayouts(m, m.constants, /*constants=*/true);
  return writeJson(root) + "\n";
}

namespace {

/// The type of program value `name`: an argument or an op's result.
const TensorType *valueType(const Program &program, const std::string &name) {
  for (const Argument &a : program.arguments)
    if (a.name == name)
      return &a.type;
  for (const Op &op : program.ops)
    if (op.result == name)
      return &op.type;
  return nullptr;
}

bool sameType(const TensorType &a, const TensorType &b) {
  return a.dtype == b.dtype && a.shape == b.shape;
}

std::string typeText(const TensorType &t) {
  return shapeText(t.shape) + " " + dtypeName(t.dtype);
}

} // namespace

const Op *constantOp(const Program &program, const std::string &name) {
  for (const Op &op : program.ops)
    if (op.result == name && op.kind == OpKind::Constant)
      return &op;
  return nullptr;
}

bool readBundle(const std::string &directory, Bundle &bundle,
                std::string &error) {
  bundle = Bundle();
  bundle.directory = directory;
  std::string manifestPath = directory + "/manifest.json", text;
  if (!readRegularFile(manifestPath, text, error, kMaxJsonFileBytes)) {
    error = "'" + directory + "' is not a bundle: " + error;
    return false;
  }
  if (!parseManifest(text, bundle.manifest, error)) {
    error = manifestPath + ": " + error;
    return false;
  }
  bundle.manifestSha256 = sha256Hex(text);
  if (!readProgram(directory + "/program.json", bundle.program, error))
    return false;
  if (!checkAgreement(bundle.manifest, bundle.program, error)) {
    error = manifestPath + ": " + error;
    return false;
  }
  return true;
}

bool readKernelLibrary(const Bundle &bundle, size_t index, std::string &bytes,
                       std::string &error) {
  const Manifest &m = bundle.manifest;
  std::string path = bundle.directory + "/" + m.kernelLibraries.at(index);
  if (!readRegularFile(path, bytes, error)) {
    error = "cannot load kernel library: " + error;
    return false;
  }
  std::string digest = sha256Hex(bytes);
  if (index >= m.kernelLibraryHashes.size() ||
      digest != m.kernelLibraryHashes[index]) {
    error = "kernel library '" + path + "' (" + std::to_string(bytes.size()) +
            " bytes) is not the one the bundle was built with: its SHA-256 "
            "is " +
            digest + ", manifest.kernel_library_sha256[" +
            std::to_string(index) + "] says " +
            (index < m.kernelLibraryHashes.size() ? m.kernelLibraryHashes[index]
                                                  : "nothing") +
            " (truncated, corrupted or replaced; recompile the bundle)";
    return false;
  }
  return true;
}

bool checkAgreement(const Manifest &m, const Program &p, std::string &error) {
  auto mismatch = [&](const std::string &what) {
    error = what + " of program.json ('" + p.function + "')";
    return false;
  };
  if (m.inputs.size() != p.arguments.size())
    return mismatch("lists " + std::to_string(m.inputs.size()) +
                    " inputs for the " + std::to_string(p.arguments.size()) +
                    " arguments");
  if (m.outputs.size() != p.results.size())
    return mismatch("lists " + std::to_string(m.outputs.size()) +
                    " outputs for the " + std::to_string(p.results.size()) +
                    " results");
  for (size_t i = 0; i < m.inputs.size(); ++i)
    if (!sameType(m.inputs[i].type, p.arguments[i].type))
      return mismatch("input " + std::to_string(i) + " is " +
                      typeText(m.inputs[i].type) + ", not the " +
                      typeText(p.arguments[i].type) + " argument");
  for (size_t i = 0; i < m.outputs.size(); ++i) {
    const TensorType *t = valueType(p, p.results[i]);
    if (t && !sameType(m.outputs[i].type, *t))
      return mismatch("output " + std::to_string(i) + " is " +
                      typeText(m.outputs[i].type) + ", not the " +
                      typeText(*t) + " result");
  }
  for (size_t i = 0; i < m.constants.size(); ++i) {
    const TensorLayout &c = m.constants[i];
    const Op *op = constantOp(p, c.value);
    if (!op)
      return mismatch("constant " + std::to_string(i) + " names '" + c.value +
                      "', which is not a constant op");
    if (!sameType(c.type, op->type))
      return mismatch("constant " + std::to_string(i) + " is " +
                      typeText(c.type) + ", not the " + typeText(op->type) +
                      " constant '" + c.value + "'");
  }
  return true;
}

} // namespace ein
