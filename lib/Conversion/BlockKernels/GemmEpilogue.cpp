//===- GemmEpilogue.cpp - Elementwise blocks a library gemm absorbs -------===//
//
// The region of an elementwise block is read as arithmetic on its inputs.
// The sum `t = product + bias + addend` is found as a tree of additions;
// what the region does with `t` is then evaluated symbolically, as a
// polynomial in `t` and `u = tanh(p(t))`, and compared with the
// activations' own polynomials, so that every spelling of GELU's tanh
// approximation front ends write (0.5 x (1 + tanh(...)), x^3 as a power or
// two products, constants folded or not) is recognized and nothing else is.
//
//===----------------------------------------------------------------------===//

#include "Einsummable/Conversion/BlockKernels/GemmEpilogue.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Matchers.h"

#include <cmath>
#include <map>

using namespace mlir;
using namespace mlir::ein;

namespace {

/// The terms of the sum `v` is: its operands through every `addf`, float
/// casts looked through (the epilogue computes in f32 and rounds once,
/// where the block may round between steps).
void sumTerms(Value v, SmallVectorImpl<Value> &terms) {
  v = stripFloatCasts(v);
  if (auto add = v.getDefiningOp<arith::AddFOp>()) {
    sumTerms(add.getLhs(), terms);
    sumTerms(add.getRhs(), terms);
    return;
  }
  terms.push_back(v);
}

/// The roles of a block's inputs in the epilogue.
struct Roles {
  mutable JoinAggOp block;
  unsigned product;

  /// Whether `terms` are the product's argument once and at most one bias
  /// and one addend argument, filling `into`'s operands.
  bool classify(ArrayRef<Value> terms, GemmEpilogue &into) const {
    bool sawProduct = false;
    GemmEpilogue found;
    ArrayRef<int64_t> out = block.getOutputIndices();
    for (Value term : terms) {
      auto arg = dyn_cast<BlockArgument>(term);
      if (!arg || arg.getOwner() != &block.getJoin().front())
        return false;
      unsigned input = arg.getArgNumber();
      ArrayRef<int64_t> indices = block.getIndicesOfInput(input);
      if (input == product) {
        if (sawProduct)
          return false;
        sawProduct = true;
      } else if (indices.size() == 1 && indices.front() == out.back() &&
                 !found.bias) {
        found.bias = input;
      } else if (indices == out && !found.addend) {
        found.addend = input;
      } else {
        return false;
      }
    }
    if (!sawProduct)
      return false;
    into.bias = found.bias;
    into.addend = found.addend;
    return true;
  }
};

/// A polynomial in t (the sum) and u (its one tanh): coefficients by the
/// powers of t and u.
using Poly = std::map<std::pair<int, int>, double>;

/// Polynomials above this degree are no activation this matches.
constexpr int kMaxDegree = 8;

Poly add(const Poly &x, const Poly &y, double sign) {
  Poly r = x;
  for (auto [power, c] : y)
    r[power] += sign * c;
  return r;
}

std::optional<Poly> multiply(const Poly &x, const Poly &y) {
  Poly r;
  for (auto [px, cx] : x)
    for (auto [py, cy] : y) {
      std::pair<int, int> power{px.first + py.first, px.second + py.second};
      if (power.first + power.second > kMaxDegree)
        return std::nullopt;
      r[power] += cx * cy;
    }
  return r;
}

bool near(double x, double y) {
  // Front ends write the constants in f32, bf16 or to a few digits.
  return std::abs(x - y) <= 1e-3 * std::max(std::abs(x), std::abs(y));
}

/// Whether `p` is `expected` (missing coefficients are zero).
bool same(const Poly &p, const Poly &expected) {
  for (auto [power, c] : p) {
    auto it = expected.find(power);
    double want = it == expected.end() ? 0.0 : it->second;
    if (want == 0.0 ? std::abs(c) > 1e-9 : !near(c, want))
      return false;
  }
  for (auto [power, c] : expected)
    if (!p.count(power))
      return false;
  return true;
}

/// Evaluates the region's values as polynomials in the sum `t`.
class Evaluator {
public:
  Evaluator(const Roles &roles, const GemmEpilogue &sum)
      : roles(roles), sum(sum) {}

  std::optional<Poly> eval(Value v) {
    v = stripFloatCasts(v);
    if (auto it = memo.find(v); it != memo.end())
      return it->second;
    std::optional<Poly> p = compute(v);
    memo[v] = p;
    return p;
  }

  /// The argument of the tanh the region takes, when it takes one.
  std::optional<Poly> tanhArgument;

private:
  const Roles &roles;
  const GemmEpilogue &sum;
  llvm::DenseMap<Value, std::optional<Poly>> memo;

  /// Whether `v` is the sum itself (computed once or several times).
  bool isSum(Value v) const {
    SmallVector<Value> terms;
    sumTerms(v, terms);
    GemmEpilogue as;
    return roles.classify(terms, as) && as.bias == sum.bias &&
           as.addend == sum.addend;
  }

  std::optional<Poly> compute(Value v) {
    if (isSum(v))
      return Poly{{{1, 0}, 1.0}};
    Operation *op = v.getDefiningOp();
    if (!op)
      return std::nullopt; // another input of the block
    if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
      auto value = dyn_cast<FloatAttr>(constant.getValue());
      if (!value)
        return std::nullopt;
      return Poly{{{0, 0}, value.getValueAsDouble()}};
    }
    auto operand = [&](unsigned i) { return eval(op->getOperand(i)); };
    if (isa<arith::AddFOp, arith::SubFOp, arith::MulFOp>(op)) {
      std::optional<Poly> x = operand(0), y = operand(1);
      if (!x || !y)
        return std::nullopt;
      if (isa<arith::MulFOp>(op))
        return multiply(*x, *y);
      return add(*x, *y, isa<arith::AddFOp>(op) ? 1.0 : -1.0);
    }
    if (isa<arith::NegFOp>(op)) {
      std::optional<Poly> x = operand(0);
      if (!x)
        return std::nullopt;
      return add(Poly{}, *x, -1.0);
    }
    if (isa<arith::DivFOp>(op)) {
      // By a constant only.
      std::optional<Poly> x = operand(0), y = operand(1);
      if (!x || !y || y->size() != 1 || !y->count({0, 0}) ||
          y->at({0, 0}) == 0.0)
        return std::nullopt;
      return multiply(*x, Poly{{{0, 0}, 1.0 / y->at({0, 0})}});
    }
    if (isa<math::PowFOp, math::FPowIOp>(op)) {
      // A small whole power: x^3 written as pow(x, 3).
      std::optional<Poly> x = operand(0);
      APFloat exponent(0.0);
      APInt whole;
      int64_t n = -1;
      if (matchPattern(op->getOperand(1), m_ConstantFloat(&exponent))) {
        double e = exponent.convertToDouble();
        if (e == std::floor(e) && e >= 0 && e <= kMaxDegree)
          n = static_cast<int64_t>(e);
      } else if (matchPattern(op->getOperand(1), m_ConstantInt(&whole)) &&
                 whole.getSExtValue() >= 0 &&
                 whole.getSExtValue() <= kMaxDegree) {
        n = whole.getSExtValue();
      }
      if (!x || n < 0)
        return std::nullopt;
      Poly r{{{0, 0}, 1.0}};
      for (int64_t i = 0; i < n; ++i) {
        std::optional<Poly> next = multiply(r, *x);
        if (!next)
          return std::nullopt;
        r = *next;
      }
      return r;
    }
    if (isa<math::TanhOp>(op)) {
      // One tanh, of a polynomial in t alone.
      std::optional<Poly> x = operand(0);
      if (!x ||
          llvm::any_of(*x, [](auto &term) { return term.first.second != 0; }))
        return std::nullopt;
      if (tanhArgument && !same(*x, *tanhArgument))
        return std::nullopt;
      tanhArgument = *x;
      return Poly{{{0, 1}, 1.0}};
    }
    return std::nullopt;
  }
};

/// Whether `v` is the float constant 0.
bool isZero(Value v) {
  APFloat value(0.0);
  return matchPattern(stripFloatCasts(v), m_ConstantFloat(&value)) &&
         value.isZero();
}

} // namespace

FailureOr<GemmEpilogue> mlir::ein::matchGemmEpilogue(JoinAggOp block,
                                                     unsigned product) {
  if (block.getAgg() != AggKind::None || !block.getDevice() ||
      product >= block.getInputs().size() ||
      block.getIndicesOfInput(product) != block.getOutputIndices())
    return failure();
  Roles roles{block, product};
  Block &body = block.getJoin().front();
  auto yield = cast<YieldOp>(body.getTerminator());
  if (yield.getValues().size() != 1)
    return failure();
  Value root = stripFloatCasts(yield.getValues().front());
  GemmEpilogue epilogue;
  // Every input of the block has a role: a block reading anything else is
  // no epilogue.
  auto covers = [&](const GemmEpilogue &e) {
    return 1 + (e.bias ? 1 : 0) + (e.addend ? 1 : 0) ==
           block.getInputs().size();
  };

  // No activation: the sum itself.
  SmallVector<Value> terms;
  sumTerms(root, terms);
  if (roles.classify(terms, epilogue)) {
    if (!covers(epilogue))
      return failure();
    return epilogue;
  }

  // ReLU: the larger of the sum and 0, a NaN kept (maximumf, as PyTorch's
  // relu). maxnumf(x, 0) turns a NaN into 0: not the epilogue's function,
  // so it stays a kernel.
  Operation *top = root.getDefiningOp();
  if (top && isa<arith::MaximumFOp>(top)) {
    for (unsigned side : {0u, 1u}) {
      if (!isZero(top->getOperand(1 - side)))
        continue;
      terms.clear();
      sumTerms(top->getOperand(side), terms);
      if (roles.classify(terms, epilogue) && covers(epilogue)) {
        epilogue.activation = GemmActivation::Relu;
        return epilogue;
      }
    }
    return failure();
  }

  // GELU (tanh): the largest sum of the right inputs in the region is t;
  // the region must be 0.5 t + 0.5 t tanh(k t + k 0.044715 t^3) in it.
  std::optional<GemmEpilogue> sum;
  size_t widest = 0;
  auto consider = [&](Value v) {
    SmallVector<Value> parts;
    sumTerms(v, parts);
    GemmEpilogue e;
    if (roles.classify(parts, e) && parts.size() > widest) {
      widest = parts.size();
      sum = e;
    }
  };
  for (BlockArgument arg : body.getArguments())
    consider(arg);
  for (Operation &op : body.without_terminator())
    if (isa<arith::AddFOp>(op))
      consider(op.getResult(0));
  if (!sum || !covers(*sum))
    return failure();
  Evaluator evaluator(roles, *sum);
  std::optional<Poly> value = evaluator.eval(root);
  if (!value || !evaluator.tanhArgument)
    return failure();
  const double k = std::sqrt(2.0 / 3.14159265358979323846);
  if (!same(*value, Poly{{{1, 0}, 0.5}, {{1, 1}, 0.5}}) ||
      !same(*evaluator.tanhArgument, Poly{{{1, 0}, k}, {{3, 0}, k * 0.044715}}))
    return failure();
  epilogue = *sum;
  epilogue.activation = GemmActivation::GeluTanh;
  return epilogue;
}
