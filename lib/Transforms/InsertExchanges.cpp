//===- InsertExchanges.cpp - ein-insert-exchanges -----------------------===//

#include "Einsummable/Dialect/Ein/IR/EinOps.h"
#include "Einsummable/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"

#include <map>

namespace mlir::ein {
#define GEN_PASS_DEF_EININSERTEXCHANGES
#include "Einsummable/Transforms/Passes.h.inc"
} // namespace mlir::ein

using namespace mlir;
using namespace mlir::ein;

namespace {

/// The relation an access of a value of `type` needs under `parts`: each
/// dimension cut by the product of its loops' parts, `replicas` copies.
RelationType relationFor(RankedTensorType type, const OperandAccess &access,
                         ArrayRef<int64_t> parts, int64_t replicas,
                         AggKind partial, Type element) {
  return RelationType::get(type.getContext(), type.getShape(), element,
                           access.cut(parts), replicas, partial, {});
}

/// Rewrites one function; the ops it replaces are erased at the end.
class Rewriter {
public:
  explicit Rewriter(func::FuncOp func) : func(func), builder(func) {}

  LogicalResult run() {
    SmallVector<Operation *> old;
    for (Operation &op : func.getBody().front())
      old.push_back(&op);
    for (Operation *op : old) {
      builder.setInsertionPoint(op);
      if (auto ret = dyn_cast<func::ReturnOp>(op)) {
        if (failed(rewriteReturn(ret)))
          return failure();
        continue;
      }
      if (auto constant = dyn_cast<arith::ConstantOp>(op);
          constant && isa<RankedTensorType>(constant.getType()))
        continue; // enters through ein.partition where it is used
      auto spec = dyn_cast<SpecOpInterface>(op);
      if (!spec || op->getNumResults() != 1 ||
          !isa<RankedTensorType>(op->getResult(0).getType()))
        return op->emitOpError() << "cannot be planned; ein-insert-exchanges "
                                    "takes logical ein ops on tensors";
      if (!spec.getSpecAttr())
        return op->emitOpError() << "has no spec; run ein-decompose first";
      if (failed(rewriteOp(spec)))
        return failure();
      replaced.push_back(op);
    }
    for (Operation *op : llvm::reverse(replaced))
      op->erase();
    return success();
  }

private:
  /// `value` as a relation of `type`: its current relation moved if needed,
  /// or, for an argument or constant, partitioned on entry.
  Value relationOf(Value value, RelationType type) {
    auto key = std::make_pair(value.getAsOpaquePointer(),
                              Type(type).getAsOpaquePointer());
    if (auto it = cache.find(key); it != cache.end())
      return it->second;
    Value result;
    auto current = relations.find(value);
    if (current == relations.end()) {
      result = PartitionOp::create(builder, value.getLoc(), type, value);
    } else if (current->second.getType() == type) {
      result = current->second;
    } else {
      result =
          RepartitionOp::create(builder, value.getLoc(), type, current->second);
    }
    cache[key] = result;
    return result;
  }

  /// The complete (aggregated) relation of `value`, cut as produced.
  RelationType completeType(Value value) {
    auto tensor = cast<RankedTensorType>(value.getType());
    auto it = relations.find(value);
    SmallVector<int64_t> parts(tensor.getRank(), 1);
    if (it != relations.end())
      parts =
          llvm::to_vector(cast<RelationType>(it->second.getType()).getParts());
    return RelationType::get(tensor.getContext(), tensor.getShape(),
                             tensor.getElementType(), parts, 1, AggKind::None,
                             {});
  }

  LogicalResult rewriteOp(SpecOpInterface op) {
    ArrayRef<int64_t> parts = op.getSpecAttr().getParts();
    OpAccesses accesses = op.getAccesses();
    // Per operand, not per value: one value read twice (x^T x) may be
    // needed in two layouts.
    SmallVector<Value> operands;
    for (auto [operand, access] :
         llvm::zip(op->getOperands(), accesses.inputs)) {
      auto tensor = cast<RankedTensorType>(operand.getType());
      // A touched input is read by intersection, cut any way: take it as it
      // was made, aggregated.
      RelationType needed =
          access.shift.empty()
              ? relationFor(tensor, access, parts, access.partsOutside(parts),
                            AggKind::None, tensor.getElementType())
              : completeType(operand);
      operands.push_back(relationOf(operand, needed));
    }
    auto resultTensor = cast<RankedTensorType>(op->getResult(0).getType());
    int64_t fanIn = accesses.result.partsOutside(parts);
    RelationType resultType =
        fanIn > 1 ? relationFor(resultTensor, accesses.result, parts, fanIn,
                                accesses.aggregation, accesses.accumulator)
                  : relationFor(resultTensor, accesses.result, parts, 1,
                                AggKind::None, resultTensor.getElementType());
    Operation *planned = builder.clone(*op);
    planned->setOperands(operands);
    planned->getResult(0).setType(resultType);
    relations[op->getResult(0)] = planned->getResult(0);
    return success();
  }

  LogicalResult rewriteReturn(func::ReturnOp ret) {
    for (OpOperand &operand : ret->getOpOperands()) {
      Value value = operand.get();
      if (!relations.count(value))
        continue; // an argument or constant returned as it came
      Value whole = relationOf(value, completeType(value));
      operand.set(
          AssembleOp::create(builder, ret.getLoc(), value.getType(), whole));
    }
    return success();
  }

  func::FuncOp func;
  OpBuilder builder;
  llvm::DenseMap<Value, Value> relations; // tensor -> its relation
  std::map<std::pair<void *, const void *>, Value> cache;
  SmallVector<Operation *> replaced;
};

struct EinInsertExchangesPass
    : public mlir::ein::impl::EinInsertExchangesBase<EinInsertExchangesPass> {
  using Base::Base;

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      if (!func.getBody().hasOneBlock()) {
        func.emitOpError() << "ein-insert-exchanges takes a function with one "
                              "block";
        return signalPassFailure();
      }
      if (failed(Rewriter(func).run()))
        return signalPassFailure();
    }
  }
};

} // namespace
