// One LLaMA block: hidden 64, 4 heads, 2 KV heads, ffn 128,
// batch 1, seq 16, f32, RoPE as rotation. Written by
// examples/gen_llama_block.py.
func.func @llama_block(
    %x: tensor<1x16x64xf32>,
    %norm1: tensor<64xf32> {ein.weight},
    %wq: tensor<64x64xf32> {ein.weight},
    %wk: tensor<64x32xf32> {ein.weight},
    %wv: tensor<64x32xf32> {ein.weight},
    %wo: tensor<64x64xf32> {ein.weight},
    %norm2: tensor<64xf32> {ein.weight},
    %wg: tensor<64x128xf32> {ein.weight},
    %wu: tensor<64x128xf32> {ein.weight},
    %wd: tensor<128x64xf32> {ein.weight},
    %rope: tensor<2x2x16x8xf32> {ein.weight}) -> tensor<1x16x64xf32> {
  %h1 = ein.rms_norm %x, %norm1 eps 1.0e-05 : tensor<1x16x64xf32>, tensor<64xf32>
  %q2 = ein.join_agg add ins(%h1[d0, d1, d2], %wq[d2, d3] : tensor<1x16x64xf32>, tensor<64x64xf32>) out[d0, d1, d3] : tensor<1x16x64xf32> {
  ^bb0(%a0: f32, %a1: f32):
    %m = arith.mulf %a0, %a1 : f32
    ein.yield %m : f32
  }
  %k3 = ein.join_agg add ins(%h1[d0, d1, d2], %wk[d2, d3] : tensor<1x16x64xf32>, tensor<64x32xf32>) out[d0, d1, d3] : tensor<1x16x32xf32> {
  ^bb0(%a0: f32, %a1: f32):
    %m = arith.mulf %a0, %a1 : f32
    ein.yield %m : f32
  }
  %v4 = ein.join_agg add ins(%h1[d0, d1, d2], %wv[d2, d3] : tensor<1x16x64xf32>, tensor<64x32xf32>) out[d0, d1, d3] : tensor<1x16x32xf32> {
  ^bb0(%a0: f32, %a1: f32):
    %m = arith.mulf %a0, %a1 : f32
    ein.yield %m : f32
  }
  %q_split5 = ein.reshape %q2 [[0], [1], [2, 3]] : tensor<1x16x64xf32> -> tensor<1x16x4x16xf32>
  %q_t6 = ein.join_agg none ins(%q_split5[d0, d1, d2, d3] : tensor<1x16x4x16xf32>) out[d0, d2, d1, d3] : tensor<1x4x16x16xf32> {
  ^bb0(%a0: f32):
    ein.yield %a0 : f32
  }
  %q_pairs7 = ein.reshape %q_t6 [[0], [1], [2], [3, 4]] : tensor<1x4x16x16xf32> -> tensor<1x4x16x2x8xf32>
  %q_rot8 = ein.join_agg add ins(%rope[d3, d5, d2, d4], %q_pairs7[d0, d1, d2, d5, d4] : tensor<2x2x16x8xf32>, tensor<1x4x16x2x8xf32>) out[d0, d1, d2, d3, d4] : tensor<1x4x16x2x8xf32> {
  ^bb0(%a0: f32, %a1: f32):
    %m = arith.mulf %a0, %a1 : f32
    ein.yield %m : f32
  }
  %q_rope9 = ein.reshape %q_rot8 [[0], [1], [2], [3, 4]] : tensor<1x4x16x2x8xf32> -> tensor<1x4x16x16xf32>
  %k_split10 = ein.reshape %k3 [[0], [1], [2, 3]] : tensor<1x16x32xf32> -> tensor<1x16x2x16xf32>
  %k_t11 = ein.join_agg none ins(%k_split10[d0, d1, d2, d3] : tensor<1x16x2x16xf32>) out[d0, d2, d1, d3] : tensor<1x2x16x16xf32> {
  ^bb0(%a0: f32):
    ein.yield %a0 : f32
  }
  %k_pairs12 = ein.reshape %k_t11 [[0], [1], [2], [3, 4]] : tensor<1x2x16x16xf32> -> tensor<1x2x16x2x8xf32>
  %k_rot13 = ein.join_agg add ins(%rope[d3, d5, d2, d4], %k_pairs12[d0, d1, d2, d5, d4] : tensor<2x2x16x8xf32>, tensor<1x2x16x2x8xf32>) out[d0, d1, d2, d3, d4] : tensor<1x2x16x2x8xf32> {
  ^bb0(%a0: f32, %a1: f32):
    %m = arith.mulf %a0, %a1 : f32
    ein.yield %m : f32
  }
  %k_rope14 = ein.reshape %k_rot13 [[0], [1], [2], [3, 4]] : tensor<1x2x16x2x8xf32> -> tensor<1x2x16x16xf32>
  %v_split15 = ein.reshape %v4 [[0], [1], [2, 3]] : tensor<1x16x32xf32> -> tensor<1x16x2x16xf32>
  %v_t16 = ein.join_agg none ins(%v_split15[d0, d1, d2, d3] : tensor<1x16x2x16xf32>) out[d0, d2, d1, d3] : tensor<1x2x16x16xf32> {
  ^bb0(%a0: f32):
    ein.yield %a0 : f32
  }
  %att17 = ein.attention %q_rope9, %k_rope14, %v_t16 {causal, group = 2 : i64} : tensor<1x4x16x16xf32>, tensor<1x2x16x16xf32>, tensor<1x2x16x16xf32> -> tensor<1x4x16x16xf32>
  %att_t18 = ein.join_agg none ins(%att17[d0, d1, d2, d3] : tensor<1x4x16x16xf32>) out[d0, d2, d1, d3] : tensor<1x16x4x16xf32> {
  ^bb0(%a0: f32):
    ein.yield %a0 : f32
  }
  %att_merged19 = ein.reshape %att_t18 [[0], [1], [2, 3]] : tensor<1x16x4x16xf32> -> tensor<1x16x64xf32>
  %o20 = ein.join_agg add ins(%att_merged19[d0, d1, d2], %wo[d2, d3] : tensor<1x16x64xf32>, tensor<64x64xf32>) out[d0, d1, d3] : tensor<1x16x64xf32> {
  ^bb0(%a0: f32, %a1: f32):
    %m = arith.mulf %a0, %a1 : f32
    ein.yield %m : f32
  }
  %res1_21 = ein.join_agg none ins(%x[d0, d1, d2], %o20[d0, d1, d2] : tensor<1x16x64xf32>, tensor<1x16x64xf32>) out[d0, d1, d2] : tensor<1x16x64xf32> {
  ^bb0(%a0: f32, %a1: f32):
    %s = arith.addf %a0, %a1 : f32
    ein.yield %s : f32
  }
  %h22 = ein.rms_norm %res1_21, %norm2 eps 1.0e-05 : tensor<1x16x64xf32>, tensor<64xf32>
  %gate23 = ein.join_agg add ins(%h22[d0, d1, d2], %wg[d2, d3] : tensor<1x16x64xf32>, tensor<64x128xf32>) out[d0, d1, d3] : tensor<1x16x128xf32> {
  ^bb0(%a0: f32, %a1: f32):
    %m = arith.mulf %a0, %a1 : f32
    ein.yield %m : f32
  }
  %up24 = ein.join_agg add ins(%h22[d0, d1, d2], %wu[d2, d3] : tensor<1x16x64xf32>, tensor<64x128xf32>) out[d0, d1, d3] : tensor<1x16x128xf32> {
  ^bb0(%a0: f32, %a1: f32):
    %m = arith.mulf %a0, %a1 : f32
    ein.yield %m : f32
  }
  %swiglu25 = ein.join_agg none ins(%gate23[d0, d1, d2], %up24[d0, d1, d2] : tensor<1x16x128xf32>, tensor<1x16x128xf32>) out[d0, d1, d2] : tensor<1x16x128xf32> {
  ^bb0(%a0: f32, %a1: f32):
    %one = arith.constant 1.0 : f32
    %n = arith.negf %a0 : f32
    %e = math.exp %n : f32
    %den = arith.addf %one, %e : f32
    %silu = arith.divf %a0, %den : f32
    %r = arith.mulf %silu, %a1 : f32
    ein.yield %r : f32
  }
  %down26 = ein.join_agg add ins(%swiglu25[d0, d1, d2], %wd[d2, d3] : tensor<1x16x128xf32>, tensor<128x64xf32>) out[d0, d1, d3] : tensor<1x16x64xf32> {
  ^bb0(%a0: f32, %a1: f32):
    %m = arith.mulf %a0, %a1 : f32
    ein.yield %m : f32
  }
  %res2_27 = ein.join_agg none ins(%res1_21[d0, d1, d2], %down26[d0, d1, d2] : tensor<1x16x64xf32>, tensor<1x16x64xf32>) out[d0, d1, d2] : tensor<1x16x64xf32> {
  ^bb0(%a0: f32, %a1: f32):
    %s = arith.addf %a0, %a1 : f32
    ein.yield %s : f32
  }
  return %res2_27 : tensor<1x16x64xf32>
}
