// RUN: ein-opt %s -split-input-file -ein-fuse-composites -verify-diagnostics | FileCheck %s
// RUN: ein-opt %s -split-input-file -ein-fuse-composites=remarks=none | FileCheck %s
// RUN: not ein-opt %s -ein-fuse-composites=remarks=all 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: remarks must be missed or none, got 'all'

// Attention that almost fuses says why not: here a mask of -100 (which
// exp does not send to 0) between the scores and the softmax. The program
// keeps its softmax and products, and compiles as such.
// CHECK-LABEL: func.func @mild_mask
// CHECK: ein.softmax
// CHECK-NOT: ein.attention
func.func @mild_mask(%q: tensor<4x8x16xf32>, %k: tensor<4x8x16xf32>, %v: tensor<4x8x16xf32>) -> tensor<4x8x16xf32> {
  %s = ein.join_agg add ins(%q[d0, d1, d3], %k[d0, d2, d3] : tensor<4x8x16xf32>, tensor<4x8x16xf32>) out[d0, d1, d2] : tensor<4x8x8xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    ein.yield %m : f32
  }
  %masked = ein.join_agg none ins(%s[d0, d1, d2] : tensor<4x8x8xf32>) out[d0, d1, d2] : tensor<4x8x8xf32> {
  ^bb0(%x: f32):
    %i = ein.index 1 : index
    %j = ein.index 2 : index
    %above = arith.cmpi sgt, %j, %i : index
    %mild = arith.constant -1.0e2 : f32
    %r = arith.select %above, %mild, %x : f32
    ein.yield %r : f32
  }
  // expected-remark @+1 {{attention not fused (it runs as separate kernels, with its scores in memory): the op between the scores and the softmax is not a scale and causal mask ein fuses (a mask must hide exactly the keys after the query, with -inf or a value at or below -1000 after the scale, which exp sends to 0; the scores may have no other user)}}
  %p = ein.softmax %masked dim 2 : tensor<4x8x8xf32>
  %o = ein.join_agg add ins(%p[d0, d1, d3], %v[d0, d3, d2] : tensor<4x8x8xf32>, tensor<4x8x16xf32>) out[d0, d1, d2] : tensor<4x8x16xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    ein.yield %m : f32
  }
  return %o : tensor<4x8x16xf32>
}

// -----

// A softmax that is not an attention's (a classifier's) says nothing.
// CHECK-LABEL: func.func @plain
// CHECK: ein.softmax
func.func @plain(%x: tensor<4x10xf32>) -> tensor<4x10xf32> {
  %p = ein.softmax %x dim 1 : tensor<4x10xf32>
  return %p : tensor<4x10xf32>
}

// -----

// A mask given as a tensor (GPT-2's `bias` buffer, read before the scores).
// CHECK-LABEL: func.func @tensor_mask
// CHECK-NOT: ein.attention
func.func @tensor_mask(%q: tensor<4x8x16xf32>, %k: tensor<4x8x16xf32>, %v: tensor<4x8x16xf32>, %mask: tensor<8x8xf32>) -> tensor<4x8x16xf32> {
  %s = ein.join_agg add ins(%q[d0, d1, d3], %k[d0, d2, d3] : tensor<4x8x16xf32>, tensor<4x8x16xf32>) out[d0, d1, d2] : tensor<4x8x8xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    ein.yield %m : f32
  }
  %masked = ein.join_agg none ins(%mask[d1, d2], %s[d0, d1, d2] : tensor<8x8xf32>, tensor<4x8x8xf32>) out[d0, d1, d2] : tensor<4x8x8xf32> {
  ^bb0(%w: f32, %x: f32):
    %r = arith.addf %x, %w : f32
    ein.yield %r : f32
  }
  // expected-remark @+1 {{attention not fused}}
  %p = ein.softmax %masked dim 2 : tensor<4x8x8xf32>
  %o = ein.join_agg add ins(%p[d0, d1, d3], %v[d0, d3, d2] : tensor<4x8x8xf32>, tensor<4x8x16xf32>) out[d0, d1, d2] : tensor<4x8x16xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    ein.yield %m : f32
  }
  return %o : tensor<4x8x16xf32>
}
