//===- FuseComposites.cpp - Join-agg patterns to composites ---------------===//
//
// What ein-import makes of the usual linalg programs, recognised and
// replaced by the composites whose fused kernels and stage specs the
// planner and the code generators know. Each pattern must match exactly,
// with intermediate values used nowhere else; anything else is left as it
// is (it still compiles, as plain join-aggs).
//
// softmax:  m = max_k x; p = exp(x - m); s = sum_k p; y = p / s
//           -> ein.softmax x dim k
// attention (after softmax): scores = sum_d q k (times a scale), then an
//           elementwise scale and causal mask (select on t <= s, else
//           -inf), softmax over keys, sum_t p v; GQA through the reshapes
//           ein-import puts around a `h floordiv g` map
//           -> ein.attention q, k, v {causal, group, scale}
// rms_norm: ss = sum_i x * x; y = x * rsqrt(ss / n + eps) * w (one join,
//           as ein-import's elementwise fusion leaves it)
//           -> ein.rms_norm x, w eps
// layer_norm: s = sum_i x; m = s / n; v = sum_i (x - m)^2;
//           y = (x - m) * rsqrt(v / n + eps) [* w] [+ b] (the mean its own
//           op or in each body)
//           -> ein.layer_norm x [weight w] [bias b] eps
// rotate-half (RoPE): concat(-x[.., h:], x[.., :h]) along a dimension
//           -> a 2 x 2 rotation over that dimension split as (2, h): a
//           join the spec algebra can cut, where slices and a concat of
//           halves are not
//
// This file is the pass alone, trying the composites in that order; each
// family's matcher is a file of its own in lib/Transforms/FuseComposites/.
//
//===----------------------------------------------------------------------===//

#include "FuseComposites/FuseComposites.h"

#include "Einsummable/Dialect/Ein/IR/EinOps.h"
#include "Einsummable/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace mlir::ein {
#define GEN_PASS_DEF_EINFUSECOMPOSITES
#include "Einsummable/Transforms/Passes.h.inc"
} // namespace mlir::ein

using namespace mlir;
using namespace mlir::ein;
using namespace mlir::ein::fuse_composites_detail;

namespace {

struct EinFuseComposites
    : mlir::ein::impl::EinFuseCompositesBase<EinFuseComposites> {
  using Base::Base;

  void runOnOperation() override {
    Operation *root = getOperation();
    // Softmax first: attention is found around it.
    SmallVector<JoinAggOp> maxes;
    root->walk([&](JoinAggOp op) {
      if (op.getAgg() == AggKind::Max)
        maxes.push_back(op);
    });
    SmallPtrSet<Operation *, 4> erased;
    for (JoinAggOp max : maxes)
      if (!erased.contains(max))
        fuseSoftmax(max, erased);
    SmallVector<SoftmaxOp> softmaxes;
    root->walk([&](SoftmaxOp op) { softmaxes.push_back(op); });
    if (remarks != "missed" && remarks != "none") {
      root->emitError() << "remarks must be missed or none, got '" << remarks
                        << "'";
      return signalPassFailure();
    }
    // One remark per source line and reason: a model's 32 layers are one
    // line of its source, said once with how many attentions it stands for.
    struct Missed {
      SoftmaxOp first;
      std::string why;
      int count = 0;
    };
    SmallVector<Missed> misses;
    for (SoftmaxOp softmax : softmaxes) {
      std::string missed;
      if (fuseAttention(softmax, missed) || missed.empty() ||
          remarks != "missed")
        continue;
      auto same = llvm::find_if(misses, [&](Missed &m) {
        return m.first.getLoc() == softmax.getLoc() && m.why == missed;
      });
      if (same != misses.end())
        ++same->count;
      else
        misses.push_back({softmax, missed, 1});
    }
    for (Missed &m : misses) {
      InFlightDiagnostic remark = m.first.emitRemark();
      remark << "attention not fused (it runs as separate kernels, with its "
                "scores in memory): "
             << m.why;
      if (m.count > 1)
        remark << " (" << m.count << " attentions at this location)";
    }
    SmallVector<JoinAggOp> elementwiseOps;
    root->walk([&](JoinAggOp op) {
      if (op.getAgg() == AggKind::None)
        elementwiseOps.push_back(op);
    });
    for (JoinAggOp op : elementwiseOps)
      if (!fuseRmsNorm(op))
        fuseLayerNorm(op);
    SmallVector<ConcatOp> concats;
    root->walk([&](ConcatOp op) { concats.push_back(op); });
    for (ConcatOp cat : concats)
      rewriteRotateHalf(cat);
  }
};

} // namespace
