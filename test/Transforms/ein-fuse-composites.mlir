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
