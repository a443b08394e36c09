//===- Optimizer.cpp - One optimizer step as join-aggs --------------------===//
//
// SGD (momentum, Nesterov, weight decay) and AdamW (f32 moments, bias
// correction from a step count, decoupled weight decay) as torch.optim
// computes them, with optional clipping of the gradients to a global
// 2-norm first (torch.nn.utils.clip_grad_norm_). Every update is an
// elementwise join-agg computed in f32; the learning rate and the step
// count are scalar arguments.
//
//===----------------------------------------------------------------------===//

#include "Autodiff.h"

#include "Einsummable/Dialect/Ein/IR/EinDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::ein;
using namespace mlir::ein::autodiff_detail;

FailureOr<OptimizerConfig> autodiff_detail::parseOptimizer(StringRef text,
                                                           std::string &error) {
  OptimizerConfig config;
  if (text.empty())
    return config;
  auto [name, rest] = text.split(':');
  SmallVector<StringRef> keys{"weight_decay", "max_grad_norm"};
  if (name == "sgd") {
    config.kind = OptimizerConfig::Kind::Sgd;
    keys.append({"momentum", "nesterov"});
  } else if (name == "adamw") {
    config.kind = OptimizerConfig::Kind::AdamW;
    config.weightDecay = 0.01; // torch.optim.AdamW's default
    keys.append({"beta1", "beta2", "eps"});
  } else {
    error = ("unknown optimizer '" + name + "' (sgd or adamw)").str();
    return failure();
  }
  SmallVector<StringRef> items;
  rest.split(items, ',', -1, /*KeepEmpty=*/false);
  for (StringRef item : items) {
    auto [key, value] = item.split('=');
    double x;
    if (!llvm::is_contained(keys, key) || value.getAsDouble(x)) {
      std::string known = llvm::join(keys, ", ");
      error = ("optimizer item '" + item +
               "' is not KEY=NUMBER with KEY one of " + known)
                  .str();
      return failure();
    }
    bool ok = true;
    if (key == "momentum")
      config.momentum = x, ok = x >= 0;
    else if (key == "nesterov")
      config.nesterov = x != 0, ok = x == 0 || x == 1;
    else if (key == "weight_decay")
      config.weightDecay = x, ok = x >= 0;
    else if (key == "max_grad_norm")
      config.maxGradNorm = x, ok = x >= 0;
    else if (key == "beta1")
      config.beta1 = x, ok = x >= 0 && x < 1;
    else if (key == "beta2")
      config.beta2 = x, ok = x >= 0 && x < 1;
    else if (key == "eps")
      config.eps = x, ok = x > 0;
    if (!ok) {
      error = ("optimizer item '" + item + "' is out of range").str();
      return failure();
    }
  }
  if (config.nesterov && config.momentum <= 0) {
    error = "sgd with nesterov=1 needs momentum > 0 (as torch.optim.SGD)";
    return failure();
  }
  return config;
}

namespace {

/// The name an argument's state takes: "<weight>.<what>", the weight by
/// its loc name or position.
std::string stateName(BlockArgument weight, StringRef what) {
  std::string base = "arg" + std::to_string(weight.getArgNumber());
  if (auto name = dyn_cast<NameLoc>(weight.getLoc()))
    base = name.getName().str();
  return base + "." + what.str();
}

} // namespace

SmallVector<std::pair<Value, unsigned>> autodiff_detail::appendOptimizerStep(
    func::FuncOp func, OpBuilder &b, ArrayRef<BlockArgument> weights,
    ArrayRef<Value> gradients, const OptimizerConfig &config) {
  MLIRContext *context = func.getContext();
  Location loc = func.getLoc();
  auto f32 = Float32Type::get(context);
  auto scalar = RankedTensorType::get({}, f32);
  auto addArgument = [&](Type type, StringRef name) {
    unsigned index = func.getNumArguments();
    (void)func.insertArgument(index, type, DictionaryAttr(),
                              NameLoc::get(StringAttr::get(context, name)));
    return func.getArgument(index);
  };
  Value lr = addArgument(scalar, "lr");
  bool adamw = config.kind == OptimizerConfig::Kind::AdamW;
  Value step = adamw ? addArgument(scalar, "step") : Value();
  auto constant = [&](OpBuilder &inner, double x) -> Value {
    return floatConstant(inner, loc, f32, x);
  };
  auto in = [&](OpBuilder &inner, Value v) {
    return castFloat(inner, loc, v, f32);
  };

  SmallVector<Value> grads(gradients);
  if (config.maxGradNorm > 0) {
    // coef = min(max_norm / (||g|| + 1e-6), 1) over every gradient.
    Value total;
    for (Value g : grads) {
      int64_t rank = tensorType(g).getRank();
      Value squares =
          createJoin(b, loc, scalar, {g}, {identity(rank)}, {}, AggKind::Add,
                     [&](OpBuilder &inner, ValueRange a, Type) -> Value {
                       Value x = in(inner, a[0]);
                       return arith::MulFOp::create(inner, loc, x, x);
                     });
      total = total
                  ? createJoin(
                        b, loc, scalar, {total, squares}, {{}, {}}, {},
                        AggKind::None,
                        [&](OpBuilder &inner, ValueRange a, Type) -> Value {
                          return arith::AddFOp::create(inner, loc, a[0], a[1]);
                        })
                  : squares;
    }
    Value coef = createJoin(
        b, loc, scalar, {total}, {{}}, {}, AggKind::None,
        [&](OpBuilder &inner, ValueRange a, Type) -> Value {
          Value norm = arith::AddFOp::create(
              inner, loc, math::SqrtOp::create(inner, loc, a[0]),
              constant(inner, 1e-6));
          Value c = arith::DivFOp::create(
              inner, loc, constant(inner, config.maxGradNorm), norm);
          return arith::MinimumFOp::create(inner, loc, c, constant(inner, 1));
        });
    for (Value &g : grads) {
      int64_t rank = tensorType(g).getRank();
      g = createJoin(b, loc, tensorType(g), {g, coef}, {identity(rank), {}},
                     identity(rank), AggKind::None,
                     [&](OpBuilder &inner, ValueRange a, Type) -> Value {
                       return arith::MulFOp::create(inner, loc, in(inner, a[0]),
                                                    a[1]);
                     });
    }
  }

  SmallVector<std::pair<Value, unsigned>> updated, state;
  for (auto [w, g] : llvm::zip(weights, grads)) {
    RankedTensorType type = tensorType(w);
    RankedTensorType stateType = type.clone(f32);
    SmallVector<int64_t> all = identity(type.getRank());
    // The decayed gradient of SGD: g + wd w.
    auto decayed = [&](OpBuilder &inner, Value gv, Value wv) -> Value {
      Value d = in(inner, gv);
      if (config.weightDecay == 0 || adamw)
        return d;
      return arith::AddFOp::create(
          inner, loc, d,
          arith::MulFOp::create(inner, loc, constant(inner, config.weightDecay),
                                in(inner, wv)));
    };
    if (!adamw) {
      Value buffer;
      if (config.momentum > 0) {
        BlockArgument old =
            addArgument(stateType, stateName(w, "momentum_buffer"));
        // buf = momentum buf + d (dampening 0; a zero buffer starts it as
        // PyTorch's first step does).
        buffer = createJoin(
            b, loc, stateType, {old, g, w}, {all, all, all}, all, AggKind::None,
            [&](OpBuilder &inner, ValueRange a, Type) -> Value {
              return arith::AddFOp::create(
                  inner, loc,
                  arith::MulFOp::create(inner, loc,
                                        constant(inner, config.momentum), a[0]),
                  decayed(inner, a[1], a[2]));
            });
        state.push_back({buffer, old.getArgNumber()});
      }
      SmallVector<Value> inputs{w, g, lr};
      SmallVector<SmallVector<int64_t>> indices{all, all, {}};
      if (buffer) {
        inputs.push_back(buffer);
        indices.push_back(all);
      }
      Value next = createJoin(
          b, loc, type, inputs, indices, all, AggKind::None,
          [&](OpBuilder &inner, ValueRange a, Type) -> Value {
            Value d = decayed(inner, a[1], a[0]);
            if (buffer)
              d = config.nesterov
                      ? Value(arith::AddFOp::create(
                            inner, loc, d,
                            arith::MulFOp::create(
                                inner, loc, constant(inner, config.momentum),
                                a[3])))
                      : a[3];
            return arith::SubFOp::create(
                inner, loc, in(inner, a[0]),
                arith::MulFOp::create(inner, loc, a[2], d));
          });
      updated.push_back({next, w.getArgNumber()});
      continue;
    }
    BlockArgument m = addArgument(stateType, stateName(w, "exp_avg"));
    BlockArgument v = addArgument(stateType, stateName(w, "exp_avg_sq"));
    double b1 = config.beta1, b2 = config.beta2;
    Value mNext = createJoin(
        b, loc, stateType, {m, g}, {all, all}, all, AggKind::None,
        [&](OpBuilder &inner, ValueRange a, Type) -> Value {
          return arith::AddFOp::create(
              inner, loc,
              arith::MulFOp::create(inner, loc, constant(inner, b1), a[0]),
              arith::MulFOp::create(inner, loc, constant(inner, 1 - b1),
                                    in(inner, a[1])));
        });
    Value vNext = createJoin(
        b, loc, stateType, {v, g}, {all, all}, all, AggKind::None,
        [&](OpBuilder &inner, ValueRange a, Type) -> Value {
          Value x = in(inner, a[1]);
          return arith::AddFOp::create(
              inner, loc,
              arith::MulFOp::create(inner, loc, constant(inner, b2), a[0]),
              arith::MulFOp::create(inner, loc, constant(inner, 1 - b2),
                                    arith::MulFOp::create(inner, loc, x, x)));
        });
    // w (1 - lr wd) - lr / (1 - b1^t) m / (sqrt(v) / sqrt(1 - b2^t) + eps)
    Value next = createJoin(
        b, loc, type, {w, mNext, vNext, lr, step}, {all, all, all, {}, {}}, all,
        AggKind::None, [&](OpBuilder &inner, ValueRange a, Type) -> Value {
          Value rate = a[3], t = a[4];
          auto oneMinusPow = [&](double beta) -> Value {
            return arith::SubFOp::create(
                inner, loc, constant(inner, 1),
                math::PowFOp::create(inner, loc, constant(inner, beta), t));
          };
          Value decayedWeight = arith::MulFOp::create(
              inner, loc, in(inner, a[0]),
              arith::SubFOp::create(
                  inner, loc, constant(inner, 1),
                  arith::MulFOp::create(inner, loc, rate,
                                        constant(inner, config.weightDecay))));
          Value stepSize =
              arith::DivFOp::create(inner, loc, rate, oneMinusPow(b1));
          Value denom = arith::AddFOp::create(
              inner, loc,
              arith::DivFOp::create(
                  inner, loc, math::SqrtOp::create(inner, loc, a[2]),
                  math::SqrtOp::create(inner, loc, oneMinusPow(b2))),
              constant(inner, config.eps));
          return arith::SubFOp::create(
              inner, loc, decayedWeight,
              arith::MulFOp::create(
                  inner, loc, stepSize,
                  arith::DivFOp::create(inner, loc, a[1], denom)));
        });
    updated.push_back({next, w.getArgNumber()});
    state.push_back({mNext, m.getArgNumber()});
    state.push_back({vNext, v.getArgNumber()});
  }
  updated.append(state.begin(), state.end());
  return updated;
}
