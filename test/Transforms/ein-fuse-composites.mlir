// RUN: ein-opt %s -split-input-file -ein-fuse-composites | FileCheck %s

// max, exp(x - m), sum, p / s along dim 1: one ein.softmax.
// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[Y:.*]] = ein.softmax %[[X]] dim 1 : tensor<4x8xf32>
// CHECK-NEXT: return %[[Y]]
func.func @softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %m = ein.join_agg max ins(%x[d0, d1] : tensor<4x8xf32>) out[d0] : tensor<4xf32> {
  ^bb0(%a: f32):
    ein.yield %a : f32
  }
  %p = ein.join_agg none ins(%x[d0, d1], %m[d0] : tensor<4x8xf32>, tensor<4xf32>) out[d0, d1] : tensor<4x8xf32> {
  ^bb0(%a: f32, %b: f32):
    %d = arith.subf %a, %b : f32
    %e = math.exp %d : f32
    ein.yield %e : f32
  }
  %s = ein.join_agg add ins(%p[d0, d1] : tensor<4x8xf32>) out[d0] : tensor<4xf32> {
  ^bb0(%a: f32):
    ein.yield %a : f32
  }
  %y = ein.join_agg none ins(%p[d0, d1], %s[d0] : tensor<4x8xf32>, tensor<4xf32>) out[d0, d1] : tensor<4x8xf32> {
  ^bb0(%a: f32, %b: f32):
    %q = arith.divf %a, %b : f32
    ein.yield %q : f32
  }
  return %y : tensor<4x8xf32>
}

// -----

// PyTorch's safe softmax (aten._safe_softmax, in attention's math form):
// (m == -inf ? 0 : p / s), the maximum read again from a max of its own,
// or from the same one. ein.softmax gives 0 on a row with nothing
// unmasked, so both are one ein.softmax.
// CHECK-LABEL: func.func @safe_softmax
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[Y:.*]] = ein.softmax %[[X]] dim 1 : tensor<4x8xf32>
// CHECK-NEXT: return %[[Y]]
func.func @safe_softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %m = ein.join_agg max ins(%x[d0, d1] : tensor<4x8xf32>) out[d0] : tensor<4xf32> {
  ^bb0(%a: f32):
    ein.yield %a : f32
  }
  %p = ein.join_agg none ins(%x[d0, d1], %m[d0] : tensor<4x8xf32>, tensor<4xf32>) out[d0, d1] : tensor<4x8xf32> {
  ^bb0(%a: f32, %b: f32):
    %d = arith.subf %a, %b : f32
    %e = math.exp %d : f32
    ein.yield %e : f32
  }
  %s = ein.join_agg add ins(%p[d0, d1] : tensor<4x8xf32>) out[d0] : tensor<4xf32> {
  ^bb0(%a: f32):
    ein.yield %a : f32
  }
  %m2 = ein.join_agg max ins(%x[d0, d1] : tensor<4x8xf32>) out[d0] : tensor<4xf32> {
  ^bb0(%a: f32):
    ein.yield %a : f32
  }
  %y = ein.join_agg none ins(%p[d0, d1], %s[d0], %m2[d0] : tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>) out[d0, d1] : tensor<4x8xf32> {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %q = arith.divf %a, %b : f32
    %ninf = arith.constant 0xFF800000 : f32
    %empty = arith.cmpf oeq, %c, %ninf : f32
    %zero = arith.constant 0.000000e+00 : f32
    %r = arith.select %empty, %zero, %q : f32
    ein.yield %r : f32
  }
  return %y : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @safe_softmax_one_max
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[Y:.*]] = ein.softmax %[[X]] dim 1 : tensor<4x8xf32>
// CHECK-NEXT: return %[[Y]]
func.func @safe_softmax_one_max(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %m = ein.join_agg max ins(%x[d0, d1] : tensor<4x8xf32>) out[d0] : tensor<4xf32> {
  ^bb0(%a: f32):
    ein.yield %a : f32
  }
  %p = ein.join_agg none ins(%x[d0, d1], %m[d0] : tensor<4x8xf32>, tensor<4xf32>) out[d0, d1] : tensor<4x8xf32> {
  ^bb0(%a: f32, %b: f32):
    %d = arith.subf %a, %b : f32
    %e = math.exp %d : f32
    ein.yield %e : f32
  }
  %s = ein.join_agg add ins(%p[d0, d1] : tensor<4x8xf32>) out[d0] : tensor<4xf32> {
  ^bb0(%a: f32):
    ein.yield %a : f32
  }
  %y = ein.join_agg none ins(%p[d0, d1], %s[d0], %m[d0] : tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>) out[d0, d1] : tensor<4x8xf32> {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %q = arith.divf %a, %b : f32
    %ninf = arith.constant 0xFF800000 : f32
    %empty = arith.cmpf oeq, %c, %ninf : f32
    %zero = arith.constant 0.000000e+00 : f32
    %r = arith.select %empty, %zero, %q : f32
    ein.yield %r : f32
  }
  return %y : tensor<4x8xf32>
}

// -----

// Near miss: a row set to 1, not 0, where its maximum is -inf (not
// ein.softmax's answer) stays as it is.
// CHECK-LABEL: func.func @safe_softmax_wrong_value
// CHECK-NOT: ein.softmax
// CHECK: arith.select
func.func @safe_softmax_wrong_value(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %m = ein.join_agg max ins(%x[d0, d1] : tensor<4x8xf32>) out[d0] : tensor<4xf32> {
  ^bb0(%a: f32):
    ein.yield %a : f32
  }
  %p = ein.join_agg none ins(%x[d0, d1], %m[d0] : tensor<4x8xf32>, tensor<4xf32>) out[d0, d1] : tensor<4x8xf32> {
  ^bb0(%a: f32, %b: f32):
    %d = arith.subf %a, %b : f32
    %e = math.exp %d : f32
    ein.yield %e : f32
  }
  %s = ein.join_agg add ins(%p[d0, d1] : tensor<4x8xf32>) out[d0] : tensor<4xf32> {
  ^bb0(%a: f32):
    ein.yield %a : f32
  }
  %y = ein.join_agg none ins(%p[d0, d1], %s[d0], %m[d0] : tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>) out[d0, d1] : tensor<4x8xf32> {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %q = arith.divf %a, %b : f32
    %ninf = arith.constant 0xFF800000 : f32
    %empty = arith.cmpf oeq, %c, %ninf : f32
    %one = arith.constant 1.000000e+00 : f32
    %r = arith.select %empty, %one, %q : f32
    ein.yield %r : f32
  }
  return %y : tensor<4x8xf32>
}

// -----

// Along dim 0 of a 3-D tensor too.
// CHECK-LABEL: func.func @softmax_dim0
// CHECK: ein.softmax %{{.*}} dim 0 : tensor<6x2x3xf32>
// CHECK-NOT: ein.join_agg
func.func @softmax_dim0(%x: tensor<6x2x3xf32>) -> tensor<6x2x3xf32> {
  %m = ein.join_agg max ins(%x[d0, d1, d2] : tensor<6x2x3xf32>) out[d1, d2] : tensor<2x3xf32> {
  ^bb0(%a: f32):
    ein.yield %a : f32
  }
  %p = ein.join_agg none ins(%x[d0, d1, d2], %m[d1, d2] : tensor<6x2x3xf32>, tensor<2x3xf32>) out[d0, d1, d2] : tensor<6x2x3xf32> {
  ^bb0(%a: f32, %b: f32):
    %d = arith.subf %a, %b : f32
    %e = math.exp %d : f32
    ein.yield %e : f32
  }
  %s = ein.join_agg add ins(%p[d0, d1, d2] : tensor<6x2x3xf32>) out[d1, d2] : tensor<2x3xf32> {
  ^bb0(%a: f32):
    ein.yield %a : f32
  }
  %y = ein.join_agg none ins(%p[d0, d1, d2], %s[d1, d2] : tensor<6x2x3xf32>, tensor<2x3xf32>) out[d0, d1, d2] : tensor<6x2x3xf32> {
  ^bb0(%a: f32, %b: f32):
    %q = arith.divf %a, %b : f32
    ein.yield %q : f32
  }
  return %y : tensor<6x2x3xf32>
}

// -----

// exp(x - m) is also returned: fusing would lose it, so nothing changes.
// CHECK-LABEL: func.func @exp_escapes
// CHECK-NOT: ein.softmax
// CHECK-COUNT-4: ein.join_agg
func.func @exp_escapes(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %m = ein.join_agg max ins(%x[d0, d1] : tensor<4x8xf32>) out[d0] : tensor<4xf32> {
  ^bb0(%a: f32):
    ein.yield %a : f32
  }
  %p = ein.join_agg none ins(%x[d0, d1], %m[d0] : tensor<4x8xf32>, tensor<4xf32>) out[d0, d1] : tensor<4x8xf32> {
  ^bb0(%a: f32, %b: f32):
    %d = arith.subf %a, %b : f32
    %e = math.exp %d : f32
    ein.yield %e : f32
  }
  %s = ein.join_agg add ins(%p[d0, d1] : tensor<4x8xf32>) out[d0] : tensor<4xf32> {
  ^bb0(%a: f32):
    ein.yield %a : f32
  }
  %y = ein.join_agg none ins(%p[d0, d1], %s[d0] : tensor<4x8xf32>, tensor<4xf32>) out[d0, d1] : tensor<4x8xf32> {
  ^bb0(%a: f32, %b: f32):
    %q = arith.divf %a, %b : f32
    ein.yield %q : f32
  }
  return %y, %p : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// exp(m - x) is not a softmax.
// CHECK-LABEL: func.func @reversed
// CHECK-NOT: ein.softmax
func.func @reversed(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %m = ein.join_agg max ins(%x[d0, d1] : tensor<4x8xf32>) out[d0] : tensor<4xf32> {
  ^bb0(%a: f32):
    ein.yield %a : f32
  }
  %p = ein.join_agg none ins(%x[d0, d1], %m[d0] : tensor<4x8xf32>, tensor<4xf32>) out[d0, d1] : tensor<4x8xf32> {
  ^bb0(%a: f32, %b: f32):
    %d = arith.subf %b, %a : f32
    %e = math.exp %d : f32
    ein.yield %e : f32
  }
  %s = ein.join_agg add ins(%p[d0, d1] : tensor<4x8xf32>) out[d0] : tensor<4xf32> {
  ^bb0(%a: f32):
    ein.yield %a : f32
  }
  %y = ein.join_agg none ins(%p[d0, d1], %s[d0] : tensor<4x8xf32>, tensor<4xf32>) out[d0, d1] : tensor<4x8xf32> {
  ^bb0(%a: f32, %b: f32):
    %q = arith.divf %a, %b : f32
    ein.yield %q : f32
  }
  return %y : tensor<4x8xf32>
}

// -----

// The max over one dimension and the sum over another: not a softmax.
// CHECK-LABEL: func.func @mismatched_dims
// CHECK-NOT: ein.softmax
func.func @mismatched_dims(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %m = ein.join_agg max ins(%x[d0, d1] : tensor<4x4xf32>) out[d0] : tensor<4xf32> {
  ^bb0(%a: f32):
    ein.yield %a : f32
  }
  %p = ein.join_agg none ins(%x[d0, d1], %m[d0] : tensor<4x4xf32>, tensor<4xf32>) out[d0, d1] : tensor<4x4xf32> {
  ^bb0(%a: f32, %b: f32):
    %d = arith.subf %a, %b : f32
    %e = math.exp %d : f32
    ein.yield %e : f32
  }
  %s = ein.join_agg add ins(%p[d0, d1] : tensor<4x4xf32>) out[d1] : tensor<4xf32> {
  ^bb0(%a: f32):
    ein.yield %a : f32
  }
  %y = ein.join_agg none ins(%p[d0, d1], %s[d1] : tensor<4x4xf32>, tensor<4xf32>) out[d0, d1] : tensor<4x4xf32> {
  ^bb0(%a: f32, %b: f32):
    %q = arith.divf %a, %b : f32
    ein.yield %q : f32
  }
  return %y : tensor<4x4xf32>
}

// -----

// Attention as ein-import leaves it: scores, a scale and a causal mask
// (masked where t > s), a softmax written out, the weighted values.
// CHECK-LABEL: func.func @attention_causal
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x16x8xf32>, %[[K:.*]]: tensor<2x4x16x8xf32>, %[[V:.*]]: tensor<2x4x16x8xf32>)
// CHECK-NEXT: %[[O:.*]] = ein.attention %[[Q]], %[[K]], %[[V]] {causal, scale = 0.35355338454246521 : f64} : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32> -> tensor<2x4x16x8xf32>
// CHECK-NEXT: return %[[O]]
func.func @attention_causal(%q: tensor<2x4x16x8xf32>, %k: tensor<2x4x16x8xf32>, %v: tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32> {
  %s = ein.join_agg add ins(%q[d0, d1, d2, d4], %k[d0, d1, d3, d4] : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) out[d0, d1, d2, d3] : tensor<2x4x16x16xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    ein.yield %m : f32
  }
  %masked = ein.join_agg none ins(%s[d0, d1, d2, d3] : tensor<2x4x16x16xf32>) out[d0, d1, d2, d3] : tensor<2x4x16x16xf32> {
  ^bb0(%x: f32):
    %i = ein.index 2 : index
    %j = ein.index 3 : index
    %c = arith.cmpi ugt, %j, %i : index
    %scale = arith.constant 0.353553385 : f32
    %sx = arith.mulf %x, %scale : f32
    %ninf = arith.constant 0xFF800000 : f32
    %r = arith.select %c, %ninf, %sx : f32
    ein.yield %r : f32
  }
  %mx = ein.join_agg max ins(%masked[d0, d1, d2, d3] : tensor<2x4x16x16xf32>) out[d0, d1, d2] : tensor<2x4x16xf32> {
  ^bb0(%a: f32):
    ein.yield %a : f32
  }
  %p = ein.join_agg none ins(%masked[d0, d1, d2, d3], %mx[d0, d1, d2] : tensor<2x4x16x16xf32>, tensor<2x4x16xf32>) out[d0, d1, d2, d3] : tensor<2x4x16x16xf32> {
  ^bb0(%a: f32, %b: f32):
    %d = arith.subf %a, %b : f32
    %e = math.exp %d : f32
    ein.yield %e : f32
  }
  %sum = ein.join_agg add ins(%p[d0, d1, d2, d3] : tensor<2x4x16x16xf32>) out[d0, d1, d2] : tensor<2x4x16xf32> {
  ^bb0(%a: f32):
    ein.yield %a : f32
  }
  %y = ein.join_agg none ins(%p[d0, d1, d2, d3], %sum[d0, d1, d2] : tensor<2x4x16x16xf32>, tensor<2x4x16xf32>) out[d0, d1, d2, d3] : tensor<2x4x16x16xf32> {
  ^bb0(%a: f32, %b: f32):
    %r = arith.divf %a, %b : f32
    ein.yield %r : f32
  }
  %o = ein.join_agg add ins(%y[d0, d1, d2, d4], %v[d0, d1, d4, d3] : tensor<2x4x16x16xf32>, tensor<2x4x16x8xf32>) out[d0, d1, d2, d3] : tensor<2x4x16x8xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    ein.yield %m : f32
  }
  return %o : tensor<2x4x16x8xf32>
}

// -----

// A finite mask fuses where the result is the same: f16's finfo.min
// (-65504), applied before the scale (so the masked scores are -23159),
// which exp sends to exactly 0.
// CHECK-LABEL: func.func @attention_finite_mask
// CHECK-NEXT: ein.attention %{{.*}}, %{{.*}}, %{{.*}} {causal, scale = 0.35355338454246521 : f64}
// CHECK-NEXT: return
func.func @attention_finite_mask(%q: tensor<2x4x16x8xf32>, %k: tensor<2x4x16x8xf32>, %v: tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32> {
  %s = ein.join_agg add ins(%q[d0, d1, d2, d4], %k[d0, d1, d3, d4] : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) out[d0, d1, d2, d3] : tensor<2x4x16x16xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    ein.yield %m : f32
  }
  %masked = ein.join_agg none ins(%s[d0, d1, d2, d3] : tensor<2x4x16x16xf32>) out[d0, d1, d2, d3] : tensor<2x4x16x16xf32> {
  ^bb0(%x: f32):
    %i = ein.index 2 : index
    %j = ein.index 3 : index
    %c = arith.cmpi ugt, %j, %i : index
    %fmin = arith.constant -65504.0 : f32
    %r = arith.select %c, %fmin, %x : f32
    %scale = arith.constant 0.353553385 : f32
    %sx = arith.mulf %r, %scale : f32
    ein.yield %sx : f32
  }
  %mx = ein.join_agg max ins(%masked[d0, d1, d2, d3] : tensor<2x4x16x16xf32>) out[d0, d1, d2] : tensor<2x4x16xf32> {
  ^bb0(%a: f32):
    ein.yield %a : f32
  }
  %p = ein.join_agg none ins(%masked[d0, d1, d2, d3], %mx[d0, d1, d2] : tensor<2x4x16x16xf32>, tensor<2x4x16xf32>) out[d0, d1, d2, d3] : tensor<2x4x16x16xf32> {
  ^bb0(%a: f32, %b: f32):
    %d = arith.subf %a, %b : f32
    %e = math.exp %d : f32
    ein.yield %e : f32
  }
  %sum = ein.join_agg add ins(%p[d0, d1, d2, d3] : tensor<2x4x16x16xf32>) out[d0, d1, d2] : tensor<2x4x16xf32> {
  ^bb0(%a: f32):
    ein.yield %a : f32
  }
  %y = ein.join_agg none ins(%p[d0, d1, d2, d3], %sum[d0, d1, d2] : tensor<2x4x16x16xf32>, tensor<2x4x16xf32>) out[d0, d1, d2, d3] : tensor<2x4x16x16xf32> {
  ^bb0(%a: f32, %b: f32):
    %r = arith.divf %a, %b : f32
    ein.yield %r : f32
  }
  %o = ein.join_agg add ins(%y[d0, d1, d2, d4], %v[d0, d1, d4, d3] : tensor<2x4x16x16xf32>, tensor<2x4x16x8xf32>) out[d0, d1, d2, d3] : tensor<2x4x16x8xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    ein.yield %m : f32
  }
  return %o : tensor<2x4x16x8xf32>
}

// -----

// Grouped-query attention of rank 3 ([heads, tokens, dim]), 8 query heads
// over 2 KV heads: the floordiv reshapes ein-import puts around the scores
// and the weighted values give the group; the scale sits in the scores'
// body and the mask keeps s >= t (a finite mask value far below any
// score). A batch of one goes around ein.attention.
// CHECK-LABEL: func.func @attention_gqa
// CHECK-SAME: (%[[Q:.*]]: tensor<8x12x16xf32>, %[[K:.*]]: tensor<2x12x16xf32>, %[[V:.*]]: tensor<2x12x4xf32>)
// CHECK: %[[QB:.*]] = ein.reshape %[[Q]] {{\[\[}}0, 1], [2], [3]] : tensor<8x12x16xf32> -> tensor<1x8x12x16xf32>
// CHECK: %[[KB:.*]] = ein.reshape %[[K]] {{\[\[}}0, 1], [2], [3]] : tensor<2x12x16xf32> -> tensor<1x2x12x16xf32>
// CHECK: %[[VB:.*]] = ein.reshape %[[V]] {{\[\[}}0, 1], [2], [3]] : tensor<2x12x4xf32> -> tensor<1x2x12x4xf32>
// CHECK: %[[A:.*]] = ein.attention %[[QB]], %[[KB]], %[[VB]] {causal, group = 4 : i64, scale = 2.500000e-01 : f64}
// CHECK: %[[O:.*]] = ein.reshape %[[A]] {{\[\[}}0, 1], [2], [3]] : tensor<1x8x12x4xf32> -> tensor<8x12x4xf32>
// CHECK-NEXT: return %[[O]]
// CHECK-NOT: ein.join_agg
func.func @attention_gqa(%q: tensor<8x12x16xf32>, %k: tensor<2x12x16xf32>, %v: tensor<2x12x4xf32>) -> tensor<8x12x4xf32> {
  %qg = ein.reshape %q [[0, 1], [2], [3]] : tensor<8x12x16xf32> -> tensor<2x4x12x16xf32>
  %sg = ein.join_agg add ins(%qg[d0, d4, d1, d3], %k[d0, d2, d3] : tensor<2x4x12x16xf32>, tensor<2x12x16xf32>) out[d0, d4, d1, d2] : tensor<2x4x12x12xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    %c = arith.constant 2.500000e-01 : f32
    %ms = arith.mulf %m, %c : f32
    ein.yield %ms : f32
  }
  %s = ein.reshape %sg [[0, 1], [2], [3]] : tensor<2x4x12x12xf32> -> tensor<8x12x12xf32>
  %masked = ein.join_agg none ins(%s[d0, d1, d2] : tensor<8x12x12xf32>) out[d0, d1, d2] : tensor<8x12x12xf32> {
  ^bb0(%x: f32):
    %i = ein.index 1 : index
    %j = ein.index 2 : index
    %c = arith.cmpi sge, %i, %j : index
    %low = arith.constant -3.40282347E+38 : f32
    %r = arith.select %c, %x, %low : f32
    ein.yield %r : f32
  }
  %p = ein.softmax %masked dim 2 : tensor<8x12x12xf32>
  %pg = ein.reshape %p [[0, 1], [2], [3]] : tensor<8x12x12xf32> -> tensor<2x4x12x12xf32>
  %og = ein.join_agg add ins(%pg[d0, d4, d1, d3], %v[d0, d3, d2] : tensor<2x4x12x12xf32>, tensor<2x12x4xf32>) out[d0, d4, d1, d2] : tensor<2x4x12x4xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    ein.yield %m : f32
  }
  %o = ein.reshape %og [[0, 1], [2], [3]] : tensor<2x4x12x4xf32> -> tensor<8x12x4xf32>
  return %o : tensor<8x12x4xf32>
}

// -----

// Unscaled, unmasked, in bf16 (products widened to the f32 accumulator):
// scale 1.
// CHECK-LABEL: func.func @attention_bf16
// CHECK: ein.attention %{{.*}}, %{{.*}}, %{{.*}} {scale = 1.000000e+00 : f64} : tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16> -> tensor<1x2x8x4xbf16>
// CHECK-NOT: ein.join_agg
func.func @attention_bf16(%q: tensor<1x2x8x4xbf16>, %k: tensor<1x2x8x4xbf16>, %v: tensor<1x2x8x4xbf16>) -> tensor<1x2x8x4xbf16> {
  %s = ein.join_agg add ins(%q[d0, d1, d2, d4], %k[d0, d1, d3, d4] : tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>) out[d0, d1, d2, d3] : tensor<1x2x8x8xbf16> {
  ^bb0(%a: bf16, %b: bf16):
    %m = arith.mulf %a, %b : bf16
    %w = arith.extf %m : bf16 to f32
    ein.yield %w : f32
  }
  %p = ein.softmax %s dim 3 : tensor<1x2x8x8xbf16>
  %o = ein.join_agg add ins(%p[d0, d1, d2, d4], %v[d0, d1, d4, d3] : tensor<1x2x8x8xbf16>, tensor<1x2x8x4xbf16>) out[d0, d1, d2, d3] : tensor<1x2x8x4xbf16> {
  ^bb0(%a: bf16, %b: bf16):
    %m = arith.mulf %a, %b : bf16
    %w = arith.extf %m : bf16 to f32
    ein.yield %w : f32
  }
  return %o : tensor<1x2x8x4xbf16>
}

// -----

// The all-zero mask PyTorch's attention adds when given one (transformers'
// BERT without padding): x + 0 is x, and the attention fuses unmasked.
// CHECK-LABEL: func.func @attention_zero_mask
// CHECK: ein.attention %{{.*}}, %{{.*}}, %{{.*}} {scale = 5.000000e-01 : f64} : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>
// CHECK-NOT: ein.join_agg
func.func @attention_zero_mask(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x8x4xf32>, %v: tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32> {
  %s = ein.join_agg add ins(%q[d0, d1, d2, d4], %k[d0, d1, d3, d4] : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) out[d0, d1, d2, d3] : tensor<1x2x8x8xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    ein.yield %m : f32
  }
  %t = ein.join_agg none ins(%s[d0, d1, d2, d3] : tensor<1x2x8x8xf32>) out[d0, d1, d2, d3] : tensor<1x2x8x8xf32> {
  ^bb0(%a: f32):
    %half = arith.constant 5.000000e-01 : f32
    %h = arith.mulf %a, %half : f32
    %z = arith.constant 0.000000e+00 : bf16
    %zf = arith.extf %z : bf16 to f32
    %r = arith.addf %h, %zf : f32
    ein.yield %r : f32
  }
  %p = ein.softmax %t dim 3 : tensor<1x2x8x8xf32>
  %o = ein.join_agg add ins(%p[d0, d1, d2, d4], %v[d0, d1, d4, d3] : tensor<1x2x8x8xf32>, tensor<1x2x8x4xf32>) out[d0, d1, d2, d3] : tensor<1x2x8x4xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    ein.yield %m : f32
  }
  return %o : tensor<1x2x8x4xf32>
}

// -----

// A boolean mask true everywhere (transformers' SDPA mask of an encoder
// without padding, folded to a constant): the select keeps every score,
// and the attention fuses unmasked. A constant condition that picks the
// mask value hides every key and is left as it is.
// CHECK-LABEL: func.func @attention_true_mask
// CHECK: ein.attention %{{.*}}, %{{.*}}, %{{.*}} {scale = 1.250000e-01 : f64} : tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16> -> tensor<1x2x8x4xbf16>
// CHECK-NOT: ein.softmax
func.func @attention_true_mask(%q: tensor<1x2x8x4xbf16>, %k: tensor<1x2x8x4xbf16>, %v: tensor<1x2x8x4xbf16>) -> tensor<1x2x8x4xbf16> {
  %s = ein.join_agg add ins(%q[d0, d1, d2, d4], %k[d0, d1, d3, d4] : tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>) out[d0, d1, d2, d3] : tensor<1x2x8x8xbf16> {
  ^bb0(%a: bf16, %b: bf16):
    %m = arith.mulf %a, %b : bf16
    %w = arith.extf %m : bf16 to f32
    ein.yield %w : f32
  }
  %t = ein.join_agg none ins(%s[d0, d1, d2, d3] : tensor<1x2x8x8xbf16>) out[d0, d1, d2, d3] : tensor<1x2x8x8xbf16> {
  ^bb0(%a: bf16):
    %x = arith.extf %a : bf16 to f32
    %c = arith.constant 1.250000e-01 : f32
    %h = arith.mulf %x, %c : f32
    %ninf = arith.constant 0xFF800000 : f32
    %true = arith.constant true
    %r = arith.select %true, %h, %ninf : f32
    %rt = arith.truncf %r : f32 to bf16
    %re = arith.extf %rt : bf16 to f32
    ein.yield %re : f32
  }
  %p = ein.softmax %t dim 3 : tensor<1x2x8x8xbf16>
  %o = ein.join_agg add ins(%p[d0, d1, d2, d4], %v[d0, d1, d4, d3] : tensor<1x2x8x8xbf16>, tensor<1x2x8x4xbf16>) out[d0, d1, d2, d3] : tensor<1x2x8x4xbf16> {
  ^bb0(%a: bf16, %b: bf16):
    %m = arith.mulf %a, %b : bf16
    %w = arith.extf %m : bf16 to f32
    ein.yield %w : f32
  }
  return %o : tensor<1x2x8x4xbf16>
}

// CHECK-LABEL: func.func @attention_false_mask
// CHECK-NOT: ein.attention
// CHECK: ein.softmax
func.func @attention_false_mask(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x8x4xf32>, %v: tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32> {
  %s = ein.join_agg add ins(%q[d0, d1, d2, d4], %k[d0, d1, d3, d4] : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) out[d0, d1, d2, d3] : tensor<1x2x8x8xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    ein.yield %m : f32
  }
  %t = ein.join_agg none ins(%s[d0, d1, d2, d3] : tensor<1x2x8x8xf32>) out[d0, d1, d2, d3] : tensor<1x2x8x8xf32> {
  ^bb0(%a: f32):
    %ninf = arith.constant 0xFF800000 : f32
    %false = arith.constant false
    %r = arith.select %false, %a, %ninf : f32
    ein.yield %r : f32
  }
  %p = ein.softmax %t dim 3 : tensor<1x2x8x8xf32>
  %o = ein.join_agg add ins(%p[d0, d1, d2, d4], %v[d0, d1, d4, d3] : tensor<1x2x8x8xf32>, tensor<1x2x8x4xf32>) out[d0, d1, d2, d3] : tensor<1x2x8x4xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    ein.yield %m : f32
  }
  return %o : tensor<1x2x8x4xf32>
}

// -----

// Near misses, each left as it is: a mask hiding the diagonal too (t >= s
// masked), a mask value exp does not send to 0, the scores also returned,
// and weighted values times 2.
// CHECK-LABEL: func.func @strict_mask
// CHECK-NOT: ein.attention
// CHECK: ein.softmax
func.func @strict_mask(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x8x4xf32>, %v: tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32> {
  %s = ein.join_agg add ins(%q[d0, d1, d2, d4], %k[d0, d1, d3, d4] : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) out[d0, d1, d2, d3] : tensor<1x2x8x8xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    ein.yield %m : f32
  }
  %masked = ein.join_agg none ins(%s[d0, d1, d2, d3] : tensor<1x2x8x8xf32>) out[d0, d1, d2, d3] : tensor<1x2x8x8xf32> {
  ^bb0(%x: f32):
    %i = ein.index 2 : index
    %j = ein.index 3 : index
    %c = arith.cmpi uge, %j, %i : index
    %ninf = arith.constant 0xFF800000 : f32
    %r = arith.select %c, %ninf, %x : f32
    ein.yield %r : f32
  }
  %p = ein.softmax %masked dim 3 : tensor<1x2x8x8xf32>
  %o = ein.join_agg add ins(%p[d0, d1, d2, d4], %v[d0, d1, d4, d3] : tensor<1x2x8x8xf32>, tensor<1x2x8x4xf32>) out[d0, d1, d2, d3] : tensor<1x2x8x4xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    ein.yield %m : f32
  }
  return %o : tensor<1x2x8x4xf32>
}

// CHECK-LABEL: func.func @weak_mask
// CHECK-NOT: ein.attention
// CHECK: ein.softmax
func.func @weak_mask(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x8x4xf32>, %v: tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32> {
  %s = ein.join_agg add ins(%q[d0, d1, d2, d4], %k[d0, d1, d3, d4] : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) out[d0, d1, d2, d3] : tensor<1x2x8x8xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    ein.yield %m : f32
  }
  %masked = ein.join_agg none ins(%s[d0, d1, d2, d3] : tensor<1x2x8x8xf32>) out[d0, d1, d2, d3] : tensor<1x2x8x8xf32> {
  ^bb0(%x: f32):
    %i = ein.index 2 : index
    %j = ein.index 3 : index
    %c = arith.cmpi ugt, %j, %i : index
    %low = arith.constant -1.000000e+02 : f32
    %r = arith.select %c, %low, %x : f32
    ein.yield %r : f32
  }
  %p = ein.softmax %masked dim 3 : tensor<1x2x8x8xf32>
  %o = ein.join_agg add ins(%p[d0, d1, d2, d4], %v[d0, d1, d4, d3] : tensor<1x2x8x8xf32>, tensor<1x2x8x4xf32>) out[d0, d1, d2, d3] : tensor<1x2x8x4xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    ein.yield %m : f32
  }
  return %o : tensor<1x2x8x4xf32>
}

// CHECK-LABEL: func.func @scores_escape
// CHECK-NOT: ein.attention
// CHECK: ein.softmax
func.func @scores_escape(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x8x4xf32>, %v: tensor<1x2x8x4xf32>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8x8xf32>) {
  %s = ein.join_agg add ins(%q[d0, d1, d2, d4], %k[d0, d1, d3, d4] : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) out[d0, d1, d2, d3] : tensor<1x2x8x8xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    ein.yield %m : f32
  }
  %p = ein.softmax %s dim 3 : tensor<1x2x8x8xf32>
  %o = ein.join_agg add ins(%p[d0, d1, d2, d4], %v[d0, d1, d4, d3] : tensor<1x2x8x8xf32>, tensor<1x2x8x4xf32>) out[d0, d1, d2, d3] : tensor<1x2x8x4xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    ein.yield %m : f32
  }
  return %o, %s : tensor<1x2x8x4xf32>, tensor<1x2x8x8xf32>
}

// CHECK-LABEL: func.func @values_scaled
// CHECK-NOT: ein.attention
// CHECK: ein.softmax
func.func @values_scaled(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x8x4xf32>, %v: tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32> {
  %s = ein.join_agg add ins(%q[d0, d1, d2, d4], %k[d0, d1, d3, d4] : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) out[d0, d1, d2, d3] : tensor<1x2x8x8xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    ein.yield %m : f32
  }
  %p = ein.softmax %s dim 3 : tensor<1x2x8x8xf32>
  %o = ein.join_agg add ins(%p[d0, d1, d2, d4], %v[d0, d1, d4, d3] : tensor<1x2x8x8xf32>, tensor<1x2x8x4xf32>) out[d0, d1, d2, d3] : tensor<1x2x8x4xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    %two = arith.constant 2.0 : f32
    %m2 = arith.mulf %m, %two : f32
    ein.yield %m2 : f32
  }
  return %o : tensor<1x2x8x4xf32>
}

// -----

// RMSNorm as ein-import leaves it after elementwise fusion: the sum of
// squares, then x * rsqrt(ss / n + eps) * w in one join.
// CHECK-LABEL: func.func @rms_norm
// CHECK-SAME: (%[[X:.*]]: tensor<2x6x32xf32>, %[[W:.*]]: tensor<32xf32>)
// CHECK-NEXT: %[[Y:.*]] = ein.rms_norm %[[X]], %[[W]] eps 9.9999997473787516E-6 : tensor<2x6x32xf32>, tensor<32xf32>
// CHECK-NEXT: return %[[Y]]
func.func @rms_norm(%x: tensor<2x6x32xf32>, %w: tensor<32xf32>) -> tensor<2x6x32xf32> {
  %ss = ein.join_agg add ins(%x[d0, d1, d2] : tensor<2x6x32xf32>) out[d0, d1] : tensor<2x6xf32> {
  ^bb0(%a: f32):
    %sq = arith.mulf %a, %a : f32
    ein.yield %sq : f32
  }
  %y = ein.join_agg none ins(%x[d0, d1, d2], %ss[d0, d1], %w[d2] : tensor<2x6x32xf32>, tensor<2x6xf32>, tensor<32xf32>) out[d0, d1, d2] : tensor<2x6x32xf32> {
  ^bb0(%a: f32, %s: f32, %g: f32):
    %n = arith.constant 3.200000e+01 : f32
    %m = arith.divf %s, %n : f32
    %eps = arith.constant 9.99999974E-6 : f32
    %v = arith.addf %m, %eps : f32
    %r = math.rsqrt %v : f32
    %xr = arith.mulf %a, %r : f32
    %o = arith.mulf %xr, %g : f32
    ein.yield %o : f32
  }
  return %y : tensor<2x6x32xf32>
}

// -----

// The same written as w * x / sqrt(eps + ss * (1/n)), squares by powf, in
// bf16 with the sum in f32; eps is rounded to f32 as the body rounds it.
// CHECK-LABEL: func.func @rms_norm_sqrt
// CHECK: ein.rms_norm %{{.*}}, %{{.*}} eps 9.9999999747524271E-7 : tensor<4x64xbf16>, tensor<64xbf16>
// CHECK-NOT: ein.join_agg
func.func @rms_norm_sqrt(%x: tensor<4x64xbf16>, %w: tensor<64xbf16>) -> tensor<4x64xbf16> {
  %ss = ein.join_agg add ins(%x[d0, d1] : tensor<4x64xbf16>) out[d0] : tensor<4xf32> {
  ^bb0(%a: bf16):
    %af = arith.extf %a : bf16 to f32
    %two = arith.constant 2.0 : f32
    %sq = math.powf %af, %two : f32
    ein.yield %sq : f32
  }
  %y = ein.join_agg none ins(%w[d1], %x[d0, d1], %ss[d0] : tensor<64xbf16>, tensor<4x64xbf16>, tensor<4xf32>) out[d0, d1] : tensor<4x64xbf16> {
  ^bb0(%g: bf16, %a: bf16, %s: f32):
    %gf = arith.extf %g : bf16 to f32
    %af = arith.extf %a : bf16 to f32
    %inv = arith.constant 1.562500e-02 : f32
    %m = arith.mulf %s, %inv : f32
    %eps = arith.constant 1.0e-06 : f64
    %epsf = arith.truncf %eps : f64 to f32
    %v = arith.addf %epsf, %m : f32
    %r = math.sqrt %v : f32
    %wx = arith.mulf %gf, %af : f32
    %o = arith.divf %wx, %r : f32
    ein.yield %o : f32
  }
  return %y : tensor<4x64xbf16>
}

// -----

// Near misses: a mean over 16 of 32 elements, and a sum of x rather than
// of its squares.
// CHECK-LABEL: func.func @rms_wrong_mean
// CHECK-NOT: ein.rms_norm
func.func @rms_wrong_mean(%x: tensor<2x32xf32>, %w: tensor<32xf32>) -> tensor<2x32xf32> {
  %ss = ein.join_agg add ins(%x[d0, d1] : tensor<2x32xf32>) out[d0] : tensor<2xf32> {
  ^bb0(%a: f32):
    %sq = arith.mulf %a, %a : f32
    ein.yield %sq : f32
  }
  %y = ein.join_agg none ins(%x[d0, d1], %ss[d0], %w[d1] : tensor<2x32xf32>, tensor<2xf32>, tensor<32xf32>) out[d0, d1] : tensor<2x32xf32> {
  ^bb0(%a: f32, %s: f32, %g: f32):
    %n = arith.constant 1.600000e+01 : f32
    %m = arith.divf %s, %n : f32
    %eps = arith.constant 1.0e-5 : f32
    %v = arith.addf %m, %eps : f32
    %r = math.rsqrt %v : f32
    %xr = arith.mulf %a, %r : f32
    %o = arith.mulf %xr, %g : f32
    ein.yield %o : f32
  }
  return %y : tensor<2x32xf32>
}

// CHECK-LABEL: func.func @rms_sum_not_squared
// CHECK-NOT: ein.rms_norm
func.func @rms_sum_not_squared(%x: tensor<2x32xf32>, %w: tensor<32xf32>) -> tensor<2x32xf32> {
  %ss = ein.join_agg add ins(%x[d0, d1] : tensor<2x32xf32>) out[d0] : tensor<2xf32> {
  ^bb0(%a: f32):
    ein.yield %a : f32
  }
  %y = ein.join_agg none ins(%x[d0, d1], %ss[d0], %w[d1] : tensor<2x32xf32>, tensor<2xf32>, tensor<32xf32>) out[d0, d1] : tensor<2x32xf32> {
  ^bb0(%a: f32, %s: f32, %g: f32):
    %n = arith.constant 3.200000e+01 : f32
    %m = arith.divf %s, %n : f32
    %eps = arith.constant 1.0e-5 : f32
    %v = arith.addf %m, %eps : f32
    %r = math.rsqrt %v : f32
    %xr = arith.mulf %a, %r : f32
    %o = arith.mulf %xr, %g : f32
    ein.yield %o : f32
  }
  return %y : tensor<2x32xf32>
}

// -----

// RoPE's rotate-half: concat(-x[:, 8:], x[:, :8]) becomes x split as
// (2, 8) along its last dimension, rotated by a join over c' (summed) that
// reads its loops c (d1) and c' (d3), and reshaped back.
// CHECK-LABEL: func.func @rotate_half
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>)
// CHECK: %[[P:.*]] = ein.reshape %[[X]] {{\[\[}}0], [1, 2]] : tensor<8x16xf32> -> tensor<8x2x8xf32>
// CHECK: %[[R:.*]] = ein.join_agg add ins(%[[P]][d0, d3, d2] : tensor<8x2x8xf32>) out[d0, d1, d2] : tensor<8x2x8xf32>
// CHECK: %[[C:.*]] = ein.index 1 : index
// CHECK: %[[CP:.*]] = ein.index 3 : index
// CHECK: %[[SUM:.*]] = arith.addi %[[C]], %[[CP]] : index
// CHECK: %[[PAIR:.*]] = arith.cmpi eq, %[[SUM]], %{{.*}} : index
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[C]], %{{.*}} : index
// CHECK: %[[NEG:.*]] = arith.negf %[[V:.*]] : f32
// CHECK: %[[SIGNED:.*]] = arith.select %[[FIRST]], %[[NEG]], %[[V]] : f32
// CHECK: %[[OUT:.*]] = arith.select %[[PAIR]], %[[SIGNED]], %{{.*}} : f32
// CHECK: ein.yield %[[OUT]] : f32
// CHECK: %[[Y:.*]] = ein.reshape %[[R]] {{\[\[}}0], [1, 2]] : tensor<8x2x8xf32> -> tensor<8x16xf32>
// CHECK-NEXT: return %[[Y]]
// CHECK-NOT: ein.slice
// CHECK-NOT: ein.concat
func.func @rotate_half(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %lo = ein.slice %x [0, 0] [8, 8] : tensor<8x16xf32> -> tensor<8x8xf32>
  %hi = ein.slice %x [0, 8] [8, 8] : tensor<8x16xf32> -> tensor<8x8xf32>
  %neg = ein.join_agg none ins(%hi[d0, d1] : tensor<8x8xf32>) out[d0, d1] : tensor<8x8xf32> {
  ^bb0(%v: f32):
    %n = arith.negf %v : f32
    ein.yield %n : f32
  }
  %r = ein.concat dim 1 %neg, %lo : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

// -----

// The other rotation, concat(x[:, :8], -x[:, 8:]), and halves of two
// different tensors, are left as they are.
// CHECK-LABEL: func.func @rotate_other_way
// CHECK: ein.concat
// CHECK-NOT: ein.index
func.func @rotate_other_way(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %lo = ein.slice %x [0, 0] [8, 8] : tensor<8x16xf32> -> tensor<8x8xf32>
  %hi = ein.slice %x [0, 8] [8, 8] : tensor<8x16xf32> -> tensor<8x8xf32>
  %neg = ein.join_agg none ins(%hi[d0, d1] : tensor<8x8xf32>) out[d0, d1] : tensor<8x8xf32> {
  ^bb0(%v: f32):
    %n = arith.negf %v : f32
    ein.yield %n : f32
  }
  %r = ein.concat dim 1 %lo, %neg : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

// CHECK-LABEL: func.func @rotate_two_tensors
// CHECK: ein.concat
// CHECK-NOT: ein.index
func.func @rotate_two_tensors(%x: tensor<8x16xf32>, %y: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %lo = ein.slice %y [0, 0] [8, 8] : tensor<8x16xf32> -> tensor<8x8xf32>
  %hi = ein.slice %x [0, 8] [8, 8] : tensor<8x16xf32> -> tensor<8x8xf32>
  %neg = ein.join_agg none ins(%hi[d0, d1] : tensor<8x8xf32>) out[d0, d1] : tensor<8x8xf32> {
  ^bb0(%v: f32):
    %n = arith.negf %v : f32
    ein.yield %n : f32
  }
  %r = ein.concat dim 1 %neg, %lo : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

// -----

// The key transposed for a batched matmul ([h, d, t]), as linalg.transpose
// and linalg.batch_matmul leave it: the transpose is looked through and
// goes with the rest.
// CHECK-LABEL: func.func @attention_key_transposed
// CHECK-SAME: (%[[Q:.*]]: tensor<4x16x8xf32>, %[[K:.*]]: tensor<4x16x8xf32>, %[[V:.*]]: tensor<4x16x8xf32>)
// CHECK: %[[KB:.*]] = ein.reshape %[[K]] {{\[\[}}0, 1], [2], [3]] : tensor<4x16x8xf32> -> tensor<1x4x16x8xf32>
// CHECK: ein.attention %{{.*}}, %[[KB]], %{{.*}} {scale = 1.000000e+00 : f64}
// CHECK-NOT: ein.join_agg
func.func @attention_key_transposed(%q: tensor<4x16x8xf32>, %k: tensor<4x16x8xf32>, %v: tensor<4x16x8xf32>) -> tensor<4x16x8xf32> {
  %kt = ein.join_agg none ins(%k[d0, d2, d1] : tensor<4x16x8xf32>) out[d0, d1, d2] : tensor<4x8x16xf32> {
  ^bb0(%a: f32):
    ein.yield %a : f32
  }
  %s = ein.join_agg add ins(%q[d0, d1, d3], %kt[d0, d3, d2] : tensor<4x16x8xf32>, tensor<4x8x16xf32>) out[d0, d1, d2] : tensor<4x16x16xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    ein.yield %m : f32
  }
  %p = ein.softmax %s dim 2 : tensor<4x16x16xf32>
  %o = ein.join_agg add ins(%p[d0, d1, d3], %v[d0, d3, d2] : tensor<4x16x16xf32>, tensor<4x16x8xf32>) out[d0, d1, d2] : tensor<4x16x8xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    ein.yield %m : f32
  }
  return %o : tensor<4x16x8xf32>
}

// -----

// LayerNorm as the front end writes aten.native_layer_norm (no affine, in
// bf16 with the statistics in f32): the sum, the mean as its own op, the
// squared deviations, then (x - m) * rsqrt(v / n + eps), rounded.
// CHECK-LABEL: func.func @layer_norm
// CHECK-SAME: (%[[X:.*]]: tensor<4x8x64xbf16>)
// CHECK-NEXT: %[[Y:.*]] = ein.layer_norm %[[X]] eps 9.9999997473787516E-6 : tensor<4x8x64xbf16>
// CHECK-NEXT: return %[[Y]]
func.func @layer_norm(%x: tensor<4x8x64xbf16>) -> tensor<4x8x64xbf16> {
  %s = ein.join_agg add ins(%x[d0, d1, d2] : tensor<4x8x64xbf16>) out[d0, d1] : tensor<4x8xf32> {
  ^bb0(%a: bf16):
    %w = arith.extf %a : bf16 to f32
    ein.yield %w : f32
  }
  %m = ein.join_agg none ins(%s[d0, d1] : tensor<4x8xf32>) out[d0, d1] : tensor<4x8xf32> {
  ^bb0(%a: f32):
    %n = arith.constant 6.400000e+01 : f32
    %r = arith.divf %a, %n : f32
    ein.yield %r : f32
  }
  %v = ein.join_agg add ins(%x[d0, d1, d2], %m[d0, d1] : tensor<4x8x64xbf16>, tensor<4x8xf32>) out[d0, d1] : tensor<4x8xf32> {
  ^bb0(%a: bf16, %b: f32):
    %w = arith.extf %a : bf16 to f32
    %d = arith.subf %w, %b : f32
    %q = arith.mulf %d, %d : f32
    ein.yield %q : f32
  }
  %y = ein.join_agg none ins(%x[d0, d1, d2], %m[d0, d1], %v[d0, d1] : tensor<4x8x64xbf16>, tensor<4x8xf32>, tensor<4x8xf32>) out[d0, d1, d2] : tensor<4x8x64xbf16> {
  ^bb0(%a: bf16, %b: f32, %c: f32):
    %n = arith.constant 6.400000e+01 : f32
    %var = arith.divf %c, %n : f32
    %eps = arith.constant 9.99999974E-6 : f32
    %t = arith.addf %var, %eps : f32
    %r = math.rsqrt %t : f32
    %w = arith.extf %a : bf16 to f32
    %d = arith.subf %w, %b : f32
    %o = arith.mulf %d, %r : f32
    %rb = arith.truncf %o : f32 to bf16
    %re = arith.extf %rb : bf16 to f32
    ein.yield %re : f32
  }
  return %y : tensor<4x8x64xbf16>
}

// -----

// A transposed LayerNorm's join (test/Pipelines/layer-norm-transposed.mlir)
// with the unbiased variance, which LayerNorm does not take: the join is
// left as it was, its loops named as before.
// CHECK-LABEL: func.func @layer_norm_transposed_unbiased
// CHECK-NOT: ein.layer_norm
// CHECK: ein.join_agg none ins(%{{.*}}[d1, d0, d2], %{{.*}}[d1, d0], %{{.*}}[d1, d0], %{{.*}}[d2], %{{.*}}[d2] : {{.*}}) out[d0, d1, d2] : tensor<6x2x64xbf16>
func.func @layer_norm_transposed_unbiased(%x: tensor<2x6x64xbf16>, %g: tensor<64xbf16>, %h: tensor<64xbf16>) -> tensor<6x2x64xbf16> {
  %s = ein.join_agg add ins(%x[d0, d1, d2] : tensor<2x6x64xbf16>) out[d0, d1] : tensor<2x6xf32> {
  ^bb0(%a: bf16):
    %w = arith.extf %a : bf16 to f32
    ein.yield %w : f32
  }
  %m = ein.join_agg none ins(%s[d0, d1] : tensor<2x6xf32>) out[d0, d1] : tensor<2x6xf32> {
  ^bb0(%a: f32):
    %n = arith.constant 6.400000e+01 : f32
    %r = arith.divf %a, %n : f32
    ein.yield %r : f32
  }
  %v = ein.join_agg add ins(%x[d0, d1, d2], %m[d0, d1] : tensor<2x6x64xbf16>, tensor<2x6xf32>) out[d0, d1] : tensor<2x6xf32> {
  ^bb0(%a: bf16, %b: f32):
    %w = arith.extf %a : bf16 to f32
    %d = arith.subf %w, %b : f32
    %q = arith.mulf %d, %d : f32
    ein.yield %q : f32
  }
  %y = ein.join_agg none ins(%x[d1, d0, d2], %m[d1, d0], %v[d1, d0], %g[d2], %h[d2] : tensor<2x6x64xbf16>, tensor<2x6xf32>, tensor<2x6xf32>, tensor<64xbf16>, tensor<64xbf16>) out[d0, d1, d2] : tensor<6x2x64xbf16> {
  ^bb0(%a: bf16, %b: f32, %c: f32, %gw: bf16, %hb: bf16):
    %n = arith.constant 6.300000e+01 : f32
    %var = arith.divf %c, %n : f32
    %eps = arith.constant 9.99999997E-7 : f32
    %t = arith.addf %var, %eps : f32
    %r = math.rsqrt %t : f32
    %w = arith.extf %a : bf16 to f32
    %ge = arith.extf %gw : bf16 to f32
    %he = arith.extf %hb : bf16 to f32
    %d = arith.subf %w, %b : f32
    %o = arith.mulf %d, %r : f32
    %o2 = arith.mulf %o, %ge : f32
    %o3 = arith.addf %o2, %he : f32
    %rb = arith.truncf %o3 : f32 to bf16
    %re = arith.extf %rb : bf16 to f32
    ein.yield %re : f32
  }
  return %y : tensor<6x2x64xbf16>
}

// -----

// torch-mlir's form after ein-import: x - mean a tensor of its own (read by
// the squares and the output), the mean inside its body, w * (d / sqrt)
// with the bias added first.
// CHECK-LABEL: func.func @layer_norm_deviation
// CHECK-SAME: (%[[X:.*]]: tensor<2x32xf32>, %[[W:.*]]: tensor<32xf32>, %[[B:.*]]: tensor<32xf32>)
// CHECK-NEXT: %[[Y:.*]] = ein.layer_norm %[[X]] weight %[[W]] bias %[[B]] eps 9.9999997473787516E-6 : tensor<2x32xf32>, tensor<32xf32>, tensor<32xf32>
// CHECK-NEXT: return %[[Y]]
func.func @layer_norm_deviation(%x: tensor<2x32xf32>, %w: tensor<32xf32>, %bias: tensor<32xf32>) -> tensor<2x32xf32> {
  %s = ein.join_agg add ins(%x[d0, d1] : tensor<2x32xf32>) out[d0] : tensor<2xf32> {
  ^bb0(%a: f32):
    ein.yield %a : f32
  }
  %d = ein.join_agg none ins(%x[d0, d1], %s[d0] : tensor<2x32xf32>, tensor<2xf32>) out[d0, d1] : tensor<2x32xf32> {
  ^bb0(%a: f32, %b: f32):
    %inv = arith.constant 3.125000e-02 : f32
    %m = arith.mulf %b, %inv : f32
    %r = arith.subf %a, %m : f32
    ein.yield %r : f32
  }
  %v = ein.join_agg add ins(%d[d0, d1] : tensor<2x32xf32>) out[d0] : tensor<2xf32> {
  ^bb0(%a: f32):
    %q = arith.mulf %a, %a : f32
    ein.yield %q : f32
  }
  %y = ein.join_agg none ins(%d[d0, d1], %v[d0], %w[d1], %bias[d1] : tensor<2x32xf32>, tensor<2xf32>, tensor<32xf32>, tensor<32xf32>) out[d0, d1] : tensor<2x32xf32> {
  ^bb0(%a: f32, %c: f32, %g: f32, %h: f32):
    %n = arith.constant 3.200000e+01 : f32
    %var = arith.divf %c, %n : f32
    %eps = arith.constant 1.000000e-05 : f32
    %t = arith.addf %eps, %var : f32
    %r = math.sqrt %t : f32
    %q = arith.divf %a, %r : f32
    %o = arith.mulf %g, %q : f32
    %z = arith.addf %h, %o : f32
    ein.yield %z : f32
  }
  return %y : tensor<2x32xf32>
}

// -----

// Near misses stay join-aggs: the unbiased variance (divided by n - 1),
// which LayerNorm does not take; and a mean the program also returns.
// CHECK-LABEL: func.func @layer_norm_unbiased
// CHECK-NOT: ein.layer_norm
// CHECK-LABEL: func.func @layer_norm_mean_used
// CHECK-NOT: ein.layer_norm
// CHECK: return
func.func @layer_norm_unbiased(%x: tensor<2x32xf32>) -> tensor<2x32xf32> {
  %s = ein.join_agg add ins(%x[d0, d1] : tensor<2x32xf32>) out[d0] : tensor<2xf32> {
  ^bb0(%a: f32):
    ein.yield %a : f32
  }
  %m = ein.join_agg none ins(%s[d0] : tensor<2xf32>) out[d0] : tensor<2xf32> {
  ^bb0(%a: f32):
    %n = arith.constant 3.200000e+01 : f32
    %r = arith.divf %a, %n : f32
    ein.yield %r : f32
  }
  %v = ein.join_agg add ins(%x[d0, d1], %m[d0] : tensor<2x32xf32>, tensor<2xf32>) out[d0] : tensor<2xf32> {
  ^bb0(%a: f32, %b: f32):
    %d = arith.subf %a, %b : f32
    %q = arith.mulf %d, %d : f32
    ein.yield %q : f32
  }
  %y = ein.join_agg none ins(%x[d0, d1], %m[d0], %v[d0] : tensor<2x32xf32>, tensor<2xf32>, tensor<2xf32>) out[d0, d1] : tensor<2x32xf32> {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %n = arith.constant 3.100000e+01 : f32
    %var = arith.divf %c, %n : f32
    %eps = arith.constant 1.000000e-05 : f32
    %t = arith.addf %var, %eps : f32
    %r = math.rsqrt %t : f32
    %d = arith.subf %a, %b : f32
    %o = arith.mulf %d, %r : f32
    ein.yield %o : f32
  }
  return %y : tensor<2x32xf32>
}

func.func @layer_norm_mean_used(%x: tensor<2x32xf32>) -> (tensor<2x32xf32>, tensor<2xf32>) {
  %s = ein.join_agg add ins(%x[d0, d1] : tensor<2x32xf32>) out[d0] : tensor<2xf32> {
  ^bb0(%a: f32):
    ein.yield %a : f32
  }
  %m = ein.join_agg none ins(%s[d0] : tensor<2xf32>) out[d0] : tensor<2xf32> {
  ^bb0(%a: f32):
    %n = arith.constant 3.200000e+01 : f32
    %r = arith.divf %a, %n : f32
    ein.yield %r : f32
  }
  %v = ein.join_agg add ins(%x[d0, d1], %m[d0] : tensor<2x32xf32>, tensor<2xf32>) out[d0] : tensor<2xf32> {
  ^bb0(%a: f32, %b: f32):
    %d = arith.subf %a, %b : f32
    %q = arith.mulf %d, %d : f32
    ein.yield %q : f32
  }
  %y = ein.join_agg none ins(%x[d0, d1], %m[d0], %v[d0] : tensor<2x32xf32>, tensor<2xf32>, tensor<2xf32>) out[d0, d1] : tensor<2x32xf32> {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %n = arith.constant 3.200000e+01 : f32
    %var = arith.divf %c, %n : f32
    %eps = arith.constant 1.000000e-05 : f32
    %t = arith.addf %var, %eps : f32
    %r = math.rsqrt %t : f32
    %d = arith.subf %a, %b : f32
    %o = arith.mulf %d, %r : f32
    ein.yield %o : f32
  }
  return %y, %m : tensor<2x32xf32>, tensor<2xf32>
}

// -----

// A scalar join of three inputs (a loss's gradient has them) is no
// RMSNorm and is left as it is.
// CHECK-LABEL: func.func @scalar_three_inputs
// CHECK: ein.join_agg none ins(%{{.*}}[], %{{.*}}[], %{{.*}}[] : tensor<f32>, tensor<f32>, tensor<f32>) out[] : tensor<f32>
func.func @scalar_three_inputs(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<f32>) -> tensor<f32> {
  %r = ein.join_agg none ins(%a[], %b[], %c[] : tensor<f32>, tensor<f32>, tensor<f32>) out[] : tensor<f32> {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %m = arith.mulf %x, %y : f32
    %s = math.rsqrt %z : f32
    %p = arith.mulf %m, %s : f32
    ein.yield %p : f32
  }
  return %r : tensor<f32>
}
