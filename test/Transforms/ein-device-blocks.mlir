// RUN: ein-opt %s -split-input-file --ein-device-blocks=device=2 | FileCheck %s --check-prefix=DEV2
// RUN: ein-opt %s -split-input-file --ein-device-blocks | FileCheck %s --check-prefix=SLOWEST

// GPU 2 of 4: the matmul's block sums rows 8..11 of the 16 it would sum (a
// partial result, which no block reads: the add gets a new argument); the add
// and exp are cut 2 x 2 alike, so exp reads the add's block.
// DEV2-LABEL: func.func @mlp
// DEV2-SAME: (%[[A:.*]]: tensor<8x4xf32>, %[[W:.*]]: tensor<4x32xf32>, %[[P:.*]]: tensor<4x16xf32>, %[[B:.*]]: tensor<4x16xf32>) -> (tensor<8x32xf32>, tensor<4x16xf32>)
// DEV2-SAME: ein.block_flops = 2.176000e+03 : f64
// DEV2-SAME: ein.block_seconds =
// DEV2: %[[C:.*]] = ein.join_agg add ins(%[[A]][d0, d1], %[[W]][d1, d2] : tensor<8x4xf32>, tensor<4x32xf32>) out[d0, d2] : tensor<8x32xf32>
// DEV2: %[[R:.*]] = ein.join_agg none ins(%[[P]][d0, d1], %[[B]][d0, d1] : tensor<4x16xf32>, tensor<4x16xf32>) out[d0, d1] : tensor<4x16xf32>
// DEV2: %[[E:.*]] = ein.join_agg none ins(%[[R]][d0, d1] : tensor<4x16xf32>) out[d0, d1] : tensor<4x16xf32>
// DEV2: return %[[C]], %[[E]]
// DEV2-NOT: ein.target
// DEV2-NOT: spec
module attributes {ein.target = #ein.target<devices = 4>} {
  func.func @mlp(%a: tensor<8x16xf32>, %w: tensor<16x32xf32> {ein.weight}, %b: tensor<8x32xf32>) -> tensor<8x32xf32> {
    %c = ein.join_agg add ins(%a[d0, d1], %w[d1, d2] : tensor<8x16xf32>, tensor<16x32xf32>) out[d0, d2] attributes {spec = #ein.spec<[1, 4, 1]>} : tensor<8x32xf32> {
    ^bb0(%x: f32, %y: f32):
      %m = arith.mulf %x, %y : f32
      ein.yield %m : f32
    }
    %r = ein.join_agg none ins(%c[d0, d1], %b[d0, d1] : tensor<8x32xf32>, tensor<8x32xf32>) out[d0, d1] attributes {spec = #ein.spec<[2, 2]>} : tensor<8x32xf32> {
    ^bb0(%x: f32, %y: f32):
      %s = arith.addf %x, %y : f32
      ein.yield %s : f32
    }
    %e = ein.join_agg none ins(%r[d0, d1] : tensor<8x32xf32>) out[d0, d1] attributes {spec = #ein.spec<[2, 2]>} : tensor<8x32xf32> {
    ^bb0(%x: f32):
      %t = math.exp %x : f32
      ein.yield %t : f32
    }
    return %e : tensor<8x32xf32>
  }
}

// -----

// Causal attention cut by query over 4 GPUs: GPU 2 holds queries 512..767
// (its mask placed by query_offset); the slowest block is the last, which
// sees the most keys. A bf16 matmul cut along its summed loop leaves f32
// partials (the accumulator).
// DEV2-LABEL: func.func @attention
// DEV2: ein.attention {{.*}}query_offset = 512 : i64{{.*}} : tensor<1x4x256x64xbf16>, tensor<1x2x1024x64xbf16>, tensor<1x2x1024x64xbf16> -> tensor<1x4x256x64xbf16>
// DEV2: ein.join_agg add {{.*}} : tensor<64x64xbf16>, tensor<64x64xbf16>) out[d0, d2] : tensor<64x64xf32>
// SLOWEST-LABEL: func.func @attention
// SLOWEST: ein.attention {{.*}}query_offset = 768 : i64
module attributes {ein.target = #ein.target<devices = 4>} {
  func.func @attention(%q: tensor<1x4x1024x64xbf16>, %k: tensor<1x2x1024x64xbf16>, %v: tensor<1x2x1024x64xbf16>, %a: tensor<64x256xbf16>, %b: tensor<256x64xbf16>) -> (tensor<1x4x1024x64xbf16>, tensor<64x64xbf16>) {
    %o = ein.attention %q, %k, %v {causal, group = 2 : i64, spec = #ein.spec<[1, 1, 1, 4, 1]>} : tensor<1x4x1024x64xbf16>, tensor<1x2x1024x64xbf16>, tensor<1x2x1024x64xbf16> -> tensor<1x4x1024x64xbf16>
    %c = ein.join_agg add ins(%a[d0, d1], %b[d1, d2] : tensor<64x256xbf16>, tensor<256x64xbf16>) out[d0, d2] attributes {spec = #ein.spec<[1, 4, 1]>} : tensor<64x64xbf16> {
    ^bb0(%x: bf16, %y: bf16):
      %xe = arith.extf %x : bf16 to f32
      %ye = arith.extf %y : bf16 to f32
      %m = arith.mulf %xe, %ye : f32
      ein.yield %m : f32
    }
    return %o, %c : tensor<1x4x1024x64xbf16>, tensor<64x64xbf16>
  }
}

// -----

// An op too small for every GPU: 2 elements are cut in 2, and GPU 2 sits
// it out (nothing of it in its program).
// DEV2-LABEL: func.func @small
// DEV2-SAME: (%[[X:.*]]: tensor<4x16xf32>) -> tensor<4x16xf32>
// DEV2-NOT: tensor<1xf32>
// DEV2: return
module attributes {ein.target = #ein.target<devices = 4>} {
  func.func @small(%x: tensor<8x32xf32>, %s: tensor<2xf32>) -> (tensor<8x32xf32>, tensor<2xf32>) {
    %e = ein.join_agg none ins(%x[d0, d1] : tensor<8x32xf32>) out[d0, d1] attributes {spec = #ein.spec<[2, 2]>} : tensor<8x32xf32> {
    ^bb0(%a: f32):
      %t = math.exp %a : f32
      ein.yield %t : f32
    }
    %n = ein.join_agg none ins(%s[d0] : tensor<2xf32>) out[d0] attributes {spec = #ein.spec<[2]>} : tensor<2xf32> {
    ^bb0(%a: f32):
      %t = math.exp %a : f32
      ein.yield %t : f32
    }
    return %e, %n : tensor<8x32xf32>, tensor<2xf32>
  }
}
