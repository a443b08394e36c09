// The same attention missed in every layer of a model (one line of its
// source) is remarked once, with how many attentions the line stands for;
// another reason or another line gets a remark of its own.
// RUN: ein-opt %s -ein-fuse-composites -o /dev/null 2>&1 | FileCheck %s
// CHECK: model.py:12:9: remark: attention not fused (it runs as separate kernels, with its scores in memory): the op between the scores and the softmax is not a scale and causal mask ein fuses {{.*}} (3 attentions at this location)
// CHECK-NOT: remark
func.func @layers(%q: tensor<4x8x16xf32>, %k: tensor<4x8x16xf32>, %v: tensor<4x8x16xf32>) -> tensor<4x8x16xf32> {
  %s1 = ein.join_agg add ins(%q[d0, d1, d3], %k[d0, d2, d3] : tensor<4x8x16xf32>, tensor<4x8x16xf32>) out[d0, d1, d2] : tensor<4x8x8xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    ein.yield %m : f32
  }
  %masked1 = ein.join_agg none ins(%s1[d0, d1, d2] : tensor<4x8x8xf32>) out[d0, d1, d2] : tensor<4x8x8xf32> {
  ^bb0(%x: f32):
    %i = ein.index 1 : index
    %j = ein.index 2 : index
    %above = arith.cmpi sgt, %j, %i : index
    %mild = arith.constant -1.0e2 : f32
    %r = arith.select %above, %mild, %x : f32
    ein.yield %r : f32
  }
  %p1 = ein.softmax %masked1 dim 2 : tensor<4x8x8xf32> loc("model.py":12:9)
  %x1 = ein.join_agg add ins(%p1[d0, d1, d3], %v[d0, d3, d2] : tensor<4x8x8xf32>, tensor<4x8x16xf32>) out[d0, d1, d2] : tensor<4x8x16xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    ein.yield %m : f32
  }
  %s2 = ein.join_agg add ins(%x1[d0, d1, d3], %k[d0, d2, d3] : tensor<4x8x16xf32>, tensor<4x8x16xf32>) out[d0, d1, d2] : tensor<4x8x8xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    ein.yield %m : f32
  }
  %masked2 = ein.join_agg none ins(%s2[d0, d1, d2] : tensor<4x8x8xf32>) out[d0, d1, d2] : tensor<4x8x8xf32> {
  ^bb0(%x: f32):
    %i = ein.index 1 : index
    %j = ein.index 2 : index
    %above = arith.cmpi sgt, %j, %i : index
    %mild = arith.constant -1.0e2 : f32
    %r = arith.select %above, %mild, %x : f32
    ein.yield %r : f32
  }
  %p2 = ein.softmax %masked2 dim 2 : tensor<4x8x8xf32> loc("model.py":12:9)
  %x2 = ein.join_agg add ins(%p2[d0, d1, d3], %v[d0, d3, d2] : tensor<4x8x8xf32>, tensor<4x8x16xf32>) out[d0, d1, d2] : tensor<4x8x16xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    ein.yield %m : f32
  }
  %s3 = ein.join_agg add ins(%x2[d0, d1, d3], %k[d0, d2, d3] : tensor<4x8x16xf32>, tensor<4x8x16xf32>) out[d0, d1, d2] : tensor<4x8x8xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    ein.yield %m : f32
  }
  %masked3 = ein.join_agg none ins(%s3[d0, d1, d2] : tensor<4x8x8xf32>) out[d0, d1, d2] : tensor<4x8x8xf32> {
  ^bb0(%x: f32):
    %i = ein.index 1 : index
    %j = ein.index 2 : index
    %above = arith.cmpi sgt, %j, %i : index
    %mild = arith.constant -1.0e2 : f32
    %r = arith.select %above, %mild, %x : f32
    ein.yield %r : f32
  }
  %p3 = ein.softmax %masked3 dim 2 : tensor<4x8x8xf32> loc("model.py":12:9)
  %x3 = ein.join_agg add ins(%p3[d0, d1, d3], %v[d0, d3, d2] : tensor<4x8x8xf32>, tensor<4x8x16xf32>) out[d0, d1, d2] : tensor<4x8x16xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    ein.yield %m : f32
  }
  return %x3 : tensor<4x8x16xf32>
}
