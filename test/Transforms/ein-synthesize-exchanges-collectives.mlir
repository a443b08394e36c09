// exchange=synthesized on 2 GPUs, weights split Megatron-style
// (strategy=megatron, weights-replicable=false): the movements a hand
// written tensor-parallel block would make, derived instead of called.
// - All-gather: the squared activations are held in row halves and read
//   whole by both GPUs' column blocks of the first product; each GPU
//   gathers the half it lacks (one transfer each way) instead of one GPU
//   assembling the whole and sending it on.
// - Reuse: the second product reads the same whole block on the same GPUs:
//   nothing moves again.
// - Reduce-scatter: the last product's partials (its inner dimension is
//   cut) are aggregated where the residual add reads them, a row half on
//   each GPU, each from its own partial's half and the other GPU's.
// The lowered program still computes the original's result.
// RUN: ein-opt %s -ein-plan="strategy=megatron weights-replicable=false" -ein-synthesize-exchanges="exchange=synthesized weights-replicable=false" -verify-each | FileCheck %s
// RUN: ein-opt %s --ein-export-program=%t.logical.json -o /dev/null
// RUN: ein-opt %s -ein-plan="strategy=megatron weights-replicable=false" -ein-synthesize-exchanges="exchange=synthesized weights-replicable=false" --ein-export-program=%t.device.json -o /dev/null
// RUN: ein-eval %t.logical.json --seed=3 | sed -e "s/'[^']*'//" > %t.want
// RUN: ein-eval %t.device.json --seed=3 | sed -e "s/'[^']*'//" > %t.got
// RUN: diff %t.want %t.got
// The naive form of the same plan assembles the whole block on GPU 0 and
// copies it to GPU 1, twice, and aggregates on GPU 0.
// RUN: ein-opt %s -ein-plan="strategy=megatron weights-replicable=false" -ein-synthesize-exchanges="weights-replicable=false" | FileCheck %s --check-prefix=NAIVE

// CHECK-LABEL: func.func @mlp_block
// The squares, a row half on each GPU.
// CHECK: %[[SQ0:.*]] = ein.join_agg none {{.*}} attributes {device = 0 : i64{{.*}}} : tensor<32x128xf32>
// CHECK: %[[SQ1:.*]] = ein.join_agg none {{.*}} attributes {device = 1 : i64{{.*}}} : tensor<32x128xf32>
// All-gather: one half each way, each GPU assembling the whole.
// CHECK: %[[FROM1:.*]], %{{.*}} = ein.transfer %[[SQ1]] [0, 0] [32, 128] from 1 to 0
// CHECK: %[[A:.*]] = tensor.insert_slice %[[SQ0]]
// CHECK: %[[WHOLE0:.*]] = tensor.insert_slice %[[FROM1]] into %[[A]]
// CHECK: %[[FROM0:.*]], %{{.*}} = ein.transfer %[[SQ0]] [0, 0] [32, 128] from 0 to 1
// CHECK: %[[B:.*]] = tensor.insert_slice %[[SQ1]]
// CHECK: %[[WHOLE1:.*]] = tensor.insert_slice %[[FROM0]] into %[[B]]
// CHECK-NOT: ein.transfer
// CHECK: ein.join_agg add ins(%[[WHOLE0]]{{.*}}device = 0
// CHECK: ein.join_agg add ins(%[[WHOLE1]]{{.*}}device = 1
// Reuse: nothing moves for the second product.
// CHECK-NOT: ein.transfer
// CHECK: ein.join_agg add ins(%[[WHOLE0]]{{.*}}device = 0
// CHECK: ein.join_agg add ins(%[[WHOLE1]]{{.*}}device = 1
// CHECK-NOT: ein.transfer
// CHECK: %[[P0:.*]] = ein.join_agg add {{.*}}device = 0 {{.*}} : tensor<64x128xf32>
// CHECK: %[[P1:.*]] = ein.join_agg add {{.*}}device = 1 {{.*}} : tensor<64x128xf32>
// Reduce-scatter: rows 0-31 aggregated on GPU 0, rows 32-63 on GPU 1.
// CHECK: %[[OWN0:.*]] = tensor.extract_slice %[[P0]][0, 0] [32, 128] [1, 1]
// CHECK: %[[PART1:.*]], %{{.*}} = ein.transfer %[[P1]] [0, 0] [32, 128] from 1 to 0
// CHECK: ein.aggregate add %[[OWN0]], %[[PART1]] on 0
// CHECK: %[[OWN1:.*]] = tensor.extract_slice %[[P1]][32, 0] [32, 128] [1, 1]
// CHECK: %[[PART0:.*]], %{{.*}} = ein.transfer %[[P0]] [32, 0] [32, 128] from 0 to 1
// CHECK: ein.aggregate add %[[OWN1]], %[[PART0]] on 1
// CHECK-NOT: ein.transfer
// CHECK: return

// NAIVE-LABEL: func.func @mlp_block
// NAIVE-COUNT-2: [0, 0] [64, 128] from 0 to 1 : tensor<64x128xf32> -> tensor<64x128xf32>
// NAIVE: ein.aggregate add {{.*}} on 0 : tensor<64x128xf32>, tensor<64x128xf32> -> tensor<64x128xf32>
// NAIVE: [32, 0] [32, 128] from 0 to 1
module attributes {ein.target = #ein.target<devices = 2, topology = "nvswitch">} {
  func.func @mlp_block(%x: tensor<64x128xf32>, %w1: tensor<128x256xf32> {ein.weight}, %w3: tensor<128x256xf32> {ein.weight}, %w2: tensor<256x128xf32> {ein.weight}) -> tensor<64x128xf32> {
    %n = ein.join_agg none ins(%x[d0, d1] : tensor<64x128xf32>) out[d0, d1] : tensor<64x128xf32> {
    ^bb0(%a: f32):
      %s = arith.mulf %a, %a : f32
      ein.yield %s : f32
    }
    %g = ein.join_agg add ins(%n[d0, d1], %w1[d1, d2] : tensor<64x128xf32>, tensor<128x256xf32>) out[d0, d2] : tensor<64x256xf32> {
    ^bb0(%a: f32, %b: f32):
      %m = arith.mulf %a, %b : f32
      ein.yield %m : f32
    }
    %u = ein.join_agg add ins(%n[d0, d1], %w3[d1, d2] : tensor<64x128xf32>, tensor<128x256xf32>) out[d0, d2] : tensor<64x256xf32> {
    ^bb0(%a: f32, %b: f32):
      %m = arith.mulf %a, %b : f32
      ein.yield %m : f32
    }
    %h = ein.join_agg none ins(%g[d0, d1], %u[d0, d1] : tensor<64x256xf32>, tensor<64x256xf32>) out[d0, d1] : tensor<64x256xf32> {
    ^bb0(%a: f32, %b: f32):
      %m = arith.mulf %a, %b : f32
      ein.yield %m : f32
    }
    %o = ein.join_agg add ins(%h[d0, d1], %w2[d1, d2] : tensor<64x256xf32>, tensor<256x128xf32>) out[d0, d2] : tensor<64x128xf32> {
    ^bb0(%a: f32, %b: f32):
      %m = arith.mulf %a, %b : f32
      ein.yield %m : f32
    }
    %y = ein.join_agg none ins(%x[d0, d1], %o[d0, d1] : tensor<64x128xf32>, tensor<64x128xf32>) out[d0, d1] : tensor<64x128xf32> {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      ein.yield %s : f32
    }
    return %y : tensor<64x128xf32>
  }
}
