// RUN: ein-opt %s -ein-decompose=strategy=optimal | FileCheck %s --check-prefix=OPTIMAL
// RUN: ein-opt %s -ein-decompose=strategy=dp | FileCheck %s --check-prefix=DP
// RUN: ein-opt %s -ein-decompose=strategy=megatron | FileCheck %s --check-prefix=MEGATRON
// RUN: ein-opt %s -ein-decompose="strategy=random seed=1" | FileCheck %s --check-prefix=SEED1
// RUN: ein-opt %s -ein-decompose="strategy=random seed=2" | FileCheck %s --check-prefix=SEED2
// RUN: ein-opt %s -ein-decompose="strategy=random seed=2" > %t.a
// RUN: ein-opt %s -ein-decompose="strategy=random seed=2" > %t.b
// RUN: diff %t.a %t.b

// A two-layer MLP on 2 GPUs, x [batch 4, tokens 8, 16] through weights
// 16x32 and 32x16. The search's best plan splits the batch; dp may only cut
// the batch (the same plan here); megatron cuts the first matmul by its
// output columns and the second by its contracted rows (column then row
// parallel: each GPU holds half of each weight, the second matmul's
// partials aggregate), the ReLU between them by features. A random plan is
// a legal spec per op drawn from the seed, the same for the same seed.

// OPTIMAL-COUNT-2: spec = #ein.spec<[2, 1, 1, 1]>
// DP: spec = #ein.spec<[2, 1, 1, 1]>
// DP: spec = #ein.spec<[2, 1, 1]>
// DP: spec = #ein.spec<[2, 1, 1, 1]>
// MEGATRON: spec = #ein.spec<[1, 1, 1, 2]>
// MEGATRON: spec = #ein.spec<[1, 1, 2]>
// MEGATRON: spec = #ein.spec<[1, 1, 2, 1]>
// SEED1: spec = #ein.spec<[2, 1, 1, 1]>
// SEED1: spec = #ein.spec<[2, 1, 1]>
// SEED1: spec = #ein.spec<[1, 2, 1, 1]>
// SEED2: spec = #ein.spec<[1, 1, 1, 2]>
// SEED2: spec = #ein.spec<[1, 1, 2]>
// SEED2: spec = #ein.spec<[1, 1, 1, 2]>

module attributes {ein.target = #ein.target<devices = 2>} {
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
