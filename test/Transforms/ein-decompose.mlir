// RUN: ein-opt %s -split-input-file -ein-decompose=remarks=true -verify-diagnostics | FileCheck %s

// DESIGN §4: C = A B on 8 GPUs, activation inputs, n = 16384 in f32. The 3-D
// cut moves |A| + |B| + |C| = 3 GiB; (4, 2, 1) would move 4 GiB, (8, 1, 1) 7.
// CHECK-LABEL: func.func @matmul_3d
// CHECK: ein.join_agg add {{.*}} attributes {spec = #ein.spec<[2, 2, 2]>}
module attributes {ein.target = #ein.target<devices = 8>} {
  // expected-remark @+2 {{with naive exchanges: 24 tasks, 3.0 GiB moved; busiest link}}
  // expected-remark @+1 {{plan total}}
  func.func @matmul_3d(%a: tensor<16384x16384xf32>, %b: tensor<16384x16384xf32>) -> tensor<16384x16384xf32> {
    // expected-remark @+1 {{spec #ein.spec<[2, 2, 2]>: join 2.0 GiB, aggregation 1.0 GiB, repartition 0.0 B}}
    %c = ein.join_agg add ins(%a[d0, d1], %b[d1, d2] : tensor<16384x16384xf32>, tensor<16384x16384xf32>) out[d0, d2] : tensor<16384x16384xf32> {
    ^bb0(%x: f32, %y: f32):
      %m = arith.mulf %x, %y : f32
      ein.yield %m : f32
    }
    return %c : tensor<16384x16384xf32>
  }
}

// -----

// A batch of 16 on 8 GPUs with a replicable weight: split the batch; nothing
// moves.
// CHECK-LABEL: func.func @batch_split
// CHECK: ein.join_agg add {{.*}} attributes {spec = #ein.spec<[8, 1, 1, 1]>}
module attributes {ein.target = #ein.target<devices = 8>} {
  // expected-remark @+2 {{with naive exchanges: 8 tasks, 0.0 B moved}}
  // expected-remark @+1 {{plan total}}
  func.func @batch_split(%x: tensor<16x256x512xbf16>, %w: tensor<512x512xbf16> {ein.weight}) -> tensor<16x256x512xbf16> {
    // expected-remark @+1 {{spec #ein.spec<[8, 1, 1, 1]>: join 0.0 B, aggregation 0.0 B, repartition 0.0 B}}
    %y = ein.join_agg add ins(%x[d0, d1, d2], %w[d2, d3] : tensor<16x256x512xbf16>, tensor<512x512xbf16>) out[d0, d1, d3] : tensor<16x256x512xbf16> {
    ^bb0(%a: bf16, %b: bf16):
      %af = arith.extf %a : bf16 to f32
      %bf = arith.extf %b : bf16 to f32
      %m = arith.mulf %af, %bf : f32
      ein.yield %m : f32
    }
    return %y : tensor<16x256x512xbf16>
  }
}

// -----

// GQA head inheritance: 8 query heads share 2 KV heads; on 2 GPUs each takes
// one KV head with its 4 query heads and nothing moves.
// CHECK-LABEL: func.func @gqa_heads
// CHECK: ein.attention {{.*}}spec = #ein.spec<[1, 2, 1, 1, 1]>
module attributes {ein.target = #ein.target<devices = 2>} {
  // expected-remark @+2 {{simulated step}}
  // expected-remark @+1 {{plan total}}
  func.func @gqa_heads(%q: tensor<1x8x1024x128xbf16>, %k: tensor<1x2x1024x128xbf16>, %v: tensor<1x2x1024x128xbf16>) -> tensor<1x8x1024x128xbf16> {
    // expected-remark @+1 {{spec #ein.spec<[1, 2, 1, 1, 1]>: join 0.0 B, aggregation 0.0 B, repartition 0.0 B}}
    %o = ein.attention %q, %k, %v {causal, group = 4 : i64} : tensor<1x8x1024x128xbf16>, tensor<1x2x1024x128xbf16>, tensor<1x2x1024x128xbf16> -> tensor<1x8x1024x128xbf16>
    return %o : tensor<1x8x1024x128xbf16>
  }
}

// -----

// A chain ((A B) C) D keeps the 3-D cut throughout. Between two of them,
// half of the intermediate's blocks sit on another GPU under the canonical
// placement (each block at the lowest join block that makes or reads it):
// 2 MiB of the 4 MiB product moves (placement, ein-synthesize-exchanges,
// may remove it).
// CHECK-LABEL: func.func @chain
// CHECK-COUNT-3: spec = #ein.spec<[2, 2, 2]>
module attributes {ein.target = #ein.target<devices = 8>} {
  // expected-remark @+2 {{simulated step}}
  // expected-remark @+1 {{plan total}}
  func.func @chain(%a: tensor<1024x1024xf32>, %b: tensor<1024x1024xf32>, %c: tensor<1024x1024xf32>, %d: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
    // expected-remark @+1 {{spec #ein.spec<[2, 2, 2]>}}
    %ab = ein.join_agg add ins(%a[d0, d1], %b[d1, d2] : tensor<1024x1024xf32>, tensor<1024x1024xf32>) out[d0, d2] : tensor<1024x1024xf32> {
    ^bb0(%x: f32, %y: f32):
      %m = arith.mulf %x, %y : f32
      ein.yield %m : f32
    }
    // expected-remark @+1 {{spec #ein.spec<[2, 2, 2]>: join 8.0 MiB, aggregation 4.0 MiB, repartition 2.0 MiB}}
    %abc = ein.join_agg add ins(%ab[d0, d1], %c[d1, d2] : tensor<1024x1024xf32>, tensor<1024x1024xf32>) out[d0, d2] : tensor<1024x1024xf32> {
    ^bb0(%x: f32, %y: f32):
      %m = arith.mulf %x, %y : f32
      ein.yield %m : f32
    }
    // expected-remark @+1 {{spec #ein.spec<[2, 2, 2]>: join 8.0 MiB, aggregation 4.0 MiB, repartition 2.0 MiB}}
    %abcd = ein.join_agg add ins(%abc[d0, d1], %d[d1, d2] : tensor<1024x1024xf32>, tensor<1024x1024xf32>) out[d0, d2] : tensor<1024x1024xf32> {
    ^bb0(%x: f32, %y: f32):
      %m = arith.mulf %x, %y : f32
      ein.yield %m : f32
    }
    return %abcd : tensor<1024x1024xf32>
  }
}

// -----

// An op too small to cut 7 ways (4 x 4, 7 prime) gets the most blocks it
// can make, 6; the seventh GPU sits it out.
// CHECK-LABEL: func.func @too_small
// CHECK: ein.join_agg none {{.*}} attributes {spec = #ein.spec<[3, 2]>}
module attributes {ein.target = #ein.target<devices = 7>} {
  // expected-remark @+2 {{with naive exchanges: 6 tasks, 0.0 B moved}}
  // expected-remark @+1 {{plan total}}
  func.func @too_small(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
    // expected-remark @+1 {{spec #ein.spec<[3, 2]>}}
    %c = ein.join_agg none ins(%a[d0, d1] : tensor<4x4xf32>) out[d0, d1] : tensor<4x4xf32> {
    ^bb0(%x: f32):
      ein.yield %x : f32
    }
    return %c : tensor<4x4xf32>
  }
}
