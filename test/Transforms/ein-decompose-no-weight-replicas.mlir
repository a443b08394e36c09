// When a memory limit forbids replicating weights, an MLP pairs a
// column-split first layer with a row-split second layer (Megatron), with
// no repartition between them: x is replicated and y aggregated instead of
// moving the far larger weights.
// RUN: ein-opt %s -ein-decompose="weights-replicable=false remarks=true" -verify-diagnostics | FileCheck %s
// With replicable weights the same MLP is split by tokens and moves nothing.
// RUN: ein-opt %s -ein-decompose | FileCheck %s --check-prefix=TOKENS

// CHECK-LABEL: func.func @mlp
// CHECK: ein.join_agg add {{.*}}spec = #ein.spec<[1, 1, 8]>
// CHECK: ein.join_agg none {{.*}}spec = #ein.spec<[1, 8]>
// CHECK: ein.join_agg add {{.*}}spec = #ein.spec<[1, 8, 1]>
// TOKENS-COUNT-2: spec = #ein.spec<[8, 1, 1]>
module attributes {ein.target = #ein.target<devices = 8>} {
  // expected-remark @+2 {{simulated step}}
  // expected-remark @+1 {{plan total}}
  func.func @mlp(%x: tensor<512x1024xf32>, %w1: tensor<1024x4096xf32> {ein.weight}, %w2: tensor<4096x1024xf32> {ein.weight}) -> tensor<512x1024xf32> {
    // expected-remark @+1 {{spec #ein.spec<[1, 1, 8]>: join 14.0 MiB, aggregation 0.0 B, repartition 0.0 B}}
    %h = ein.join_agg add ins(%x[d0, d1], %w1[d1, d2] : tensor<512x1024xf32>, tensor<1024x4096xf32>) out[d0, d2] : tensor<512x4096xf32> {
    ^bb0(%a: f32, %b: f32):
      %m = arith.mulf %a, %b : f32
      ein.yield %m : f32
    }
    // expected-remark @+1 {{spec #ein.spec<[1, 8]>: join 0.0 B, aggregation 0.0 B, repartition 0.0 B}}
    %r = ein.join_agg none ins(%h[d0, d1] : tensor<512x4096xf32>) out[d0, d1] : tensor<512x4096xf32> {
    ^bb0(%a: f32):
      %zero = arith.constant 0.0 : f32
      %m = arith.maximumf %a, %zero : f32
      ein.yield %m : f32
    }
    // expected-remark @+1 {{spec #ein.spec<[1, 8, 1]>: join 0.0 B, aggregation 14.0 MiB, repartition 0.0 B}}
    %y = ein.join_agg add ins(%r[d0, d1], %w2[d1, d2] : tensor<512x4096xf32>, tensor<4096x1024xf32>) out[d0, d2] : tensor<512x1024xf32> {
    ^bb0(%a: f32, %b: f32):
      %m = arith.mulf %a, %b : f32
      ein.yield %m : f32
    }
    return %y : tensor<512x1024xf32>
  }
}
