//===- Region.cpp - Derivatives of join regions ---------------------------===//
//
// Forward mode over one join region: the derivative of each value with
// respect to one block argument, op by op, built after the region's own
// ops so that it may read their values (exp's result for its derivative).
//
//===----------------------------------------------------------------------===//

#include "Autodiff.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::ein;
using namespace mlir::ein::autodiff_detail;

namespace {

class Tangents {
public:
  Tangents(OpBuilder &builder, BlockArgument wrt) : b(builder), wrt(wrt) {}

  /// The derivative of `v`, null for zero.
  FailureOr<Value> of(Value v) {
    if (auto found = memo.find(v); found != memo.end())
      return found->second;
    FailureOr<Value> d = compute(v);
    if (succeeded(d))
      memo[v] = *d;
    return d;
  }

private:
  OpBuilder &b;
  BlockArgument wrt;
  DenseMap<Value, Value> memo;

  Value constant(Type type, double x, Location loc) {
    return floatConstant(b, loc, type, x);
  }
  Value orZero(Value d, Type type, Location loc) {
    return d ? d : constant(type, 0, loc);
  }
  Value mul(Value x, Value y, Location loc) {
    if (matchPattern(x, m_OneFloat()))
      return y;
    if (matchPattern(y, m_OneFloat()))
      return x;
    return arith::MulFOp::create(b, loc, x, y);
  }
  Value div(Value x, Value y, Location loc) {
    return arith::DivFOp::create(b, loc, x, y);
  }

  FailureOr<Value> compute(Value v) {
    if (v == wrt)
      return constant(v.getType(), 1, v.getLoc());
    if (!isa<FloatType>(v.getType()))
      return Value(); // integers, booleans and indices carry none
    Operation *op = v.getDefiningOp();
    if (!op)
      return Value(); // another argument
    Location loc = op->getLoc();
    // The operands' derivatives; an op none of whose operands has one has
    // none itself, whatever it is.
    SmallVector<Value> d;
    bool any = false;
    for (Value operand : op->getOperands()) {
      FailureOr<Value> t = of(operand);
      if (failed(t))
        return failure();
      d.push_back(*t);
      any |= static_cast<bool>(*t);
    }
    if (!any)
      return Value();
    Type type = v.getType();
    auto x = [&](unsigned i) { return op->getOperand(i); };
    return TypeSwitch<Operation *, FailureOr<Value>>(op)
        .Case([&](arith::AddFOp) -> FailureOr<Value> {
          if (!d[0] || !d[1])
            return d[0] ? d[0] : d[1];
          return Value(arith::AddFOp::create(b, loc, d[0], d[1]));
        })
        .Case([&](arith::SubFOp) -> FailureOr<Value> {
          if (!d[1])
            return d[0];
          if (!d[0])
            return Value(arith::NegFOp::create(b, loc, d[1]));
          return Value(arith::SubFOp::create(b, loc, d[0], d[1]));
        })
        .Case([&](arith::MulFOp) -> FailureOr<Value> {
          Value l = d[0] ? mul(d[0], x(1), loc) : Value();
          Value r = d[1] ? mul(x(0), d[1], loc) : Value();
          if (!l || !r)
            return l ? l : r;
          return Value(arith::AddFOp::create(b, loc, l, r));
        })
        .Case([&](arith::DivFOp) -> FailureOr<Value> {
          // (da - (a / b) db) / b
          Value num = d[0];
          if (d[1]) {
            Value t = mul(v, d[1], loc);
            num = num ? Value(arith::SubFOp::create(b, loc, num, t))
                      : Value(arith::NegFOp::create(b, loc, t));
          }
          return div(num, x(1), loc);
        })
        .Case([&](arith::NegFOp) -> FailureOr<Value> {
          return Value(arith::NegFOp::create(b, loc, d[0]));
        })
        .Case<arith::ExtFOp, arith::TruncFOp>(
            [&](Operation *) { return castFloat(b, loc, d[0], type); })
        .Case([&](math::ExpOp) { return mul(d[0], v, loc); })
        .Case([&](math::LogOp) { return div(d[0], x(0), loc); })
        .Case([&](math::TanhOp) {
          // (1 - y^2) da
          Value one = constant(type, 1, loc);
          return mul(d[0], arith::SubFOp::create(b, loc, one, mul(v, v, loc)),
                     loc);
        })
        .Case([&](math::ErfOp) {
          // 2 / sqrt(pi) exp(-a^2) da
          Value sq = mul(x(0), x(0), loc);
          Value e =
              math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, sq));
          return mul(
              d[0], mul(constant(type, 2 / std::sqrt(M_PI), loc), e, loc), loc);
        })
        .Case([&](math::SqrtOp) {
          return div(d[0], mul(constant(type, 2, loc), v, loc), loc);
        })
        .Case([&](math::RsqrtOp) {
          // -1/2 y / a da
          return mul(d[0],
                     div(mul(constant(type, -0.5, loc), v, loc), x(0), loc),
                     loc);
        })
        .Case([&](math::PowFOp) -> FailureOr<Value> {
          // y (db log a + b da / a)
          Value sum;
          if (d[0])
            sum = div(mul(x(1), d[0], loc), x(0), loc);
          if (d[1]) {
            Value t = mul(d[1], math::LogOp::create(b, loc, x(0)), loc);
            sum = sum ? Value(arith::AddFOp::create(b, loc, sum, t)) : t;
          }
          return mul(v, sum, loc);
        })
        .Case([&](math::AbsFOp) {
          Value negative = arith::CmpFOp::create(
              b, loc, arith::CmpFPredicate::OLT, x(0), constant(type, 0, loc));
          return Value(arith::SelectOp::create(
              b, loc, negative, arith::NegFOp::create(b, loc, d[0]), d[0]));
        })
        .Case<arith::MaximumFOp, arith::MaxNumFOp, arith::MinimumFOp,
              arith::MinNumFOp>([&](Operation *) {
          // The derivative of the operand taken; on a tie the second's
          // (relu as max(x, 0) has derivative 0 at 0, as PyTorch's).
          bool max = isa<arith::MaximumFOp, arith::MaxNumFOp>(op);
          Value first = arith::CmpFOp::create(b, loc,
                                              max ? arith::CmpFPredicate::OGT
                                                  : arith::CmpFPredicate::OLT,
                                              x(0), x(1));
          return Value(arith::SelectOp::create(
              b, loc, first, orZero(d[0], type, loc), orZero(d[1], type, loc)));
        })
        .Case([&](arith::SelectOp) {
          return Value(arith::SelectOp::create(
              b, loc, x(0), orZero(d[1], type, loc), orZero(d[2], type, loc)));
        })
        .Default([&](Operation *other) -> FailureOr<Value> {
          return other->emitError()
                 << "ein-autodiff has no derivative rule for '"
                 << other->getName() << "' in a join region";
        });
  }
};

} // namespace

FailureOr<Value> autodiff_detail::differentiate(OpBuilder &builder, Value value,
                                                BlockArgument wrt) {
  Tangents tangents(builder, wrt);
  return tangents.of(value);
}
