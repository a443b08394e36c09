//===- bundle.h - Bundle v1: manifest.json, kernels/, program.json -*- C++ -*-//
//
// The boundary between the compiler and the runtime: a directory the
// compiler writes and the runtime reads on a machine without MLIR. The
// manifest holds the buffer plan of every device, where each block of each
// input and output lives, and the schedule: kernel launches, library calls,
// transfers and aggregations, each with its device and its dependencies.
// The runtime interprets the schedule; nothing in a bundle is host code
// except the kernels. The manifest has one reader and one writer
// (bundle.cpp). The format is documented in docs/bundle-format.md.
//
//===----------------------------------------------------------------------===//

#ifndef EIN_BUNDLE_H
#define EIN_BUNDLE_H

#include "ein/program.h"
#include "ein/target.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ein {

constexpr int kBundleFormatVersion = 1;
/// Every buffer starts at a multiple of this many bytes in its device's
/// arena (what cuBLASLt and vectorised kernels want).
constexpr int64_t kBufferAlignment = 256;

/// A dense row-major tensor at a fixed place in one device's arena. Buffers
/// may share bytes (the compiler reuses memory); the schedule's dependencies
/// must then order every conflicting access (checkSchedule).
struct Buffer {
  std::string name;
  int device = 0;
  int64_t offset = 0; // bytes from the start of the device's arena
  TensorType type;
  /// A view: the buffer (not itself a view) some of whose bytes this one
  /// reads as its own shape, with the same device and element type: all of
  /// them (a reshape's view, at the same offset) or a run of them (a block
  /// of rows sliced or assembled in place, at its offset); -1 for none. A
  /// view and its buffer are one value to the data-flow check: a write
  /// through either is a write of both (of the elements the view holds).
  int viewOf = -1;
  int64_t bytes() const;
};

/// Where one block of a logical input or output lives: the block covers
/// elements [offset, offset + buffer shape) of the tensor.
struct BlockPlacement {
  int buffer = 0;
  std::vector<int64_t> offset;
};

/// A logical tensor cut into blocks. An input's blocks are each filled from
/// their region (they may overlap and need not cover it); an output's tile
/// it, blocks of equal regions being replicas, of which the runtime reads
/// any one.
struct TensorLayout {
  TensorType type;
  std::vector<BlockPlacement> blocks;
  /// Constants only: the result name of the program.json `constant` op
  /// whose values the blocks hold.
  std::string value;
  /// Outputs only: the input this output is the next value of (a training
  /// step's updated weight or optimizer state; ein_bundle_carry copies it
  /// there), or -1.
  int updates = -1;
};

enum class StepKind { Kernel, Library, Transfer, Aggregate };

/// The pointwise function a gemm step's epilogue applies last.
enum class Activation { None, Relu, GeluTanh };
enum class Access { Read, Write, ReadWrite };

struct KernelArg {
  int buffer = 0;
  Access access = Access::Read;
};

/// Where a CUDA kernel launches; absent (all zero) on the CPU.
struct LaunchDims {
  int64_t grid[3] = {0, 0, 0};
  int64_t block[3] = {0, 0, 0};
  int64_t sharedBytes = 0;
};

/// A sub-rectangle of a buffer, in element coordinates of its shape.
struct Region {
  int buffer = 0;
  std::vector<int64_t> offset;
  std::vector<int64_t> extent;
};

/// Elements of a buffer seen as a tensor of `shape`: element i of the view
/// is element `offset + sum_k i_k strides[k]` of the buffer's row-major
/// storage (all in elements).
struct StridedView {
  std::vector<int64_t> shape, strides;
  int64_t offset = 0;
};

struct Step {
  StepKind kind = StepKind::Kernel;
  /// The device whose queue runs the step: a kernel's or library call's
  /// device, the sending or receiving device of a transfer.
  int device = 0;
  /// Earlier steps (by index) that must finish before this one starts.
  std::vector<int> deps;
  /// Free text for people and traces, e.g. the logical op it comes from.
  std::string label;

  // kind == Kernel: `kernel` from one of the bundle's kernel libraries,
  // called with one pointer per argument and the scalars.
  std::string kernel;
  std::vector<KernelArg> args;
  std::vector<int64_t> scalars;
  LaunchDims launch;

  // kind == Library, call == "gemm": c = act(alpha * op(a) op(b) + beta * c
  // + bias + addend) over the last two dimensions, batched over c's leading
  // ones (an operand of rank 2 is shared by every batch), accumulating in
  // f32 and rounding once. The epilogue is optional: `bias` (-1: none) a
  // vector of c's last extent and type added to every row, `addend` (-1:
  // none; only with beta 0) a buffer of c's shape and type added element by
  // element, `activation` applied last.
  std::string call;
  int a = 0, b = 0, c = 0;
  bool transposeA = false, transposeB = false;
  double alpha = 1, beta = 0;
  int bias = -1, addend = -1;
  Activation activation = Activation::None;

  // kind == Library, call == "attention": o = softmax(scale q k^T) v, fused,
  // on q [b, h, s, d], k [b, hk, t, d], v [b, hk, t, dv], o [b, h, s, dv]
  // with query head h reading KV head h / (h / hk); with `causal`, query s
  // sees key t when t <= s + diagonal. `lse` (-1: none) receives the f32
  // log-sum-exp [b, h, s] of each query's visible scaled scores (-inf, with
  // o = 0, for a query that sees none).
  // A `view` (absent: the buffer itself, dense) reads q, k or v, or writes
  // o, in place, strided: q a slice of a QKV projection, o transposed. o's
  // view holds each of its buffer's elements once.
  int q = 0, k = 0, v = 0, o = 0, lse = -1;
  std::optional<StridedView> qView, kView, vView, oView;
  bool causal = false;
  int64_t diagonal = 0;
  double scale = 1;

  // kind == Library, call == "conv" (cuda only): c = the 2-D convolution
  // (cross-correlation) of a by the filter b, as program.json's conv (its
  // `sizes` unused: the filter's rows and columns), in one element
  // type, accumulating in f32.
  Window2d conv;

  // kind == Transfer: copies each `src` into its `dst` (equal extents and
  // types), all between the same two devices: one region, or several (a
  // batched transfer, which the CUDA backend moves in one launch where its
  // copy kernel does).
  struct Copy {
    Region src, dst;
  };
  std::vector<Copy> copies;

  // kind == Aggregate: output = inputs[0] op inputs[1] op ..., element by
  // element, all of one shape; the output may be one of the inputs.
  Agg op = Agg::Add;
  std::vector<int> inputs;
  int output = 0;
};

/// `buffer`'s elements as `view` sees them, or the whole buffer, dense.
struct Manifest;
StridedView viewOf(const Manifest &m, int buffer,
                   const std::optional<StridedView> &view);

struct Manifest {
  Backend backend = Backend::Cpu;
  std::string chip; // "host" for cpu, "sm_90" ... for cuda
  int devices = 1;
  /// The machines the devices sit on: `devices / nodes` consecutive devices
  /// per node (device d on node d / (devices / nodes)). A bundle for several
  /// nodes runs as one process per node (docs/distributed.md), or all of
  /// them in one process; transfers between nodes are the only steps that
  /// cross a process.
  int nodes = 1;
  int devicesPerNode() const { return devices / nodes; }
  int nodeOf(int device) const { return device / devicesPerNode(); }
  /// A transfer step's sending and receiving devices (its copies', which
  /// share them).
  std::pair<int, int> transferEnds(const Step &transfer) const {
    const Step::Copy &c = transfer.copies.front();
    return {buffers[c.src.buffer].device, buffers[c.dst.buffer].device};
  }
  /// Whether `step` is a transfer from one node to another.
  bool crossesNodes(const Step &step) const {
    if (step.kind != StepKind::Transfer || step.copies.empty())
      return false;
    auto [from, to] = transferEnds(step);
    return nodeOf(from) != nodeOf(to);
  }
  /// The bytes of a transfer's message between nodes: each copy's extent,
  /// dense, one after another (docs/distributed.md).
  size_t messageBytes(const Step &transfer) const;
  /// A dataflow bundle (a chunked plan; the compiler's `ein.dataflow`):
  /// each GPU's steps may spread over several streams, so a step waits for
  /// its dependencies only. The CUDA backend honours it (EIN_CUDA_STREAMS
  /// overrides it); the result is the same either way.
  bool dataflow = false;
  std::vector<int64_t> arenaBytes; // one per device
  /// Paths relative to the bundle: .so files (cpu) or .cubin files (cuda).
  std::vector<std::string> kernelLibraries;
  /// The SHA-256 of each kernel library (64 lowercase hex digits), checked
  /// before it is loaded.
  std::vector<std::string> kernelLibraryHashes;
  std::vector<Buffer> buffers;
  std::vector<TensorLayout> inputs, outputs;
  /// Dense constants of the program (masks, tables): filled from
  /// program.json's values when the bundle loads, read-only like inputs,
  /// and not set by the caller.
  std::vector<TensorLayout> constants;
  std::vector<Step> steps;
};

/// Parses and validates manifest.json text: structure, every reference,
/// every shape and type a step relies on, block layouts that tile their
/// tensors, and the schedule's ordering (checkSchedule). On failure returns
/// false with `error` naming the field ("manifest.steps[3].a: buffer 'X' is
/// on device 1 but the step runs on device 0").
bool parseManifest(const std::string &text, Manifest &manifest,
                   std::string &error);

/// The text of manifest.json for `manifest`: what the compiler's
/// ein-write-bundle writes (keys sorted, indented by 2, a newline at the
/// end), byte for byte, and what parseManifest reads back as `manifest`.
std::string writeManifest(const Manifest &manifest);

/// Checks that the dependencies order every pair of steps that touch the
/// same bytes where at least one writes, and that no step writes an input
/// buffer's bytes (a run must leave its inputs intact, so it can be
/// replayed). parseManifest calls it; it is public for tests.
bool checkSchedule(const Manifest &manifest, std::string &error);

/// Checks that buffer `view` may view `root` (Buffer::viewOf): the same
/// device and element type, its bytes within root's and whole elements in,
/// and its elements all of root's (a reshape: any shape of as many elements,
/// at root's offset) or a run of root's rows (whole rows of one dimension of
/// root at one index of the dimensions before it, which may be part of one
/// row of the last) read as rows: the view's last dimensions hold one such
/// row (any reshape of it), the ones before count them; or a run of whole
/// rows of root's last dimension in any shape, which may span rows of the
/// dimensions before (a part assembled in place, read as one vector or as
/// other rows). A scalar view is
/// thus a reshape of a buffer of one element. Other shapes would read or
/// write elements of root other than the ones the view's rows stand for. On
/// failure returns false with `field` the manifest field at fault ("view_of" or
/// "type") and `why` a sentence naming the buffers. The reader checks every
/// view; checkDataFlow checks them again, for manifests made in code.
bool checkView(const Buffer &view, const Buffer &root, std::string &field,
               std::string &why);

/// Checks that every element a step reads (a kernel's read or readwrite
/// argument, a library call's operands, a transfer's source region, an
/// aggregation's inputs) holds its buffer's value: an earlier step wrote it,
/// or it is in an input or constant block, and no write through another
/// buffer sharing its bytes came in between; and that every output block is
/// written whole and left so. Needs a schedule checkSchedule accepts (its
/// order is then every byte's order of accesses). parseManifest calls it.
bool checkDataFlow(const Manifest &manifest, std::string &error);

/// The steps' buffer accesses, for checkSchedule and the CPU backend's
/// debug checks.
struct BufferAccess {
  int buffer = 0;
  Access access = Access::Read;
  std::vector<int64_t> offset, extent; // the region of the buffer touched
};
std::vector<BufferAccess> stepAccesses(const Manifest &manifest,
                                       const Step &step);

/// The byte ranges [first, last) of `device`'s arena that no input buffer
/// holds, in order: what a backend's debug mode fills with 0xff before a
/// run.
std::vector<std::pair<int64_t, int64_t>> nonInputSpans(const Manifest &manifest,
                                                       int device);

struct Bundle {
  std::string directory;
  Manifest manifest;
  /// The SHA-256 of manifest.json's bytes: what the ranks of a run compare
  /// to make sure they all run one bundle.
  std::string manifestSha256;
  Program program;
};

/// The `constant` op of `program` whose result is `name`, or null.
const Op *constantOp(const Program &program, const std::string &name);

/// Whether a manifest and the program beside it agree: as many inputs as
/// arguments and outputs as results, of the same types, and every constant
/// naming a constant op of its type. The bundle writer
/// checks this before it writes; readBundle after it reads.
bool checkAgreement(const Manifest &manifest, const Program &program,
                    std::string &error);

/// Reads DIR/manifest.json and DIR/program.json and checks that they agree:
/// the manifest's inputs and outputs are the program's arguments and results
/// with the same types.
bool readBundle(const std::string &directory, Bundle &bundle,
                std::string &error);

/// Reads kernel library `index` of `bundle` (a regular file inside the
/// bundle) and checks its SHA-256 against the manifest's; on failure returns
/// false with `error` naming the library ("is 1234 bytes, truncated or
/// replaced: its SHA-256 is ..., the manifest's ...").
bool readKernelLibrary(const Bundle &bundle, size_t index, std::string &bytes,
                       std::string &error);

const char *stepKindName(StepKind kind);

/// The manifest's spelling of `a`: "none", "relu", "gelu_tanh".
const char *activationName(Activation a);

/// `x` through `a`: max(x, 0), or GELU's tanh approximation
/// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))), the one cuBLASLt's
/// epilogue computes and front ends write as `gelu(approximate="tanh")`.
double applyActivation(Activation a, double x);

} // namespace ein

#endif // EIN_BUNDLE_H
