//===- GpuLaunches.cpp - linalg ops of block kernels as GPU kernels -------===//
//
// The generic path: every linalg op (generic or fill) of a block kernel
// becomes one GPU kernel with a thread per point of its parallel loops,
// delinearised with the innermost loop fastest (coalesced along contiguous
// rows), running the op's reduction loops itself. Correct for any static
// shape; fast for elementwise maps, not for long reductions.
//
//===----------------------------------------------------------------------===//

#include "Einsummable/Conversion/BlockKernels/BlockKernels.h"
#include "Einsummable/Conversion/EinToCUDA/EinToCUDA.h"

#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/TypeSwitch.h"

#include <tuple>

using namespace mlir;
using namespace mlir::ein;

FailureOr<std::string> mlir::ein::cudaFeaturesFor(StringRef chip,
                                                  std::string &why) {
  unsigned version = 0;
  if (!chip.consume_front("sm_") || chip.getAsInteger(10, version)) {
    why = "expected a chip named sm_NN";
    return failure();
  }
  if (version < 70) {
    why = "chips before sm_70 are not supported";
    return failure();
  }
  // The PTX ISA that first supports the chip; LLVM's default (6.0) would
  // abort code generation for newer ones.
  if (version >= 100)
    return std::string("+ptx86");
  if (version >= 90)
    return std::string("+ptx80");
  if (version >= 89)
    return std::string("+ptx78");
  if (version >= 80)
    return std::string("+ptx70");
  return std::string("+ptx60");
}

void mlir::ein::buildCudaDeviceLoweringPipeline(OpPassManager &pm,
                                                StringRef chip,
                                                StringRef features,
                                                StringRef toolkit) {
  GpuNVVMAttachTargetOptions target;
  target.chip = chip.str();
  target.features = features.str();
  target.optLevel = 3;
  target.moduleMatcher = kDeviceModuleName.str();
  pm.addPass(createGpuNVVMAttachTarget(target));
  OpPassManager &device = pm.nest<gpu::GPUModuleOp>();
  device.addPass(createLowerAffinePass());
  device.addPass(createSCFToControlFlowPass());
  device.addPass(math::createMathExtendToSupportedTypes());
  ConvertGpuOpsToNVVMOpsOptions nvvm;
  nvvm.useBarePtrCallConv = true;
  device.addPass(createConvertGpuOpsToNVVMOps(nvvm));
  device.addPass(createReconcileUnrealizedCastsPass());
  device.addPass(createCanonicalizerPass());
  GpuModuleToBinaryPassOptions binary;
  binary.toolkitPath = toolkit.str();
  binary.compilationTarget = "bin";
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

namespace {

constexpr int64_t kWarp = 32;

int64_t elementBytes(ShapedType type) {
  return (type.getElementTypeBitWidth() + 7) / 8;
}

/// The alignment of a `width`-lane vector access to `type`'s elements that
/// starts at a multiple of `width` in a 256-byte-aligned buffer.
llvm::MaybeAlign vectorAlignment(ShapedType type, int64_t width) {
  return llvm::MaybeAlign(std::min<int64_t>(16, width * elementBytes(type)));
}

/// Launches `fn` on `buffers` at the builder's point: `blocks` blocks of
/// `threads` threads.
void launch(OpBuilder &host, Location loc, gpu::GPUFuncOp fn, int64_t blocks,
            ValueRange buffers, int64_t threads = kGpuThreadsPerBlock) {
  Value one = arith::ConstantIndexOp::create(host, loc, 1);
  gpu::LaunchFuncOp::create(
      host, loc, fn,
      gpu::KernelDim3{arith::ConstantIndexOp::create(host, loc, blocks), one,
                      one},
      gpu::KernelDim3{arith::ConstantIndexOp::create(host, loc, threads), one,
                      one},
      Value(), buffers);
}

/// For a kernel with a warp per row: the thread's row and lane. Leaves `b`
/// inside `if row < rows`, which is warp-uniform (a warp is one row), so
/// every lane of a live warp takes part in its shuffles.
std::pair<Value, Value> enterWarpRow(OpBuilder &b, Location loc, int64_t rows,
                                     int64_t threads = kGpuThreadsPerBlock) {
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value linear = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc,
                            gpu::BlockIdOp::create(b, loc, gpu::Dimension::x),
                            index(threads)),
      gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x));
  Value row = arith::DivUIOp::create(b, loc, linear, index(kWarp));
  Value lane = arith::RemUIOp::create(b, loc, linear, index(kWarp));
  auto guard =
      scf::IfOp::create(b, loc,
                        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                              row, index(rows)),
                        /*withElseRegion=*/false);
  b.setInsertionPoint(guard.thenBlock()->getTerminator());
  return {row, lane};
}

/// Builds one GPU kernel for `op` and replaces `op` by its launch.
class KernelBuilder {
public:
  KernelBuilder(linalg::LinalgOp op, gpu::GPUModuleOp device, StringRef name)
      : op(op), device(device), name(name) {}

  LogicalResult build() {
    Location loc = op.getLoc();
    for (OpOperand &operand : op->getOpOperands())
      if (isa<MemRefType>(operand.get().getType()) &&
          !llvm::is_contained(buffers, operand.get()))
        buffers.push_back(operand.get());
    // Buffers the body loads from at computed places (a gather's table)
    // are parameters too.
    op->walk([&](memref::LoadOp load) {
      Value from = load.getMemRef();
      if (!op->isProperAncestor(from.getParentBlock()->getParentOp()) &&
          !llvm::is_contained(buffers, from))
        buffers.push_back(from);
    });
    SmallVector<Type> types;
    for (Value buffer : buffers)
      types.push_back(buffer.getType());

    OpBuilder b(op.getContext());
    b.setInsertionPointToEnd(device.getBody());
    auto fn = gpu::GPUFuncOp::create(b, loc, name,
                                     b.getFunctionType(types, TypeRange()));
    fn->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
    Block &entry = fn.getBody().front();
    b.setInsertionPointToStart(&entry);
    for (auto [buffer, arg] : llvm::zip(buffers, entry.getArguments()))
      args.map(buffer, arg);

    SmallVector<int64_t> sizes = op.getStaticLoopRanges();
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    int64_t points = 1;
    for (auto [size, kind] : llvm::zip(sizes, iterators)) {
      if (ShapedType::isDynamic(size))
        return op->emitOpError() << "has a dynamic loop; GPU kernels need "
                                    "static shapes";
      if (kind == utils::IteratorType::parallel)
        points *= size;
    }
    // Reductions along contiguous rows: a warp a row.
    if (std::optional<AggKind> kind = rowReduction(sizes, iterators))
      return warpPerRow(b, fn, entry, sizes, *kind, points);
    // Elementwise ops move `width` consecutive elements a thread with 16-byte
    // vector accesses where every operand runs along the innermost loop.
    int64_t width = vectorWidth(sizes, iterators);
    points /= width;
    int64_t blocks = (points + kGpuThreadsPerBlock - 1) / kGpuThreadsPerBlock;
    if (blocks > std::numeric_limits<int32_t>::max())
      return op->emitOpError()
             << "needs " << blocks << " thread blocks, more than a grid holds";

    // The point of this thread, delinearised over the parallel loops.
    auto index = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    Value block = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
    Value thread = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
    Value linear = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, block, index(kGpuThreadsPerBlock)),
        thread);
    Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                         linear, index(points));
    auto guard = scf::IfOp::create(b, loc, inside, /*withElseRegion=*/false);
    b.setInsertionPoint(guard.thenBlock()->getTerminator());
    ivs.assign(sizes.size(), Value());
    Value rest = linear;
    for (int64_t d = int64_t(sizes.size()) - 1; d >= 0; --d) {
      if (iterators[d] != utils::IteratorType::parallel)
        continue;
      bool innermost = d == int64_t(sizes.size()) - 1;
      int64_t size = innermost ? sizes[d] / width : sizes[d];
      ivs[d] = arith::RemUIOp::create(b, loc, rest, index(size));
      rest = arith::DivUIOp::create(b, loc, rest, index(size));
      if (innermost && width > 1)
        ivs[d] = arith::MulIOp::create(b, loc, ivs[d], index(width));
    }
    OpOperand *out = op.getDpsInitOperand(0);
    if (width > 1) {
      if (failed(vectorBody(b, width)))
        return failure();
      return finish(b, fn, entry, blocks);
    }
    // Where the output element lives does not depend on reduction loops.
    for (int64_t d = 0, e = sizes.size(); d < e; ++d)
      if (!ivs[d])
        ivs[d] = index(0);
    // The output is read only when the op accumulates into it or its region
    // reads it: an elementwise map writes without reading.
    bool reduces =
        llvm::is_contained(iterators, utils::IteratorType::reduction);
    Value init;
    if (reduces || !op.getBlock()->getArguments().back().use_empty()) {
      FailureOr<Value> loaded = load(b, *out);
      if (failed(loaded))
        return failure();
      init = *loaded;
    }
    FailureOr<Value> result = reduce(b, 0, sizes, iterators, init);
    if (failed(result))
      return failure();
    memref::StoreOp::create(b, loc, *result, args.lookup(out->get()),
                            indicesOf(b, *out));
    return finish(b, fn, entry, blocks);
  }

private:
  linalg::LinalgOp op;
  gpu::GPUModuleOp device;
  std::string name;
  SmallVector<Value> buffers;
  IRMapping args;
  SmallVector<Value> ivs;

  /// Ends the kernel and replaces the op by its launch.
  LogicalResult finish(OpBuilder &b, gpu::GPUFuncOp fn, Block &entry,
                       int64_t blocks) {
    Location loc = op.getLoc();
    b.setInsertionPointToEnd(&entry);
    gpu::ReturnOp::create(b, loc);

    // The launch, in place of the op.
    OpBuilder host(op);
    launch(host, loc, fn, blocks, buffers);
    op->erase();
    return success();
  }

  /// How the region of an op that reduces along its innermost loop only
  /// folds a point into its f32 accumulator, `acc = acc OP f(inputs)`, as
  /// the aggregation kind OP is, when every input runs along that loop
  /// contiguously or does not depend on it; none otherwise.
  std::optional<AggKind> rowReduction(ArrayRef<int64_t> sizes,
                                      ArrayRef<utils::IteratorType> iterators) {
    int64_t innermost = int64_t(sizes.size()) - 1;
    if (sizes.empty() ||
        llvm::count(iterators, utils::IteratorType::reduction) != 1 ||
        iterators.back() != utils::IteratorType::reduction)
      return std::nullopt;
    for (OpOperand *input : op.getDpsInputOperands()) {
      AffineMap map = op.getMatchingIndexingMap(input);
      for (auto [r, expr] : llvm::enumerate(map.getResults()))
        if (expr.isFunctionOfDim(innermost) &&
            (!isa<AffineDimExpr>(expr) || r + 1 != map.getNumResults()))
          return std::nullopt;
    }
    Block *region = op.getBlock();
    BlockArgument acc = region->getArguments().back();
    if (!acc.hasOneUse() || !acc.getType().isF32())
      return std::nullopt;
    Operation *fold = region->getTerminator()->getOperand(0).getDefiningOp();
    if (!fold || *acc.getUsers().begin() != fold || fold->getNumOperands() != 2)
      return std::nullopt;
    return TypeSwitch<Operation *, std::optional<AggKind>>(fold)
        .Case([](arith::AddFOp) { return AggKind::Add; })
        .Case([](arith::MulFOp) { return AggKind::Mul; })
        .Case([](arith::MaximumFOp) { return AggKind::Max; })
        .Case([](arith::MinimumFOp) { return AggKind::Min; })
        .Default([](Operation *) { return std::nullopt; });
  }

  /// A warp a row: each lane folds every 32nd chunk of `width` consecutive
  /// points of the row (16-byte vector loads), from the aggregation's identity;
  /// the lanes combine by shuffles, and lane 0 folds the sum into the
  /// output.
  LogicalResult warpPerRow(OpBuilder &b, gpu::GPUFuncOp fn, Block &entry,
                           ArrayRef<int64_t> sizes, AggKind kind,
                           int64_t rows) {
    Location loc = op.getLoc();
    int64_t innermost = int64_t(sizes.size()) - 1;
    int64_t narrowest = 16;
    for (OpOperand *input : op.getDpsInputOperands())
      if (auto type = dyn_cast<MemRefType>(input->get().getType()))
        if (op.getMatchingIndexingMap(input).isFunctionOfDim(innermost))
          narrowest = std::min<int64_t>(narrowest, elementBytes(type));
    int64_t width = std::min<int64_t>(8, 16 / narrowest);
    while (width > 1 && sizes[innermost] % width)
      width /= 2;
    int64_t threads = rows * kWarp;
    int64_t blocks = (threads + kGpuThreadsPerBlock - 1) / kGpuThreadsPerBlock;
    auto index = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    auto [row, lane] = enterWarpRow(b, loc, rows);
    ivs.assign(sizes.size(), Value());
    Value rest = row;
    for (int64_t d = innermost - 1; d >= 0; --d) {
      ivs[d] = arith::RemUIOp::create(b, loc, rest, index(sizes[d]));
      rest = arith::DivUIOp::create(b, loc, rest, index(sizes[d]));
    }
    auto loop = scf::ForOp::create(
        b, loc, arith::MulIOp::create(b, loc, lane, index(width)),
        index(sizes[innermost]), index(kWarp * width),
        ValueRange{aggregationIdentity(b, loc, kind, b.getF32Type())});
    {
      OpBuilder::InsertionGuard inLoop(b);
      b.setInsertionPointToStart(loop.getBody());
      Value start = loop.getInductionVar();
      ivs[innermost] = start;
      SmallVector<Value> values;
      for (OpOperand *input : op.getDpsInputOperands()) {
        auto type = dyn_cast<MemRefType>(input->get().getType());
        if (type && width > 1 &&
            op.getMatchingIndexingMap(input).isFunctionOfDim(innermost)) {
          auto vector = VectorType::get({width}, type.getElementType());
          values.push_back(vector::LoadOp::create(
              b, loc, vector, args.lookup(input->get()), indicesOf(b, *input),
              /*nontemporal=*/false, vectorAlignment(type, width)));
          continue;
        }
        FailureOr<Value> scalar = load(b, *input);
        if (failed(scalar))
          return failure();
        values.push_back(*scalar);
      }
      Value acc = loop.getRegionIterArgs().front();
      for (int64_t j = 0; j < width; ++j) {
        ivs[innermost] =
            j == 0 ? start
                   : arith::AddIOp::create(b, loc, start, index(j)).getResult();
        SmallVector<Value> elements;
        for (Value v : values)
          elements.push_back(
              isa<VectorType>(v.getType())
                  ? vector::ExtractOp::create(b, loc, v, j).getResult()
                  : v);
        elements.push_back(acc);
        FailureOr<Value> next = body(b, elements);
        if (failed(next))
          return failure();
        acc = *next;
      }
      scf::YieldOp::create(b, loc, acc);
    }
    Value partial = loop.getResult(0);
    for (int32_t offset = kWarp / 2; offset > 0; offset /= 2) {
      Value other = gpu::ShuffleOp::create(b, loc, partial, offset, kWarp,
                                           gpu::ShuffleMode::XOR)
                        .getShuffleResult();
      partial = aggregationCombine(b, loc, kind, partial, other);
    }
    auto first = scf::IfOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, index(0)),
        /*withElseRegion=*/false);
    b.setInsertionPoint(first.thenBlock()->getTerminator());
    ivs[innermost] = index(0);
    OpOperand *out = op.getDpsInitOperand(0);
    FailureOr<Value> init = load(b, *out);
    if (failed(init))
      return failure();
    memref::StoreOp::create(b, loc,
                            aggregationCombine(b, loc, kind, *init, partial),
                            args.lookup(out->get()), indicesOf(b, *out));
    return finish(b, fn, entry, blocks);
  }

  /// How many consecutive points of the innermost loop a thread takes: 1,
  /// or as many as fill 16 bytes of the narrowest operand, when the op
  /// reduces nothing, the innermost loop is a multiple of that, and every
  /// buffer either runs along it contiguously (its last index) or does not
  /// depend on it (a broadcast).
  int64_t vectorWidth(ArrayRef<int64_t> sizes,
                      ArrayRef<utils::IteratorType> iterators) {
    if (sizes.empty() ||
        llvm::is_contained(iterators, utils::IteratorType::reduction))
      return 1;
    int64_t innermost = sizes.size() - 1;
    int64_t narrowest = 8;
    for (OpOperand &operand : op->getOpOperands()) {
      auto type = dyn_cast<MemRefType>(operand.get().getType());
      if (!type)
        continue;
      narrowest = std::min<int64_t>(narrowest, elementBytes(type));
      AffineMap map = op.getMatchingIndexingMap(&operand);
      for (auto [r, expr] : llvm::enumerate(map.getResults())) {
        if (!expr.isFunctionOfDim(innermost))
          continue;
        auto dim = dyn_cast<AffineDimExpr>(expr);
        if (!dim || r + 1 != map.getNumResults())
          return 1;
      }
    }
    int64_t width = std::min<int64_t>(8, 16 / narrowest);
    return width > 1 && sizes[innermost] % width == 0 ? width : 1;
  }

  /// The elementwise body over `width` consecutive points: vector loads of
  /// the operands along the innermost loop (scalars for broadcasts), the
  /// region once a lane on extracted scalars, one vector store.
  LogicalResult vectorBody(OpBuilder &b, int64_t width) {
    Location loc = op.getLoc();
    int64_t innermost = ivs.size() - 1;
    auto access = [&](OpOperand &operand) -> std::optional<VectorType> {
      auto type = dyn_cast<MemRefType>(operand.get().getType());
      if (!type ||
          !op.getMatchingIndexingMap(&operand).isFunctionOfDim(innermost))
        return std::nullopt;
      return VectorType::get({width}, type.getElementType());
    };
    Block *region = op.getBlock();
    OpOperand *out = op.getDpsInitOperand(0);
    // Per region argument: a vector to extract lanes from, or a scalar.
    SmallVector<Value> values;
    for (OpOperand &operand : op->getOpOperands()) {
      bool isOut = &operand == out;
      if (isOut && region->getArguments().back().use_empty()) {
        values.push_back(Value());
        continue;
      }
      if (std::optional<VectorType> type = access(operand)) {
        values.push_back(vector::LoadOp::create(
            b, loc, *type, args.lookup(operand.get()), indicesOf(b, operand),
            /*nontemporal=*/false, vectorAlignment(*type, width)));
        continue;
      }
      FailureOr<Value> scalar = load(b, operand);
      if (failed(scalar))
        return failure();
      values.push_back(*scalar);
    }
    Value base = ivs[innermost];
    SmallVector<Value> lanes;
    for (int64_t lane = 0; lane < width; ++lane) {
      SmallVector<Value> elements;
      for (Value v : values)
        elements.push_back(
            v && isa<VectorType>(v.getType())
                ? vector::ExtractOp::create(b, loc, v, lane).getResult()
                : v);
      ivs[innermost] =
          lane == 0
              ? base
              : arith::AddIOp::create(
                    b, loc, base, arith::ConstantIndexOp::create(b, loc, lane))
                    .getResult();
      FailureOr<Value> result = body(b, elements);
      if (failed(result))
        return failure();
      lanes.push_back(*result);
    }
    ivs[innermost] = base;
    auto type = *access(*out);
    Value result = vector::FromElementsOp::create(b, loc, type, lanes);
    vector::StoreOp::create(b, loc, result, args.lookup(out->get()),
                            indicesOf(b, *out), /*nontemporal=*/false,
                            vectorAlignment(type, width));
    return success();
  }

  SmallVector<Value> indicesOf(OpBuilder &b, OpOperand &operand) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    SmallVector<Value> indices;
    for (AffineExpr expr : map.getResults())
      indices.push_back(affine::AffineApplyOp::create(
          b, op.getLoc(),
          AffineMap::get(map.getNumDims(), 0, expr, op.getContext()), ivs));
    return indices;
  }

  /// The operand's element at the current point.
  FailureOr<Value> load(OpBuilder &b, OpOperand &operand) {
    Value value = operand.get();
    if (isa<MemRefType>(value.getType()))
      return memref::LoadOp::create(b, op.getLoc(), args.lookup(value),
                                    indicesOf(b, operand))
          .getResult();
    return capture(b, value);
  }

  /// A scalar from outside the op, rebuilt in the kernel: constants only.
  FailureOr<Value> capture(OpBuilder &b, Value value) {
    if (Value known = args.lookupOrNull(value))
      return known;
    Operation *def = value.getDefiningOp();
    if (!def || !def->hasTrait<OpTrait::ConstantLike>())
      return op->emitOpError()
             << "reads a value defined outside it that is not a constant; "
                "a GPU kernel cannot capture it";
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&b.getInsertionBlock()
                                    ->getParent()
                                    ->getParentOfType<gpu::GPUFuncOp>()
                                    .getBody()
                                    .front());
    Value copy = b.clone(*def)->getResult(0);
    args.map(value, copy);
    return copy;
  }

  /// The op's region at the current point, reading `acc` as the output.
  FailureOr<Value> body(OpBuilder &b, Value acc) {
    SmallVector<Value> elements;
    for (OpOperand *input : op.getDpsInputOperands()) {
      FailureOr<Value> element = load(b, *input);
      if (failed(element))
        return failure();
      elements.push_back(*element);
    }
    elements.push_back(acc);
    return body(b, elements);
  }

  /// The op's region on one element of each operand (the output's last;
  /// null where the region does not read it).
  FailureOr<Value> body(OpBuilder &b, ArrayRef<Value> elements) {
    Block *region = op.getBlock();
    IRMapping map;
    for (auto [arg, element] : llvm::zip(region->getArguments(), elements))
      if (element)
        map.map(arg, element);
    for (Operation &inner : region->without_terminator()) {
      if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
        map.map(index.getResult(), ivs[index.getDim()]);
        continue;
      }
      for (Value operand : inner.getOperands())
        if (!map.contains(operand) &&
            operand.getParentRegion() != &op->getRegion(0)) {
          FailureOr<Value> outside = capture(b, operand);
          if (failed(outside))
            return failure();
          map.map(operand, *outside);
        }
      b.clone(inner, map);
    }
    return map.lookup(region->getTerminator()->getOperand(0));
  }

  /// The reduction loops from `from` on, around the body.
  FailureOr<Value> reduce(OpBuilder &b, int64_t from, ArrayRef<int64_t> sizes,
                          ArrayRef<utils::IteratorType> iterators, Value acc) {
    int64_t d = from;
    while (d < int64_t(sizes.size()) &&
           iterators[d] == utils::IteratorType::parallel)
      ++d;
    if (d == int64_t(sizes.size()))
      return body(b, acc);
    Location loc = op.getLoc();
    auto loop = scf::ForOp::create(
        b, loc, arith::ConstantIndexOp::create(b, loc, 0),
        arith::ConstantIndexOp::create(b, loc, sizes[d]),
        arith::ConstantIndexOp::create(b, loc, 1), ValueRange{acc});
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value saved = ivs[d];
    ivs[d] = loop.getInductionVar();
    FailureOr<Value> inner =
        reduce(b, d + 1, sizes, iterators, loop.getRegionIterArgs().front());
    ivs[d] = saved;
    if (failed(inner))
      return failure();
    scf::YieldOp::create(b, loc, *inner);
    return loop.getResult(0);
  }
};

} // namespace

LogicalResult mlir::ein::launchOnGpu(func::FuncOp kernel,
                                     gpu::GPUModuleOp device) {
  // Scratch buffers become trailing arguments: the bundle allocates them.
  Block &entry = kernel.getBody().front();
  SmallVector<memref::AllocOp> allocs;
  kernel.walk([&](memref::AllocOp alloc) { allocs.push_back(alloc); });
  SmallVector<Type> inputs(kernel.getArgumentTypes());
  for (memref::AllocOp alloc : allocs) {
    if (!alloc.getType().hasStaticShape() ||
        !alloc.getType().getLayout().isIdentity())
      return alloc.emitOpError() << "is not a static row-major scratch buffer";
    alloc.getResult().replaceAllUsesWith(
        entry.addArgument(alloc.getType(), alloc.getLoc()));
    inputs.push_back(alloc.getType());
    alloc.erase();
  }
  kernel.walk([](memref::DeallocOp dealloc) { dealloc.erase(); });
  kernel.setFunctionType(
      FunctionType::get(kernel.getContext(), inputs, TypeRange()));

  SmallVector<linalg::LinalgOp> ops;
  kernel.walk([&](linalg::LinalgOp op) { ops.push_back(op); });
  for (auto [i, op] : llvm::enumerate(ops)) {
    std::string name = (kernel.getSymName() + "_" + Twine(i)).str();
    if (failed(KernelBuilder(op, device, name).build()))
      return failure();
  }
  return success();
}

FailureOr<bool> mlir::ein::launchRowNormOnGpu(func::FuncOp kernel,
                                              Operation *norm,
                                              gpu::GPUModuleOp device) {
  // RMSNorm scales by its weight; LayerNorm first subtracts the mean and
  // has a weight and a bias or neither.
  bool centre = isa<LayerNormOp>(norm);
  double eps = centre ? cast<LayerNormOp>(norm).getEps().convertToDouble()
                      : cast<RmsNormOp>(norm).getEps().convertToDouble();
  unsigned numParams = norm->getNumOperands() - 1;
  SmallVector<MemRefType> types;
  for (Type t : kernel.getArgumentTypes().take_front(numParams + 2))
    types.push_back(cast<MemRefType>(t));
  MemRefType xType = types.front(), outType = types.back();
  ArrayRef<MemRefType> paramTypes = ArrayRef(types).slice(1, numParams);
  ArrayRef<int64_t> shape = xType.getShape();
  int64_t rank = shape.size();
  int64_t n = shape.back();
  int64_t width = std::min<int64_t>(8, 16 / elementBytes(xType));
  if (!xType.getElementType().isBF16() && !xType.getElementType().isF16() &&
      !xType.getElementType().isF32())
    return false;
  if (n % width != 0)
    return false;
  int64_t rows = xType.getNumElements() / n;
  // A row too short for a block (below) is a warp's: each lane reads every
  // 32nd 16-byte chunk of the row. A row of few
  // enough chunks a lane is held in registers: all its loads issued at
  // once, read once. A longer one is read again for each statistic and for
  // the output (from cache), 8 chunks an iteration so that many loads are in
  // flight. A kernel of many chunks a lane (held or streamed) takes 100-160
  // registers a thread: blocks of 2 warps let an SM fill its register file
  // (13 warps at 154 registers, where blocks of 8 warps fit once). Measured
  // on an H200 at 16384 x 4096 bf16 (bench/results/
  // 2026-12-03-row-norm-kernels-h200x1.md): LayerNorm held 0.098 ms,
  // streamed 0.075; RMSNorm held 0.088 in blocks of 8 warps, 0.074 of 2.
  // LayerNorm's three statistics over held chunks keep more live than
  // RMSNorm's one: it holds up to 8 chunks, RMSNorm 16. RMSNorm stays in
  // blocks of 8 warps all the same: inside the LLaMA blocks (between gemms)
  // those ran faster in three of four A/B leases (w1-w5 geomean 0.954 of the
  // best PyTorch against 0.965; bench/results/
  // 2026-12-03-rmsnorm-launch-ab-h200x1.md), though slower alone.
  int64_t chunkSpan = kWarp * width;
  int64_t chunks = n / chunkSpan;
  bool held = n % chunkSpan == 0 && chunks <= (centre ? 8 : 16);
  int64_t unroll = held ? chunks : 8;
  while (unroll > 1 && n % (unroll * chunkSpan) != 0)
    unroll /= 2;
  int64_t threads = centre && chunks > 8 ? 2 * kWarp : kGpuThreadsPerBlock;
  int64_t blocks = (rows * kWarp + threads - 1) / threads;
  // A long row is a block's: T threads (256, else 128) each hold 2 to 8
  // chunks of it, their sums meeting in shared memory. At 16384 x 4096 bf16
  // on an H200 (bench/results/2026-12-04-norm-row-per-block-h200x1.md) a
  // row a block of 256 threads runs LayerNorm in 0.0702 ms (90.2% of the
  // copy bandwidth) against 0.0751 for a warp a row, RMSNorm in 0.0698
  // against 0.0876: a warp a row kept 28% of the warps an SM can hold
  // active (its registers), a block a row 70%. A chunk a thread (512
  // threads) ran 0.0844, and GPT-2's 768-wide rows (a chunk each of 96
  // threads) 0.0093 against 0.0084: short rows stay a warp's.
  int64_t rowThreads = 0;
  for (int64_t t : {int64_t(256), int64_t(128)})
    if (n % (t * width) == 0 && n / (t * width) >= 2 && n / (t * width) <= 8) {
      rowThreads = t;
      break;
    }
  bool rowPerBlock =
      rowThreads > 0 && rows <= std::numeric_limits<int32_t>::max();
  if (rowPerBlock) {
    chunkSpan = rowThreads * width;
    chunks = n / chunkSpan;
    held = true;
    unroll = chunks;
    threads = rowThreads;
    blocks = rows;
  }
  if (blocks > std::numeric_limits<int32_t>::max())
    return false;

  Location loc = norm->getLoc();
  MLIRContext *ctx = kernel.getContext();
  OpBuilder b(ctx);
  b.setInsertionPointToEnd(device.getBody());
  std::string name =
      (kernel.getSymName() + (centre ? "_layer_norm" : "_rms_norm")).str();
  SmallVector<Type> argTypes(types.begin(), types.end());
  // A row per block sums across its warps in shared memory: one slot a
  // warp for each statistic.
  SmallVector<Type> shared;
  if (rowPerBlock)
    shared.assign(
        centre ? 2 : 1,
        MemRefType::get({threads / kWarp}, b.getF32Type(), AffineMap(),
                        gpu::AddressSpaceAttr::get(
                            ctx, gpu::GPUDialect::getWorkgroupAddressSpace())));
  auto fn = gpu::GPUFuncOp::create(
      b, loc, name, b.getFunctionType(argTypes, TypeRange()), shared);
  fn->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  Block &entry = fn.getBody().front();
  b.setInsertionPointToStart(&entry);
  Value x = entry.getArgument(0), out = entry.getArgument(numParams + 1);
  Type f32 = b.getF32Type();
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto f32Const = [&](double v) -> Value {
    return arith::ConstantOp::create(b, loc, f32, b.getF32FloatAttr(v));
  };
  auto widen = [&](Value v) -> Value {
    return v.getType() == f32 ? v : arith::ExtFOp::create(b, loc, f32, v);
  };
  // `lane`: the thread's place among its row's threads (a row per block:
  // its index in the block).
  Value row, lane;
  if (rowPerBlock) {
    row = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
    lane = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  } else {
    std::tie(row, lane) = enterWarpRow(b, loc, rows, threads);
  }
  SmallVector<Value> at(rank, Value());
  Value rest = row;
  for (int64_t d = rank - 2; d >= 0; --d) {
    at[d] = arith::RemUIOp::create(b, loc, rest, index(shape[d]));
    rest = arith::DivUIOp::create(b, loc, rest, index(shape[d]));
  }
  Value first = arith::MulIOp::create(b, loc, lane, index(width));
  Value step = index(unroll * chunkSpan);
  auto xVector = VectorType::get({width}, xType.getElementType());
  auto outVector = VectorType::get({width}, outType.getElementType());
  // The columns of the chunks one iteration at column `k` covers.
  auto chunkColumns = [&](Value k) {
    SmallVector<Value> columns;
    for (int64_t u = 0; u < unroll; ++u)
      columns.push_back(
          u == 0 ? k
                 : arith::AddIOp::create(b, loc, k, index(u * chunkSpan))
                       .getResult());
    return columns;
  };
  auto loadChunk = [&](Value k) -> Value {
    at.back() = k;
    return vector::LoadOp::create(b, loc, xVector, x, at,
                                  /*nontemporal=*/false,
                                  vectorAlignment(xType, width));
  };
  // Adds each element of `chunk`, less `centre` if given, squared if
  // `square`, to `acc`.
  auto accumulate = [&](Value chunk, Value acc, Value mean, bool square) {
    for (int64_t j = 0; j < width; ++j) {
      Value v = widen(vector::ExtractOp::create(b, loc, chunk, j));
      if (mean)
        v = arith::SubFOp::create(b, loc, v, mean);
      acc = arith::AddFOp::create(
          b, loc, acc, square ? arith::MulFOp::create(b, loc, v, v) : v);
    }
    return acc;
  };
  auto allReduce = [&](Value total) {
    for (int32_t offset = kWarp / 2; offset > 0; offset /= 2)
      total = arith::AddFOp::create(
          b, loc, total,
          gpu::ShuffleOp::create(b, loc, total, offset, kWarp,
                                 gpu::ShuffleMode::XOR)
              .getShuffleResult());
    return total;
  };
  // The sum over the row's threads: the warp's, then (a row per block) the
  // warps', each warp's first lane writing its slot of the next shared slot
  // array and every thread adding the slots in the same order (so all hold
  // the same total).
  int reductions = 0;
  auto rowReduce = [&](Value total) {
    total = allReduce(total);
    if (!rowPerBlock)
      return total;
    Value slots = fn.getWorkgroupAttributions()[reductions++];
    Value warp = arith::DivUIOp::create(b, loc, lane, index(kWarp));
    auto leader = scf::IfOp::create(
        b, loc,
        arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::eq,
            arith::RemUIOp::create(b, loc, lane, index(kWarp)), index(0)),
        /*withElseRegion=*/false);
    {
      OpBuilder::InsertionGuard inIf(b);
      b.setInsertionPoint(leader.thenBlock()->getTerminator());
      memref::StoreOp::create(b, loc, total, slots, ValueRange{warp});
    }
    gpu::BarrierOp::create(b, loc);
    Value sum = f32Const(0.0);
    for (int64_t w = 0; w < threads / kWarp; ++w)
      sum = arith::AddFOp::create(
          b, loc, sum,
          memref::LoadOp::create(b, loc, slots, ValueRange{index(w)}));
    return sum;
  };
  SmallVector<Value> heldColumns, heldChunks;
  if (held) {
    heldColumns = chunkColumns(first);
    for (Value k : heldColumns)
      heldChunks.push_back(loadChunk(k));
  }
  // One statistic of the row, summed over its lanes.
  auto rowSum = [&](Value mean, bool square) -> Value {
    if (held) {
      Value total = f32Const(0.0);
      for (Value chunk : heldChunks)
        total = accumulate(chunk, total, mean, square);
      return rowReduce(total);
    }
    auto sum = scf::ForOp::create(b, loc, first, index(n), step,
                                  ValueRange{f32Const(0.0)});
    {
      OpBuilder::InsertionGuard inLoop(b);
      b.setInsertionPointToStart(sum.getBody());
      SmallVector<Value> chunks;
      for (Value k : chunkColumns(sum.getInductionVar()))
        chunks.push_back(loadChunk(k));
      Value acc = sum.getRegionIterArgs().front();
      for (Value chunk : chunks)
        acc = accumulate(chunk, acc, mean, square);
      scf::YieldOp::create(b, loc, acc);
    }
    return allReduce(sum.getResult(0));
  };
  Value count = f32Const(static_cast<double>(n));
  Value mean;
  if (centre)
    mean = arith::DivFOp::create(b, loc, rowSum(Value(), false), count);
  // One reciprocal square root a row; each element is multiplied by it.
  Value inverse = math::RsqrtOp::create(
      b, loc,
      arith::AddFOp::create(
          b, loc, arith::DivFOp::create(b, loc, rowSum(mean, true), count),
          f32Const(eps)));

  // Normalised, scaled and shifted, a vector a store.
  auto emit = [&](Value k, Value chunk, ArrayRef<Value> params) {
    SmallVector<Value> lanes;
    for (int64_t j = 0; j < width; ++j) {
      Value v = widen(vector::ExtractOp::create(b, loc, chunk, j));
      if (mean)
        v = arith::SubFOp::create(b, loc, v, mean);
      v = arith::MulFOp::create(b, loc, v, inverse);
      if (!params.empty())
        v = arith::MulFOp::create(
            b, loc, v, widen(vector::ExtractOp::create(b, loc, params[0], j)));
      if (params.size() > 1)
        v = arith::AddFOp::create(
            b, loc, v, widen(vector::ExtractOp::create(b, loc, params[1], j)));
      if (outType.getElementType() != f32)
        v = arith::TruncFOp::create(b, loc, outType.getElementType(), v);
      lanes.push_back(v);
    }
    at.back() = k;
    vector::StoreOp::create(
        b, loc, vector::FromElementsOp::create(b, loc, outVector, lanes), out,
        at, /*nontemporal=*/false, vectorAlignment(outType, width));
  };
  auto loadParams = [&](Value k) {
    SmallVector<Value> params;
    for (auto [i, type] : llvm::enumerate(paramTypes))
      params.push_back(vector::LoadOp::create(
          b, loc, VectorType::get({width}, type.getElementType()),
          entry.getArgument(i + 1), ValueRange{k},
          /*nontemporal=*/false, vectorAlignment(type, width)));
    return params;
  };
  if (held) {
    for (auto [k, chunk] : llvm::zip(heldColumns, heldChunks))
      emit(k, chunk, loadParams(k));
  } else {
    auto scale = scf::ForOp::create(b, loc, first, index(n), step);
    OpBuilder::InsertionGuard inLoop(b);
    b.setInsertionPointToStart(scale.getBody());
    SmallVector<Value> columns = chunkColumns(scale.getInductionVar());
    SmallVector<Value> chunks;
    SmallVector<SmallVector<Value>> params;
    for (Value k : columns) {
      chunks.push_back(loadChunk(k));
      params.push_back(loadParams(k));
    }
    for (int64_t u = 0; u < unroll; ++u)
      emit(columns[u], chunks[u], params[u]);
  }
  b.setInsertionPointToEnd(&entry);
  gpu::ReturnOp::create(b, loc);

  // The kernel function: this one launch.
  Block &body = kernel.getBody().front();
  SmallVector<Operation *> old;
  for (Operation &op : body.without_terminator())
    old.push_back(&op);
  for (Operation *op : llvm::reverse(old)) {
    op->dropAllUses();
    op->erase();
  }
  OpBuilder host = OpBuilder::atBlockBegin(&body);
  launch(host, loc, fn, blocks, body.getArguments().take_front(numParams + 2),
         threads);
  return true;
}

void mlir::ein::dropUnusedKernelArguments(ModuleOp kernels,
                                          gpu::GPUModuleOp device) {
  llvm::StringMap<llvm::BitVector> unused;
  for (auto fn : device.getOps<gpu::GPUFuncOp>()) {
    if (!fn.isKernel())
      continue;
    llvm::BitVector drop(fn.getNumArguments());
    // The kernel's own arguments, not its shared-memory attributions.
    for (BlockArgument arg : fn.getArguments().take_front(drop.size()))
      if (arg.use_empty())
        drop.set(arg.getArgNumber());
    if (drop.none())
      continue;
    (void)fn.eraseArguments(drop);
    unused[fn.getName()] = drop;
  }
  if (unused.empty())
    return;
  kernels.walk([&](gpu::LaunchFuncOp launch) {
    if (launch.getKernelModuleName() != device.getName())
      return;
    auto found = unused.find(launch.getKernelName().getValue());
    if (found == unused.end())
      return;
    // From the back, so the indices of those left stay put.
    for (int i = int(found->second.size()) - 1; i >= 0; --i)
      if (found->second.test(i))
        launch.getKernelOperandsMutable().erase(i);
  });
}

FailureOr<::ein::KernelSignatures>
mlir::ein::gpuKernelSignatures(gpu::GPUModuleOp device) {
  ::ein::KernelSignatures signatures;
  for (auto fn : device.getOps<gpu::GPUFuncOp>()) {
    if (!fn.isKernel())
      continue;
    ::ein::KernelSignature &signature = signatures[fn.getName().str()];
    for (BlockArgument arg :
         fn.getArguments().take_front(fn.getNumArguments())) {
      bool reads = false, writes = false;
      // The argument and the views of it, through their users.
      SmallVector<Value> values = {arg};
      while (!values.empty()) {
        Value v = values.pop_back_val();
        for (OpOperand &use : v.getUses()) {
          Operation *user = use.getOwner();
          if (isa<ViewLikeOpInterface>(user)) {
            llvm::append_range(values, user->getResults());
            continue;
          }
          auto effects = dyn_cast<MemoryEffectOpInterface>(user);
          if (!effects) {
            reads = writes = true;
            continue;
          }
          SmallVector<MemoryEffects::EffectInstance> list;
          effects.getEffectsOnValue(v, list);
          for (const MemoryEffects::EffectInstance &e : list) {
            reads |= isa<MemoryEffects::Read>(e.getEffect());
            writes |= isa<MemoryEffects::Write>(e.getEffect());
          }
        }
      }
      ::ein::Access access = !writes  ? ::ein::Access::Read
                             : !reads ? ::ein::Access::Write
                                      : ::ein::Access::ReadWrite;
      FailureOr<::ein::SignatureArg> entry =
          signatureArg(arg.getType(), access);
      if (failed(entry))
        return fn.emitOpError() << "takes a " << arg.getType()
                                << ", which a kernel signature cannot "
                                   "describe (the runtime passes buffers)";
      signature.args.push_back(std::move(*entry));
    }
  }
  return signatures;
}
