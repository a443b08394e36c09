//===- BundleWriter.cpp - Device-level ein to a bundle --------------------===//
//
// Translates a device-level program to a bundle (docs/bundle-format.md):
// every tensor a GPU holds becomes a buffer (buffers whose lives do not
// overlap share bytes), every data movement a transfer step, every library
// block (gemm, fused attention) a library step, every generated kernel a
// kernel step, every aggregation an aggregate step, each depending on the
// steps that wrote what it reads or overwrites. Everything a bundle holds
// is written here: manifest.json, program.json and the kernels.
//
//===----------------------------------------------------------------------===//

#include "Einsummable/Target/Bundle/BundleWriter.h"
#include "Einsummable/Conversion/BlockKernels/BlockKernels.h"
#include "Einsummable/Conversion/BlockKernels/StridedView.h"
#include "Einsummable/Dialect/Ein/IR/EinOps.h"
#include "Einsummable/Dialect/Ein/IR/EinProgramForm.h"
#include "Einsummable/Program/ExportProgram.h"
#include "Einsummable/Support/FileOutput.h"
#include "Einsummable/Target/TargetBackend.h"

#include "ein/bundle.h"
#include "ein/dtype.h"
#include "ein/partition.h"
#include "ein/sha256.h"
#include "ein/signature.h"
#include "ein/target.h"
#include "ein/topology.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <fcntl.h>
#include <stdio.h>

#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <tuple>

using namespace mlir;
using namespace mlir::ein;

namespace {

FailureOr<::ein::DType> dtypeOf(Operation *where, Type type) {
  // Floats, the integer indices a gather reads and booleans (masks; a
  // byte each).
  std::optional<::ein::DType> dtype = programDType(type);
  if (!dtype || !(isa<FloatType>(type) || type.isSignlessInteger(64) ||
                  type.isSignlessInteger(32) || type.isSignlessInteger(1)))
    return where->emitOpError()
           << "element type " << type << " has no bundle form";
  return *dtype;
}

std::vector<int64_t> integers(ArrayRef<int64_t> values) {
  return std::vector<int64_t>(values.begin(), values.end());
}

::ein::TensorType tensorType(::ein::DType dtype, ArrayRef<int64_t> shape) {
  return {dtype, integers(shape)};
}

::ein::Agg aggOf(AggKind kind) {
  for (::ein::Agg agg : {::ein::Agg::None, ::ein::Agg::Add, ::ein::Agg::Max,
                         ::ein::Agg::Min, ::ein::Agg::Mul})
    if (stringifyAggKind(kind) == ::ein::aggName(agg))
      return agg;
  llvm_unreachable("an aggregation kind the bundle format lacks");
}

class Writer {
public:
  Writer(func::FuncOp func, int64_t devices, ::ein::Backend backend,
         ModuleOp kernels)
      : func(func), backend(backend), kernels(kernels), arenas(devices, 0) {}

  /// Whether some step calls a generated kernel.
  bool usesKernels = false;

  /// The dense tensor constants the program places, in order of first
  /// placement, with their blocks (their values go in program.json; the
  /// runtime fills the blocks at load).
  std::vector<std::pair<arith::ConstantOp, std::vector<::ein::BlockPlacement>>>
      constants;

  /// The kernels' signature table (ein.kernel_signatures), when there are
  /// kernels: the access of each argument of a CUDA launch comes from it,
  /// and the manifest is checked against it.
  ::ein::KernelSignatures signatures;

  /// Fills the manifest's buffers, layouts and steps.
  LogicalResult run(::ein::Manifest &manifest) {
    if (kernels) {
      auto table = kernels->getAttrOfType<StringAttr>(
          EinDialect::getKernelSignaturesAttrName());
      std::string why;
      if (!table || !::ein::parseKernelSignatures(table.str(), signatures, why))
        return kernels.emitError()
               << "has no valid kernel signature table (run "
                  "ein-lower-to-cpu or ein-lower-to-cuda): "
               << why;
    }
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    inputs.resize(func.getNumArguments());
    outputs.resize(ret.getNumOperands());
    for (Operation &op : func.getBody().front().without_terminator()) {
      label = stepLabel(&op);
      if (failed(visit(&op, ret)))
        return failure();
    }
    placeBuffers();
    for (auto [id, b] : llvm::enumerate(bufferList)) {
      manifest.buffers.push_back({b.name, static_cast<int>(b.device), b.offset,
                                  tensorType(b.dtype, b.shape)});
      if (b.root != int(id))
        manifest.buffers.back().viewOf = b.root;
    }
    manifest.steps = std::move(stepList);
    // An argument no block reads has no blocks: setting it is a no-op.
    auto layouts =
        [&](std::vector<std::vector<::ein::BlockPlacement>> &blocks,
            TypeRange types,
            std::vector<::ein::TensorLayout> &into) -> LogicalResult {
      for (auto [blocksOf, type] : llvm::zip(blocks, types)) {
        auto tensor = cast<RankedTensorType>(type);
        FailureOr<::ein::DType> dtype = dtypeOf(func, tensor.getElementType());
        if (failed(dtype))
          return failure();
        into.push_back(
            {tensorType(*dtype, tensor.getShape()), std::move(blocksOf)});
      }
      return success();
    };
    if (failed(layouts(inputs, func.getArgumentTypes(), manifest.inputs)) ||
        failed(layouts(outputs, func.getResultTypes(), manifest.outputs)))
      return failure();
    // A training step's updated weights and state: the input each one
    // replaces for the next step (ein_bundle_carry).
    for (unsigned i = 0; i < func.getNumResults(); ++i)
      if (auto updates = func.getResultAttrOfType<IntegerAttr>(
              i, EinDialect::getUpdatesAttrName()))
        manifest.outputs[i].updates = static_cast<int>(updates.getInt());
    for (int64_t bytes : arenas)
      manifest.arenaBytes.push_back(
          std::max<int64_t>(bytes, ::ein::kBufferAlignment));
    return success();
  }

private:
  struct Buffer {
    std::string name;
    int64_t device;
    int64_t offset;
    ::ein::DType dtype;
    SmallVector<int64_t> shape;
    /// The buffer whose bytes this one views (itself unless a reshape, a
    /// slice of contiguous rows or a part assembled in place), and where in
    /// them this one starts (bytes).
    int root;
    int64_t bytes = 0, viewOffset = 0;
    /// The steps from the one after its allocation to its last access
    /// (roots only); kLive for buffers that live through the whole run.
    int first = 0, last = 0;
    /// The first step that touches it, or -1.
    int firstStep = -1;
    /// Left unused (a part a transfer lands in its assembly instead): no
    /// place in the arena.
    bool unused = false;
  };
  static constexpr int kLive = std::numeric_limits<int>::max();

  func::FuncOp func;
  ::ein::Backend backend;
  ModuleOp kernels;
  std::vector<int64_t> arenas;
  std::vector<Buffer> bufferList;
  llvm::DenseMap<Value, int> bufferOf;
  /// Values ein.view reads in place: the view of their buffer (bufferOf
  /// holds the buffer) a library step takes.
  llvm::DenseMap<Value, ::ein::StridedView> views;
  /// Steps that wrote each buffer, and the steps that read it since.
  std::map<int, std::vector<int>> writers, readers;
  std::vector<::ein::Step> stepList;
  /// The label of the steps the op being visited makes (stepLabel).
  std::string label;
  /// Per step, the steps it waits for (written into the steps at the end,
  /// with what reusing memory adds).
  std::vector<std::set<int>> stepDeps;
  std::vector<std::vector<::ein::BlockPlacement>> inputs, outputs;
  /// Buffers made by tensor.insert_slice into a tensor.empty, with the
  /// regions inserted so far (offsets, sizes); and those of them some part
  /// was written into in place (assembleInPlace).
  std::map<int,
           std::vector<std::pair<SmallVector<int64_t>, SmallVector<int64_t>>>>
      assembled;
  std::set<int> assembledInPlace;
  llvm::DenseMap<Value, Value> fromBlocksOf; // assemble source -> from_blocks

  FailureOr<int> allocate(Operation *where, Value value, int64_t device) {
    FailureOr<int> id =
        allocate(where, cast<ShapedType>(value.getType()), device);
    if (succeeded(id))
      bufferOf[value] = *id;
    return id;
  }

  /// A fresh buffer of `type` (a tensor, or a kernel's scratch memref).
  FailureOr<int> allocate(Operation *where, ShapedType type, int64_t device) {
    FailureOr<::ein::DType> dtype = dtypeOf(where, type.getElementType());
    if (failed(dtype))
      return failure();
    int64_t bytes =
        type.getNumElements() * ((type.getElementTypeBitWidth() + 7) / 8);
    int id = static_cast<int>(bufferList.size());
    int next = static_cast<int>(stepList.size());
    // Placed in its device's arena once every lifetime is known
    // (placeBuffers).
    bufferList.push_back({"b" + std::to_string(id), device, /*offset=*/0,
                          *dtype, SmallVector<int64_t>(type.getShape()), id,
                          bytes, /*viewOffset=*/0, next, next});
    return id;
  }

  /// In a dataflow bundle, a buffer a transfer fills first is held from
  /// the kPrefetchOps-th compute step before that transfer on its device,
  /// so the bytes it takes were freed earlier and the transfer (a weight
  /// gathered for the next op, say) may run while those steps compute
  /// instead of waiting for them.
  static constexpr int kPrefetchOps = 2;
  void holdTransfersEarly() {
    if (!func->hasAttr(EinDialect::getDataflowAttrName()))
      return;
    for (Buffer &buffer : bufferList) {
      if (buffer.root != &buffer - bufferList.data() || buffer.firstStep < 0 ||
          stepList[buffer.firstStep].kind != ::ein::StepKind::Transfer)
        continue;
      int computeSteps = 0, s = buffer.firstStep;
      while (s > 0 && computeSteps < kPrefetchOps) {
        --s;
        if (stepList[s].device == buffer.device &&
            stepList[s].kind != ::ein::StepKind::Transfer)
          ++computeSteps;
      }
      buffer.first = std::min(buffer.first, s);
    }
  }

  /// Places every buffer in its device's arena, reusing the bytes of
  /// buffers whose last access came before: first fit in order of first
  /// use. Where a buffer takes bytes another held last, its first step
  /// waits for every step that touched the other (the schedule then orders
  /// all accesses to those bytes, which checkSchedule verifies on reading).
  /// Earlier holders of the bytes need no wait of their own: the last
  /// holder's first step waited for them.
  /// Views take their root's offset.
  void placeBuffers() {
    holdTransfersEarly();
    struct Held {
      int64_t begin, end;
      int buffer;
    };
    std::vector<std::vector<Held>> active(arenas.size());
    // Per device, the buffer that last held each run of bytes: runs by
    // their first byte, with their end and that buffer.
    std::vector<std::map<int64_t, std::pair<int64_t, int>>> lastHeld(
        arenas.size());
    std::vector<int> order;
    for (int b = 0, e = bufferList.size(); b < e; ++b)
      if (bufferList[b].root == b && !bufferList[b].unused)
        order.push_back(b);
    llvm::stable_sort(order, [&](int a, int b) {
      return bufferList[a].first < bufferList[b].first;
    });
    // The steps that touched each buffer, for the waits reuse adds.
    std::vector<std::vector<int>> touchedBy(bufferList.size());
    for (auto [b, list] : writers)
      llvm::append_range(touchedBy[b], list);
    for (auto [b, list] : readers)
      llvm::append_range(touchedBy[b], list);
    for (int b : order) {
      Buffer &buffer = bufferList[b];
      std::vector<Held> &live = active[buffer.device];
      // Buffers last touched before this one's first step free their bytes.
      for (size_t i = 0; i < live.size();) {
        if (bufferList[live[i].buffer].last < buffer.first) {
          live.erase(live.begin() + i);
        } else {
          ++i;
        }
      }
      llvm::sort(
          live, [](const Held &x, const Held &y) { return x.begin < y.begin; });
      int64_t align = ::ein::kBufferAlignment, offset = 0;
      int64_t size = std::max<int64_t>(buffer.bytes, 1);
      for (const Held &h : live) {
        if (offset + size <= h.begin)
          break;
        offset = std::max(offset, (h.end + align - 1) / align * align);
      }
      buffer.offset = offset;
      live.push_back({offset, offset + size, b});
      arenas[buffer.device] =
          std::max(arenas[buffer.device], offset + buffer.bytes);
      if (buffer.firstStep < 0)
        continue; // no step touches it, so none waits for it
      // The buffers that held its bytes last (none is live: first fit).
      std::set<int> previous;
      std::map<int64_t, std::pair<int64_t, int>> &held =
          lastHeld[buffer.device];
      auto run = held.upper_bound(offset);
      if (run != held.begin() && std::prev(run)->second.first > offset)
        --run;
      std::vector<std::tuple<int64_t, int64_t, int>> cut;
      while (run != held.end() && run->first < offset + size) {
        auto [begin, rest] = *run;
        previous.insert(rest.second);
        cut.push_back({begin, rest.first, rest.second});
        run = held.erase(run);
      }
      for (auto [begin, end, holder] : cut) {
        if (begin < offset)
          held[begin] = {offset, holder};
        if (end > offset + size)
          held[offset + size] = {end, holder};
      }
      held[offset] = {offset + size, b};
      // A buffer assembled in place is first written by its parts'
      // producers, which do not wait for one another.
      std::vector<int> starters = {buffer.firstStep};
      if (assembledInPlace.count(b))
        starters = writers[b];
      // Its first step waits for every step of the bytes' last holders.
      for (int holder : previous)
        for (int first : starters)
          for (int s : touchedBy[holder])
            if (s < first)
              stepDeps[first].insert(s);
    }
    for (Buffer &buffer : bufferList)
      buffer.offset = bufferList[buffer.root].offset + buffer.viewOffset;
    for (auto [step, deps] : llvm::zip(stepList, stepDeps))
      step.deps.assign(deps.begin(), deps.end());
  }

  /// Where the region (`offsets`, `sizes`, unit strides) of buffer `b`
  /// starts, in bytes from `b`'s start, when its elements are one run of
  /// `b`'s (rows of a row-major tensor: dimensions after the first one cut
  /// are whole, those before it one index) that starts kBufferAlignment-
  /// aligned in the arena; nullopt otherwise.
  std::optional<int64_t> contiguousRun(int b, ArrayRef<int64_t> offsets,
                                       ArrayRef<int64_t> sizes,
                                       ArrayRef<int64_t> strides) const {
    const Buffer &buffer = bufferList[b];
    ArrayRef<int64_t> shape = buffer.shape;
    if (offsets.size() != shape.size() || sizes.size() != shape.size() ||
        llvm::any_of(strides, [](int64_t x) { return x != 1; }) ||
        ShapedType::isDynamicShape(offsets) ||
        ShapedType::isDynamicShape(sizes))
      return std::nullopt;
    size_t cut = 0;
    while (cut + 1 < shape.size() && sizes[cut] == 1)
      ++cut;
    for (size_t d = cut + 1; d < shape.size(); ++d)
      if (sizes[d] != shape[d])
        return std::nullopt;
    int64_t element = 0;
    for (size_t d = 0; d < shape.size(); ++d)
      element = element * shape[d] + offsets[d];
    int64_t bytes = element * ::ein::dtypeBytes(buffer.dtype);
    if ((buffer.viewOffset + bytes) % ::ein::kBufferAlignment != 0)
      return std::nullopt;
    return bytes;
  }

  /// A buffer viewing `shape`'s elements of buffer `of`, `at` bytes into
  /// it (a reshape: all of them, at 0).
  int viewOfBuffer(int of, ArrayRef<int64_t> shape, int64_t at) {
    Buffer view = bufferList[of];
    view.name = "b" + std::to_string(bufferList.size());
    view.shape.assign(shape.begin(), shape.end());
    view.viewOffset += at;
    view.bytes = ::ein::dtypeBytes(view.dtype) *
                 std::accumulate(shape.begin(), shape.end(), int64_t(1),
                                 std::multiplies<int64_t>());
    bufferList.push_back(std::move(view));
    return static_cast<int>(bufferList.size()) - 1;
  }

  /// Whether the part `insert` places into `dest` (a buffer it assembles)
  /// may be written there other than by a copy once it is made: the value
  /// inserted into is read by this insertion alone (so nothing reads the
  /// buffer before it is whole), and no other part of the assembly, before
  /// or after, writes the region's elements (a later part may replace an
  /// earlier one's).
  bool regionFree(tensor::InsertSliceOp insert, int dest) const {
    auto regions = assembled.find(dest);
    if (regions == assembled.end() || bufferList[dest].root != dest ||
        (!insert.getDest().getDefiningOp<tensor::EmptyOp>() &&
         !insert.getDest().hasOneUse()))
      return false;
    ArrayRef<int64_t> offsets = insert.getStaticOffsets(),
                      sizes = insert.getStaticSizes();
    auto apart = [&](ArrayRef<int64_t> o, ArrayRef<int64_t> z) {
      for (size_t d = 0; d < o.size(); ++d)
        if (o[d] + z[d] <= offsets[d] || offsets[d] + sizes[d] <= o[d])
          return true;
      return false;
    };
    for (auto &[o, z] : regions->second)
      if (!apart(o, z))
        return false;
    for (Value chain = insert.getResult(); chain.hasOneUse();) {
      auto next = dyn_cast<tensor::InsertSliceOp>(*chain.user_begin());
      if (!next || next.getDest() != chain)
        break;
      if (!apart(next.getStaticOffsets(), next.getStaticSizes()))
        return false;
      chain = next.getResult();
    }
    return true;
  }

  /// `dest`, assembled in place, holds its bytes from the first step of
  /// `from` (a part's buffer) on, and the steps that wrote `from` are among
  /// its writers (which do not wait for one another).
  void holdFrom(int from, int dest) {
    const Buffer &p = bufferList[from];
    Buffer &d = bufferList[dest];
    d.first = std::min(d.first, p.first);
    if (p.firstStep >= 0 && (d.firstStep < 0 || p.firstStep < d.firstStep))
      d.firstStep = p.firstStep;
    if (d.last != kLive)
      d.last = std::max(d.last, p.last);
    assembledInPlace.erase(from);
    assembledInPlace.insert(dest);
    llvm::append_range(writers[dest], writers[from]);
    llvm::append_range(readers[dest], readers[from]);
    writers.erase(from);
    readers.erase(from);
  }

  /// A part that is an aligned run of `dest`'s rows and all of a buffer
  /// steps made (no input or output; or a reshape's view of one): that
  /// buffer and its views become views of those rows (its other readers
  /// read it there), so its producers' steps write them.
  bool rowsInPlace(tensor::InsertSliceOp insert, int part, int dest) {
    int root = bufferList[part].root;
    const Buffer &p = bufferList[root];
    if (root == dest || p.last == kLive || p.first < 0 ||
        bufferList[part].viewOffset != 0 || bufferList[part].bytes != p.bytes ||
        p.dtype != bufferList[dest].dtype ||
        bufferList[part].shape.size() != bufferList[dest].shape.size())
      return false;
    std::optional<int64_t> at =
        contiguousRun(dest, insert.getStaticOffsets(), insert.getStaticSizes(),
                      insert.getStaticStrides());
    if (!at)
      return false;
    holdFrom(root, dest);
    for (Buffer &b : bufferList)
      if (b.root == root) {
        b.root = dest;
        b.viewOffset += *at;
      }
    return true;
  }

  /// A part (any region, strided too) that one transfer step alone made,
  /// read by this insertion alone: the transfer lands it in its region of
  /// `dest`, and its own buffer is left unused.
  bool landInPlace(tensor::InsertSliceOp insert, int part, int dest) {
    Buffer &p = bufferList[part];
    auto wrote = writers.find(part);
    if (p.root != part || p.last == kLive || p.first < 0 ||
        !insert.getSource().hasOneUse() || wrote == writers.end() ||
        wrote->second.size() != 1 ||
        (readers.count(part) && !readers[part].empty()) ||
        llvm::any_of(
            insert.getStaticStrides(), [](int64_t x) { return x != 1; }) ||
        p.shape.size() != bufferList[dest].shape.size() ||
        llvm::any_of(
            bufferList,
            [&](const Buffer &b) { return b.root == part && &b != &p; }))
      return false;
    ::ein::Step &step = stepList[wrote->second.front()];
    if (step.kind != ::ein::StepKind::Transfer)
      return false;
    ::ein::Step::Copy *landing = nullptr;
    for (::ein::Step::Copy &c : step.copies)
      if (c.dst.buffer == part) {
        if (landing || c.dst.extent != integers(p.shape) ||
            llvm::any_of(c.dst.offset, [](int64_t x) { return x != 0; }))
          return false;
        landing = &c;
      }
    if (!landing)
      return false;
    landing->dst.buffer = dest;
    landing->dst.offset = integers(insert.getStaticOffsets());
    holdFrom(part, dest);
    p.firstStep = -1;
    p.unused = true;
    return true;
  }

  /// The buffer holding `value`, or -1 with an error on `where`.
  int bufferFor(Operation *where, Value value) {
    auto it = bufferOf.find(value);
    if (it != bufferOf.end())
      return it->second;
    where->emitOpError() << "reads a value no step or input produced (an "
                            "unfilled tensor.empty?)";
    return -1;
  }

  /// What a profile's timeline calls the steps of `op`: the op and where
  /// it stands in the source ("ein.join_agg mlp.mlir:7").
  static std::string stepLabel(Operation *op) {
    std::string text = op->getName().getStringRef().str();
    std::string where;
    op->getLoc()->walk([&](Location loc) {
      if (auto file = dyn_cast<FileLineColLoc>(loc)) {
        where = llvm::sys::path::filename(file.getFilename().getValue()).str() +
                ":" + std::to_string(file.getLine());
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    return where.empty() ? text : text + " " + where;
  }

  /// A step reading and writing buffers: it waits for their writers (and,
  /// for what it writes, their readers).
  void addStep(::ein::Step step, ArrayRef<int> readBuffers,
               ArrayRef<int> writeBuffers) {
    // Views of one buffer share its history.
    SmallVector<int> reads, writes;
    for (int r : readBuffers)
      reads.push_back(bufferList[r].root);
    for (int w : writeBuffers)
      writes.push_back(bufferList[w].root);
    std::set<int> deps;
    for (int r : reads)
      deps.insert(writers[r].begin(), writers[r].end());
    for (int w : writes) {
      deps.insert(writers[w].begin(), writers[w].end());
      deps.insert(readers[w].begin(), readers[w].end());
    }
    int index = static_cast<int>(stepList.size());
    if (step.label.empty())
      step.label = label;
    stepDeps.push_back(std::move(deps));
    stepList.push_back(std::move(step));
    for (int b : llvm::concat<int>(reads, writes)) {
      if (bufferList[b].firstStep < 0)
        bufferList[b].firstStep = index;
      if (bufferList[b].last != kLive)
        bufferList[b].last = index;
    }
    for (int r : reads)
      readers[r].push_back(index);
    for (int w : writes) {
      writers[w].push_back(index);
      readers[w].clear();
    }
  }

  /// A region copy (within a GPU or between two).
  void copy(int from, ArrayRef<int64_t> fromOffset, int to,
            ArrayRef<int64_t> toOffset, ArrayRef<int64_t> extent,
            int64_t device) {
    copies({{from, SmallVector<int64_t>(fromOffset), to,
             SmallVector<int64_t>(toOffset), SmallVector<int64_t>(extent)}},
           device);
  }

  struct RegionCopy {
    int from;
    SmallVector<int64_t> fromOffset;
    int to;
    SmallVector<int64_t> toOffset, extent;
  };

  /// One transfer step of `list`: one region, or several (a batched
  /// transfer).
  void copies(ArrayRef<RegionCopy> list, int64_t device) {
    ::ein::Step step;
    step.kind = ::ein::StepKind::Transfer;
    step.device = static_cast<int>(device);
    SmallVector<int> reads, writes;
    for (const RegionCopy &c : list) {
      step.copies.push_back(
          {{c.from, integers(c.fromOffset), integers(c.extent)},
           {c.to, integers(c.toOffset), integers(c.extent)}});
      reads.push_back(c.from);
      writes.push_back(c.to);
    }
    addStep(std::move(step), reads, writes);
  }

  /// The kernel steps of a block ein-lower-to-cuda compiled: one per
  /// gpu.launch_func of its kernel function, whose arguments are the
  /// block's inputs, its result and its scratch buffers.
  LogicalResult launches(Operation *op, StringRef kernelName,
                         ArrayRef<int> inputs, int out, int64_t device) {
    auto fn = kernels ? kernels.lookupSymbol<func::FuncOp>(kernelName)
                      : func::FuncOp();
    if (!fn)
      return op->emitOpError() << "names kernel '" << kernelName
                               << "', which the @ein_kernels module lacks";
    SmallVector<int> buffers(inputs.begin(), inputs.end());
    buffers.push_back(out);
    if (fn.getNumArguments() < buffers.size())
      return op->emitOpError()
             << "has " << inputs.size() << " inputs, but its kernel takes "
             << fn.getNumArguments() << " buffers";
    for (Type scratch : fn.getArgumentTypes().drop_front(buffers.size())) {
      FailureOr<int> id = allocate(op, cast<ShapedType>(scratch), device);
      if (failed(id))
        return failure();
      buffers.push_back(*id);
    }
    auto constant = [](Value v) -> int64_t {
      std::optional<int64_t> c = getConstantIntValue(v);
      return c ? *c : -1;
    };
    for (auto launch : fn.getOps<gpu::LaunchFuncOp>()) {
      gpu::KernelDim3 grid = launch.getGridSizeOperandValues(),
                      block = launch.getBlockSizeOperandValues();
      ::ein::Step step;
      step.kind = ::ein::StepKind::Kernel;
      step.device = static_cast<int>(device);
      step.kernel = launch.getKernelName().getValue().str();
      Value grids[] = {grid.x, grid.y, grid.z};
      Value blocks[] = {block.x, block.y, block.z};
      for (int i = 0; i < 3; ++i) {
        step.launch.grid[i] = constant(grids[i]);
        step.launch.block[i] = constant(blocks[i]);
      }
      auto signature = signatures.find(step.kernel);
      if (signature == signatures.end() ||
          signature->second.args.size() != launch.getNumKernelOperands())
        return launch.emitOpError()
               << "launches a kernel the signature table does not describe";
      SmallVector<int> reads, writes;
      for (auto [i, operand] : llvm::enumerate(launch.getKernelOperands())) {
        auto arg = dyn_cast<BlockArgument>(operand);
        if (!arg || arg.getOwner()->getParentOp() != fn)
          return launch.emitOpError()
                 << "passes a value that is not a buffer of its block";
        int buffer = buffers[arg.getArgNumber()];
        ::ein::Access access = signature->second.args[i].access;
        if (access != ::ein::Access::Read && arg.getArgNumber() < inputs.size())
          return launch.emitOpError()
                 << "writes operand " << arg.getArgNumber()
                 << " of its block, which the block only reads";
        step.args.push_back({buffer, access});
        if (access != ::ein::Access::Write)
          reads.push_back(buffer);
        if (access != ::ein::Access::Read)
          writes.push_back(buffer);
      }
      addStep(std::move(step), reads, writes);
    }
    return success();
  }

  /// A block kernel: a library gemm, or the kernel ein-lower-to-cpu or
  /// ein-lower-to-cuda made.
  LogicalResult block(Operation *op) {
    auto device = op->getAttrOfType<IntegerAttr>("device");
    if (!device)
      return op->emitOpError() << "is not a device-level block (run "
                                  "ein-synthesize-exchanges first)";
    SmallVector<int> reads;
    for (Value input : op->getOperands()) {
      reads.push_back(bufferFor(op, input));
      if (reads.back() < 0)
        return failure();
    }
    ::ein::Step step;
    step.device = static_cast<int>(device.getInt());
    if (auto kernel =
            op->getAttrOfType<StringAttr>(EinDialect::getKernelAttrName())) {
      FailureOr<int> out = allocate(op, op->getResult(0), device.getInt());
      if (failed(out))
        return failure();
      usesKernels = true;
      if (getTargetBackend(backend).launchesGpuKernels())
        return launches(op, kernel.getValue(), reads, *out, device.getInt());
      step.kind = ::ein::StepKind::Kernel;
      step.kernel = kernel.getValue().str();
      for (int r : reads)
        step.args.push_back({r, ::ein::Access::Read});
      step.args.push_back({*out, ::ein::Access::Write});
      addStep(std::move(step), reads, {*out});
      return success();
    }
    if (auto attention = dyn_cast<AttentionOp>(op);
        attention && isLibraryAttention(attention, backend)) {
      // A result only transposed (ein-fold-attention-views) is written
      // transposed, into the transpose's buffer.
      Value result = attention.getResult();
      std::optional<::ein::StridedView> oView;
      if (result.hasOneUse())
        if (auto view = dyn_cast<ViewOp>(*result.getUsers().begin()))
          if (FailureOr<SmallVector<int64_t>> placed = permutationStrides(view);
              succeeded(placed)) {
            result = view.getResult();
            auto shape = cast<RankedTensorType>(attention.getType()).getShape();
            oView = ::ein::StridedView{integers(shape), integers(*placed), 0};
          }
      FailureOr<int> o = allocate(op, result, device.getInt());
      if (failed(o))
        return failure();
      step.kind = ::ein::StepKind::Library;
      step.call = "attention";
      step.q = reads[0];
      step.k = reads[1];
      step.v = reads[2];
      step.o = *o;
      step.qView = viewRead(attention.getQuery());
      step.kView = viewRead(attention.getKey());
      step.vView = viewRead(attention.getValue());
      step.oView = oView;
      step.causal = attention.getCausal();
      step.diagonal = attention.getQueryOffset() - attention.getKeyOffset();
      step.scale = attention.getScaleOrDefault();
      addStep(std::move(step), reads, {*o});
      return success();
    }
    if (auto conv = dyn_cast<ConvOp>(op);
        conv && whyNotLibraryConv(conv, backend).empty()) {
      FailureOr<int> y = allocate(op, conv.getResult(), device.getInt());
      if (failed(y))
        return failure();
      step.kind = ::ein::StepKind::Library;
      step.call = "conv";
      step.a = reads[0];
      step.b = reads[1];
      step.c = *y;
      step.conv.layout = conv.getLayout().str();
      step.conv.strides = integers(conv.getStrides());
      step.conv.dilations = integers(conv.getDilations());
      step.conv.padLow = integers(conv.getPadLow());
      step.conv.padHigh = integers(conv.getPadHigh());
      step.conv.groups = conv.getGroupCount();
      addStep(std::move(step), reads, {*y});
      return success();
    }
    auto join = dyn_cast<JoinAggOp>(op);
    FailureOr<LibraryGemm> gemm =
        join ? matchLibraryGemm(join) : FailureOr<LibraryGemm>(failure());
    if (failed(gemm))
      return op->emitOpError() << "needs a generated kernel: run "
                               << getTargetBackend(backend).loweringPassName()
                               << " before ein-write-bundle";
    FailureOr<int> c = allocate(op, join.getResult(), device.getInt());
    if (failed(c))
      return failure();
    setGemm(step, reads, *c, gemm->transposeA, gemm->transposeB);
    addStep(std::move(step), reads, {*c});
    return success();
  }

  /// An ein.view: no step. Written by the attention whose result it
  /// transposes (its buffer is that step's o), or read in place by the
  /// library attention steps that alone read it (their q, k or v views).
  LogicalResult readInPlace(ViewOp view) {
    if (bufferOf.count(view.getResult()))
      return success();
    for (Operation *user : view->getUsers()) {
      auto attention = dyn_cast<AttentionOp>(user);
      if (!attention || !isLibraryAttention(attention, backend))
        return view.emitOpError()
               << "has no bundle form: a view is read in place by library "
                  "attention steps alone, or written by the one attention "
                  "whose result it transposes";
    }
    int source = bufferFor(view, view.getSource());
    if (source < 0)
      return failure();
    bufferOf[view.getResult()] = source;
    auto shape = cast<RankedTensorType>(view.getType()).getShape();
    views[view.getResult()] =
        ::ein::StridedView{integers(shape), integers(view.getStrides()),
                           view.getOffsetAttr().getInt()};
    return success();
  }

  /// The view through which a library step reads `operand`, if any.
  std::optional<::ein::StridedView> viewRead(Value operand) const {
    auto it = views.find(operand);
    if (it == views.end())
      return std::nullopt;
    return it->second;
  }

  /// `step` a library gemm of `reads`' first two buffers into `c`.
  static void setGemm(::ein::Step &step, ArrayRef<int> reads, int c,
                      bool transposeA, bool transposeB) {
    step.kind = ::ein::StepKind::Library;
    step.call = "gemm";
    step.a = reads[0];
    step.b = reads[1];
    step.c = c;
    step.transposeA = transposeA;
    step.transposeB = transposeB;
  }

  /// An ein.gemm: one gemm step with its epilogue's operands.
  LogicalResult gemmWithEpilogue(GemmOp gemm) {
    SmallVector<int> reads;
    for (Value operand : gemm->getOperands()) {
      reads.push_back(bufferFor(gemm, operand));
      if (reads.back() < 0)
        return failure();
    }
    FailureOr<int> c = allocate(gemm, gemm.getResult(), gemm.getDevice());
    if (failed(c))
      return failure();
    ::ein::Step step;
    step.device = static_cast<int>(gemm.getDevice());
    setGemm(step, reads, *c, gemm.getTransposeA(), gemm.getTransposeB());
    if (gemm.getBias())
      step.bias = reads[2];
    if (gemm.getAddend())
      step.addend = reads[gemm.getBias() ? 3 : 2];
    switch (gemm.getActivation()) {
    case GemmActivation::None:
      step.activation = ::ein::Activation::None;
      break;
    case GemmActivation::Relu:
      step.activation = ::ein::Activation::Relu;
      break;
    case GemmActivation::GeluTanh:
      step.activation = ::ein::Activation::GeluTanh;
      break;
    }
    addStep(std::move(step), reads, {*c});
    return success();
  }

  /// The dense tensor constant `v` is, or null.
  static arith::ConstantOp denseConstant(Value v) {
    auto constant = v.getDefiningOp<arith::ConstantOp>();
    return constant && isa<DenseElementsAttr>(constant.getValue())
               ? constant
               : arith::ConstantOp();
  }

  LogicalResult visit(Operation *op, func::ReturnOp ret) {
    if (auto partition = dyn_cast<PartitionOp>(op)) {
      if (!isa<BlockArgument>(partition.getSource()) &&
          !denseConstant(partition.getSource()))
        return op->emitOpError()
               << "places a value that is neither an argument nor a dense "
                  "constant; ein-write-bundle places only those";
      return success();
    }
    if (auto extract = dyn_cast<ExtractBlockOp>(op)) {
      auto partition = extract.getSource().getDefiningOp<PartitionOp>();
      if (!partition)
        return op->emitOpError() << "needs a placed ein.partition";
      auto rel = cast<RelationType>(extract.getSource().getType());
      SmallVector<int64_t> offsets;
      for (auto [d, b] : llvm::enumerate(extract.getBlock()))
        offsets.push_back(
            ::ein::blockRange(rel.getShape()[d], rel.getParts()[d], b).offset);
      FailureOr<int> buffer =
          allocate(op, extract.getResult(), extract.getDevice());
      if (failed(buffer))
        return failure();
      // Inputs and constants stay intact through the run (it can be
      // replayed).
      bufferList[*buffer].first = -1;
      bufferList[*buffer].last = kLive;
      if (arith::ConstantOp constant = denseConstant(partition.getSource())) {
        auto known = llvm::find_if(
            constants, [&](const auto &c) { return c.first == constant; });
        if (known == constants.end()) {
          constants.push_back({constant, {}});
          known = std::prev(constants.end());
        }
        known->second.push_back({*buffer, integers(offsets)});
        return success();
      }
      unsigned arg = cast<BlockArgument>(partition.getSource()).getArgNumber();
      inputs[arg].push_back({*buffer, integers(offsets)});
      return success();
    }
    if (auto transfer = dyn_cast<TransferOp>(op)) {
      int64_t to = transfer.getTo();
      SmallVector<int64_t> hops(
          transfer.getVia().value_or(ArrayRef<int64_t>()));
      hops.push_back(to);
      // Per region, where it is now: its source buffer, at its offsets.
      SmallVector<RegionCopy> now;
      for (unsigned i = 0, e = transfer.getNumCopies(); i < e; ++i) {
        int source = bufferFor(op, transfer.getSources()[i]);
        if (source < 0)
          return failure();
        ArrayRef<int64_t> offsets = transfer.getRegionOffsets(i);
        now.push_back({source, SmallVector<int64_t>(offsets), -1,
                       SmallVector<int64_t>(offsets.size(), 0),
                       SmallVector<int64_t>(transfer.getRegionSizes(i))});
      }
      // The regions land on each hop in turn (a relay), all in one step.
      for (int64_t hop : hops) {
        for (auto [i, c] : llvm::enumerate(now)) {
          FailureOr<int> landed = allocate(op, transfer.getResults()[i], hop);
          if (failed(landed))
            return failure();
          c.to = *landed;
        }
        copies(now, hop);
        for (RegionCopy &c : now) {
          c.from = c.to;
          c.fromOffset.assign(c.fromOffset.size(), 0);
        }
      }
      return success();
    }
    if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op)) {
      int source = bufferFor(op, slice.getSource());
      if (source < 0)
        return failure();
      // Rows of a value are read where they lie.
      if (slice.getType().getRank() == slice.getSourceType().getRank())
        if (std::optional<int64_t> at = contiguousRun(
                source, slice.getStaticOffsets(), slice.getStaticSizes(),
                slice.getStaticStrides())) {
          bufferOf[slice.getResult()] =
              viewOfBuffer(source, slice.getType().getShape(), *at);
          return success();
        }
      int64_t device = bufferList[source].device;
      FailureOr<int> dest = allocate(op, slice.getResult(), device);
      if (failed(dest))
        return failure();
      copy(source, slice.getStaticOffsets(), *dest,
           SmallVector<int64_t>(slice.getStaticOffsets().size(), 0),
           slice.getStaticSizes(), device);
      return success();
    }
    if (isa<tensor::EmptyOp>(op))
      return success(); // its buffer comes with the first insertion
    if (auto insert = dyn_cast<tensor::InsertSliceOp>(op)) {
      int source = bufferFor(op, insert.getSource());
      if (source < 0)
        return failure();
      int64_t device = bufferList[source].device;
      int dest;
      if (insert.getDest().getDefiningOp<tensor::EmptyOp>()) {
        FailureOr<int> fresh = allocate(op, insert.getResult(), device);
        if (failed(fresh))
          return failure();
        dest = *fresh;
        assembled[dest];
      } else {
        dest = bufferFor(op, insert.getDest());
        if (dest < 0)
          return failure();
      }
      bufferOf[insert.getResult()] = dest;
      bool inPlace =
          regionFree(insert, dest) && (rowsInPlace(insert, source, dest) ||
                                       landInPlace(insert, source, dest));
      if (auto regions = assembled.find(dest); regions != assembled.end())
        regions->second.push_back(
            {SmallVector<int64_t>(insert.getStaticOffsets()),
             SmallVector<int64_t>(insert.getStaticSizes())});
      if (!inPlace)
        copy(source, SmallVector<int64_t>(insert.getStaticOffsets().size(), 0),
             dest, insert.getStaticOffsets(), insert.getStaticSizes(), device);
      return success();
    }
    if (auto view = dyn_cast<ViewOp>(op))
      return readInPlace(view);
    if (op->hasTrait<BlockKernel>())
      return block(op);
    if (auto gemm = dyn_cast<GemmOp>(op))
      return gemmWithEpilogue(gemm);
    if (auto reshape = dyn_cast<ReshapeOp>(op)) {
      // Row-major blocks reshape in place: the same bytes, another shape.
      int source = bufferFor(op, reshape.getSource());
      if (source < 0)
        return failure();
      bufferOf[reshape.getResult()] = viewOfBuffer(
          source, cast<RankedTensorType>(reshape.getType()).getShape(), 0);
      return success();
    }
    if (auto aggregate = dyn_cast<AggregateOp>(op)) {
      SmallVector<int> partials;
      for (Value p : aggregate.getPartials()) {
        partials.push_back(bufferFor(op, p));
        if (partials.back() < 0)
          return failure();
      }
      FailureOr<int> out =
          allocate(op, aggregate.getResult(), aggregate.getDevice());
      if (failed(out))
        return failure();
      ::ein::Step step;
      step.kind = ::ein::StepKind::Aggregate;
      step.device = static_cast<int>(aggregate.getDevice());
      step.op = aggOf(aggregate.getKind());
      step.inputs.assign(partials.begin(), partials.end());
      step.output = *out;
      addStep(std::move(step), partials, {*out});
      return success();
    }
    if (auto blocks = dyn_cast<FromBlocksOp>(op)) {
      return success(); // read where it is assembled
    }
    if (auto assemble = dyn_cast<AssembleOp>(op)) {
      auto blocks = assemble.getSource().getDefiningOp<FromBlocksOp>();
      if (!blocks)
        return op->emitOpError() << "needs an ein.from_blocks";
      auto rel = cast<RelationType>(blocks.getType());
      for (OpOperand &use : assemble.getResult().getUses())
        if (use.getOwner() != ret.getOperation())
          return op->emitOpError() << "is used before the return";
      for (OpOperand &use : assemble.getResult().getUses()) {
        unsigned result = use.getOperandNumber();
        std::vector<int64_t> parts(rel.getParts().begin(),
                                   rel.getParts().end());
        for (auto [i, block] : llvm::enumerate(blocks.getBlocks())) {
          std::vector<int64_t> index =
              ::ein::delinearize(int64_t(i) / rel.getReplicas(), parts);
          SmallVector<int64_t> offsets;
          for (size_t d = 0; d < index.size(); ++d)
            offsets.push_back(
                ::ein::blockRange(rel.getShape()[d], parts[d], index[d])
                    .offset);
          int buffer = bufferFor(op, block);
          if (buffer < 0)
            return failure();
          bufferList[bufferList[buffer].root].last = kLive;
          outputs[result].push_back({buffer, integers(offsets)});
        }
      }
      return success();
    }
    // A dense constant that is only placed: its blocks are the bundle's
    // constants (visited at the ein.extract_block ops).
    if (auto constant = dyn_cast<arith::ConstantOp>(op);
        constant && denseConstant(constant.getResult()) &&
        llvm::all_of(constant->getUsers(),
                     [](Operation *user) { return isa<PartitionOp>(user); }))
      return success();
    if (isa<arith::ConstantOp>(op) && isa<ShapedType>(op->getResultTypes()[0]))
      return op->emitOpError()
             << "has no bundle form: a tensor constant is held in the bundle "
                "only when it is a dense tensor placed by ein.partition";
    return op->emitOpError() << "has no bundle form";
  }
};

} // namespace

namespace {

/// The names a bundle directory holds (and stale NAME.partial files of
/// writers before the staging directory).
bool isBundleEntry(StringRef name) {
  return name == "manifest.json" || name == "program.json" ||
         name == "kernels" || name.ends_with(".partial");
}

/// Removes `path`: a link alone (removing a directory tree through it
/// would follow it), a directory with all it holds.
void removeEntry(const std::string &path) {
  llvm::sys::fs::file_status status;
  if (!llvm::sys::fs::status(path, status, /*Follow=*/false) &&
      llvm::sys::fs::is_directory(status))
    llvm::sys::fs::remove_directories(path);
  llvm::sys::fs::remove(path);
}

/// Puts the directory `staging` in `dir`'s place. A `dir` that does not
/// exist is a rename; an existing one (a directory or a link) is exchanged
/// with `staging` in one step (renameat2 RENAME_EXCHANGE; where the file
/// system cannot, two renames) and then removed, after what it held besides
/// a bundle's files (an explain file, say) is moved into the new one. A
/// link is removed, never followed.
bool replaceDirectory(const std::string &staging, const std::string &dir,
                      std::string &error) {
  namespace fs = llvm::sys::fs;
  fs::file_status status;
  if (fs::status(dir, status, /*Follow=*/false) ==
      std::errc::no_such_file_or_directory) {
    if (std::error_code ec = fs::rename(staging, dir)) {
      error = "cannot move the bundle into '" + dir + "': " + ec.message();
      return false;
    }
    return true;
  }
  if (fs::is_regular_file(status)) {
    error = "cannot write the bundle: '" + dir + "' is a file";
    return false;
  }
  if (fs::is_directory(status)) {
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec, /*follow_symlinks=*/false), end;
         !ec && it != end; it.increment(ec)) {
      StringRef name = llvm::sys::path::filename(it->path());
      if (isBundleEntry(name))
        continue;
      if (std::error_code moved =
              fs::rename(it->path(), staging + "/" + name.str())) {
        error = "cannot keep '" + it->path() +
                "' with the new bundle: " + moved.message();
        return false;
      }
    }
  }
  if (::renameat2(AT_FDCWD, staging.c_str(), AT_FDCWD, dir.c_str(),
                  RENAME_EXCHANGE) != 0) {
    // No atomic exchange here: the old one aside, the new one in.
    std::string old = staging + ".old";
    removeEntry(old);
    if (std::error_code ec = fs::rename(dir, old)) {
      error = "cannot replace '" + dir + "': " + ec.message();
      return false;
    }
    if (std::error_code ec = fs::rename(staging, dir)) {
      (void)fs::rename(old, dir);
      error = "cannot move the bundle into '" + dir + "': " + ec.message();
      return false;
    }
    removeEntry(old);
    return true;
  }
  // `staging` now names the old bundle (or the link).
  removeEntry(staging);
  return true;
}

} // namespace

LogicalResult mlir::ein::writeBundle(ModuleOp module,
                                     const BundleOptions &options) {
  StringRef dir = options.dir, target = options.target,
            reference = options.reference;
  int64_t memoryLimit = options.memoryLimit;
  if (dir.empty()) {
    module.emitError() << "ein-write-bundle needs dir=PATH";
    return failure();
  }
  TargetAttr machine = requireTarget(module, "ein-write-bundle");
  if (!machine)
    return failure();
  FailureOr<::ein::Backend> resolved = resolveBackend(
      module, target, options.targetGiven, "ein-write-bundle target: ");
  if (failed(resolved))
    return failure();
  ::ein::Backend backend = *resolved;
  std::string why;
  std::string kind = ::ein::backendName(backend);
  std::string chip = ::ein::bundleChip(backend, machine.getChip().str());
  if (!::ein::checkChipForBackend(backend, chip, why)) {
    module.emitError() << "the #ein.target's chip does not fit the bundle: "
                       << why;
    return failure();
  }
  FailureOr<func::FuncOp> func = selectProgramFunction(module, "");
  if (failed(func))
    return failure();
  ::ein::Manifest manifest;
  manifest.backend = backend;
  manifest.chip = chip;
  manifest.devices = static_cast<int>(machine.getDevices());
  // A chunked plan runs as a dataflow bundle (docs/physical.md).
  manifest.dataflow = (*func)->hasAttr(EinDialect::getDataflowAttrName());
  // The target's topology says which node each device sits on; a bundle for
  // several nodes runs as one process per node.
  ::ein::Topology topology;
  if (!::ein::makeTopology(machine.getTopology().str(), machine.getDevices(),
                           topology, why)) {
    module.emitError() << "ein-write-bundle: " << why;
    return failure();
  }
  manifest.nodes = static_cast<int>(topology.nodes);
  ModuleOp kernels = findKernelsModule(module);
  if (kernels) {
    auto built = kernels->getAttrOfType<StringAttr>(
        EinDialect::getKernelTargetAttrName());
    ::ein::Backend builtFor;
    std::string unused;
    if (!built || !::ein::parseBackend(built.str(), builtFor, unused) ||
        builtFor != backend) {
      kernels.emitError() << "the @" << kKernelsModuleName
                          << " module holds kernels built for '"
                          << (built ? built.getValue() : "no target")
                          << "', but the bundle targets " << kind;
      return failure();
    }
  }
  Writer writer(*func, machine.getDevices(), backend, kernels);
  if (failed(writer.run(manifest)))
    return failure();
  const TargetBackend &lowering = getTargetBackend(backend);
  if (writer.usesKernels) {
    if (!kernels) {
      func->emitOpError() << "calls kernels, but the module has no @"
                          << kKernelsModuleName << " module";
      return failure();
    }
    if (failed(lowering.checkKernelsLowered(kernels, *func)))
      return failure();
    manifest.kernelLibraries = {lowering.kernelLibraryFile().str()};
  }
  // The reference --check evaluates: the logical program when given
  // (ein-compile exports it before planning), else the device-level one.
  FailureOr<::ein::Program> program = failure();
  if (!reference.empty()) {
    ::ein::Program read;
    if (!::ein::readProgram(reference.str(), read, why)) {
      module.emitError() << "cannot read the reference program: " << why;
      return failure();
    }
    program = std::move(read);
  } else {
    program = exportProgram(*func);
  }
  if (failed(program))
    return failure();
  // Each placed constant is named by the program.json constant with its
  // type and values (its blocks are filled from them at load).
  for (auto &[constant, blocks] : writer.constants) {
    FailureOr<::ein::TensorType> type =
        programTensorType(constant, constant.getType());
    if (failed(type))
      return failure();
    std::vector<double> values =
        programConstantValues(cast<DenseElementsAttr>(constant.getValue()));
    auto same = [&](const ::ein::Op &op) {
      if (op.kind != ::ein::OpKind::Constant || op.type.dtype != type->dtype ||
          op.type.shape != type->shape)
        return false;
      int64_t n = type->numElements();
      auto at = [&](const std::vector<double> &v, int64_t i) {
        return ::ein::roundTo(type->dtype, v.size() == 1 ? v[0] : v[i]);
      };
      for (int64_t i = 0; i < n; ++i) {
        double a = at(op.values, i), b = at(values, i);
        if (a != b && !(std::isnan(a) && std::isnan(b)))
          return false;
      }
      return true;
    };
    auto found = llvm::find_if(program->ops, same);
    if (found == program->ops.end())
      return constant.emitOpError()
             << "is not among the reference program's constants (was "
                "program.json exported from this program?)";
    ::ein::TensorLayout layout;
    layout.type = *type;
    layout.blocks = blocks;
    layout.value = found->result;
    manifest.constants.push_back(std::move(layout));
  }
  if (memoryLimit < 0) {
    module.emitError() << "memory-limit must not be negative, got "
                       << int64_t(memoryLimit);
    return failure();
  }
  auto largest =
      std::max_element(manifest.arenaBytes.begin(), manifest.arenaBytes.end());
  if (memoryLimit > 0 && largest != manifest.arenaBytes.end() &&
      *largest > memoryLimit) {
    InFlightDiagnostic diag =
        module.emitError()
        << "the bundle's buffer plan needs " << *largest << " bytes on device "
        << (largest - manifest.arenaBytes.begin())
        << ", over memory-limit=" << int64_t(memoryLimit)
        << " (the plan fits the planner's memory model, but the buffers, "
           "scratch included, do not)";
    if (auto model = (*func)->getAttrOfType<IntegerAttr>(
            EinDialect::getPlannedMemoryAttrName()))
      diag << "; the planner's model of this plan: " << model.getInt()
           << " bytes";
    return failure();
  }
  // Every kernel step against the signature of the kernel it names, as the
  // runtime checks it at load.
  if (!::ein::checkKernelSteps(manifest, writer.signatures, why)) {
    func->emitOpError() << "would make an invalid bundle: " << why;
    return failure();
  }
  // Everything is written into a fresh staging directory beside `dir`,
  // which then takes `dir`'s place whole (replaceDirectory).
  std::string staging = bundleStagingDirectory(dir);
  auto discard = [&]() {
    removeEntry(staging);
    return failure();
  };
  // The staging directory holds only the reference the pipeline exported
  // into it (if any): anything else is from an earlier, failed write. A
  // link there is refused (writing through it would write elsewhere).
  llvm::sys::fs::file_status stagingStatus;
  if (!llvm::sys::fs::status(staging, stagingStatus, /*Follow=*/false) &&
      !llvm::sys::fs::is_directory(stagingStatus)) {
    module.emitError() << "'" << staging
                       << "', where the bundle is assembled, is not a "
                          "directory (a link?): remove it";
    return failure();
  }
  {
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(staging, ec, false), end;
         !ec && it != end; it.increment(ec))
      if (it->path() != reference)
        removeEntry(it->path());
  }
  std::string library = staging + "/kernels";
  if (std::error_code ec = llvm::sys::fs::create_directories(
          writer.usesKernels ? library : staging)) {
    module.emitError() << "cannot create '" << staging << "': " << ec.message();
    return discard();
  }
  auto write = [&](const std::string &path,
                   const std::string &contents) -> LogicalResult {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    std::string why = ec ? ec.message() : "";
    if (!ec) {
      os << contents;
      os.close();
      why = takeStreamError(os);
    }
    if (!why.empty()) {
      module.emitError() << "cannot write '" << path << "': " << why;
      return failure();
    }
    return success();
  };
  // The libraries first: the manifest records their hashes.
  if (writer.usesKernels) {
    std::string path =
        library + "/" +
        llvm::sys::path::filename(lowering.kernelLibraryFile()).str();
    FailureOr<std::string> bytes =
        lowering.buildKernelLibrary(kernels, path, module);
    if (failed(bytes) || failed(write(path, *bytes)))
      return discard();
    manifest.kernelLibraryHashes = {::ein::sha256Hex(*bytes)};
  }
  // The runtime's own validation (layouts tile, the schedule is race free
  // and its data flow whole, ...): a bundle that would not load is an
  // error here.
  ::ein::Manifest parsed;
  std::string text = ::ein::writeManifest(manifest);
  if (!::ein::parseManifest(text, parsed, why) ||
      !::ein::checkAgreement(parsed, *program, why)) {
    func->emitOpError() << "would make an invalid bundle: " << why;
    return discard();
  }
  if (failed(write(staging + "/program.json", ::ein::writeProgram(*program))) ||
      failed(write(staging + "/manifest.json", text)))
    return discard();
  if (!replaceDirectory(staging, dir.str(), why)) {
    module.emitError() << why;
    return discard();
  }
  return success();
}

std::string mlir::ein::bundleStagingDirectory(StringRef dir) {
  llvm::SmallString<256> path(dir);
  while (path.size() > 1 && llvm::sys::path::is_separator(path.back()))
    path.pop_back();
  std::string name = "." + llvm::sys::path::filename(path).str() + ".partial";
  llvm::sys::path::remove_filename(path);
  llvm::sys::path::append(path, name);
  return std::string(path);
}
