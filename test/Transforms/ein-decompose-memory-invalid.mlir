// RUN: ein-opt %s -ein-decompose=memory-limit=1000 -verify-diagnostics
// RUN: not ein-opt %s -ein-decompose=memory-limit=-5 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// NEGATIVE: error: memory-limit must not be negative, got -5

// Two weights of 2 KiB each: no plan on 2 GPUs fits in 1000 bytes a GPU,
// even with the weights sharded.

module attributes {ein.target = #ein.target<devices = 2>} {
  // expected-error @+1 {{'func.func' op has no plan within the memory limit of 1000 bytes a GPU: the leanest plan tried (optimal, optimal with weight replicas charged, megatron) needs}}
  func.func @mlp(%x: tensor<4x8x16xf32>, %w1: tensor<16x32xf32> {ein.weight}, %w2: tensor<32x16xf32> {ein.weight}) -> tensor<4x8x16xf32> {
    %h = ein.join_agg add ins(%x[d0, d1, d2], %w1[d2, d3] : tensor<4x8x16xf32>, tensor<16x32xf32>) out[d0, d1, d3] : tensor<4x8x32xf32> {
    ^bb0(%a: f32, %b: f32):
      %p = arith.mulf %a, %b : f32
      ein.yield %p : f32
    }
    %r = ein.join_agg none ins(%h[d0, d1, d2] : tensor<4x8x32xf32>) out[d0, d1, d2] : tensor<4x8x32xf32> {
    ^bb0(%a: f32):
      %z = arith.constant 0.0 : f32
      %m = arith.maximumf %a, %z : f32
      ein.yield %m : f32
    }
    %y = ein.join_agg add ins(%r[d0, d1, d2], %w2[d2, d3] : tensor<4x8x32xf32>, tensor<32x16xf32>) out[d0, d1, d3] : tensor<4x8x16xf32> {
    ^bb0(%a: f32, %b: f32):
      %p = arith.mulf %a, %b : f32
      ein.yield %p : f32
    }
    return %y : tensor<4x8x16xf32>
  }
}
