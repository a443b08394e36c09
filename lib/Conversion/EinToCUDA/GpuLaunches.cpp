//===- GpuLaunches.cpp - linalg ops of block kernels as GPU kernels -------===//
//
// The generic path: every linalg op (generic or fill) of a block kernel
// becomes one GPU kernel with a thread per point of its parallel loops,
// delinearised with the innermost loop fastest (coalesced along contiguous
// rows), running the op's reduction loops itself. Correct for any static
// shape; fast for elementwise maps, not for long reductions.
//
//===----------------------------------------------------------------------===//

#include "Einsummable/Conversion/EinToCUDA/EinToCUDA.h"

#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/Passes.h"

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
      ivs[d] = arith::RemUIOp::create(b, loc, rest, index(sizes[d]));
      rest = arith::DivUIOp::create(b, loc, rest, index(sizes[d]));
    }
    // Where the output element lives does not depend on reduction loops.
    OpOperand *out = op.getDpsInitOperand(0);
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
    b.setInsertionPointToEnd(&entry);
    gpu::ReturnOp::create(b, loc);

    // The launch, in place of the op.
    OpBuilder host(op);
    Value one = arith::ConstantIndexOp::create(host, loc, 1);
    gpu::LaunchFuncOp::create(
        host, loc, fn,
        gpu::KernelDim3{arith::ConstantIndexOp::create(host, loc, blocks), one,
                        one},
        gpu::KernelDim3{
            arith::ConstantIndexOp::create(host, loc, kGpuThreadsPerBlock), one,
            one},
        Value(), buffers);
    op->erase();
    return success();
  }

private:
  linalg::LinalgOp op;
  gpu::GPUModuleOp device;
  std::string name;
  SmallVector<Value> buffers;
  IRMapping args;
  SmallVector<Value> ivs;

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
    Block *region = op.getBlock();
    IRMapping map;
    for (OpOperand *input : op.getDpsInputOperands()) {
      FailureOr<Value> element = load(b, *input);
      if (failed(element))
        return failure();
      map.map(region->getArgument(input->getOperandNumber()), *element);
    }
    if (acc)
      map.map(region->getArguments().back(), acc);
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
