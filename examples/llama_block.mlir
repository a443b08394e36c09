// One LLaMA block: hidden 64, 4 heads, 2 KV heads, ffn 128,
// batch 1, seq 16, f32. Written by examples/gen_llama_block.py.
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
    %cos: tensor<16x8xf32> {ein.weight},
    %sin: tensor<16x8xf32> {ein.weight}) -> tensor<1x16x64xf32> {
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
  %q_lo7 = ein.slice %q_t6 [0, 0, 0, 0] [1, 4, 16, 8] : tensor<1x4x16x16xf32> -> tensor<1x4x16x8xf32>
  %q_hi8 = ein.slice %q_t6 [0, 0, 0, 8] [1, 4, 16, 8] : tensor<1x4x16x16xf32> -> tensor<1x4x16x8xf32>
  %q_r19 = ein.join_agg none ins(%q_lo7[d0, d1, d2, d3], %q_hi8[d0, d1, d2, d3], %cos[d2, d3], %sin[d2, d3] : tensor<1x4x16x8xf32>, tensor<1x4x16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>) out[d0, d1, d2, d3] : tensor<1x4x16x8xf32> {
  ^bb0(%a0: f32, %a1: f32, %a2: f32, %a3: f32):
    %p = arith.mulf %a0, %a2 : f32
    %q = arith.mulf %a1, %a3 : f32
    %r = arith.subf %p, %q : f32
    ein.yield %r : f32
  }
  %q_r210 = ein.join_agg none ins(%q_lo7[d0, d1, d2, d3], %q_hi8[d0, d1, d2, d3], %cos[d2, d3], %sin[d2, d3] : tensor<1x4x16x8xf32>, tensor<1x4x16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>) out[d0, d1, d2, d3] : tensor<1x4x16x8xf32> {
  ^bb0(%a0: f32, %a1: f32, %a2: f32, %a3: f32):
    %p = arith.mulf %a1, %a2 : f32
    %q = arith.mulf %a0, %a3 : f32
    %r = arith.addf %p, %q : f32
    ein.yield %r : f32
  }
  %q_rope11 = ein.concat dim 3 %q_r19, %q_r210 : tensor<1x4x16x8xf32>, tensor<1x4x16x8xf32> -> tensor<1x4x16x16xf32>
  %k_split12 = ein.reshape %k3 [[0], [1], [2, 3]] : tensor<1x16x32xf32> -> tensor<1x16x2x16xf32>
  %k_t13 = ein.join_agg none ins(%k_split12[d0, d1, d2, d3] : tensor<1x16x2x16xf32>) out[d0, d2, d1, d3] : tensor<1x2x16x16xf32> {
  ^bb0(%a0: f32):
    ein.yield %a0 : f32
  }
  %k_lo14 = ein.slice %k_t13 [0, 0, 0, 0] [1, 2, 16, 8] : tensor<1x2x16x16xf32> -> tensor<1x2x16x8xf32>
  %k_hi15 = ein.slice %k_t13 [0, 0, 0, 8] [1, 2, 16, 8] : tensor<1x2x16x16xf32> -> tensor<1x2x16x8xf32>
  %k_r116 = ein.join_agg none ins(%k_lo14[d0, d1, d2, d3], %k_hi15[d0, d1, d2, d3], %cos[d2, d3], %sin[d2, d3] : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>) out[d0, d1, d2, d3] : tensor<1x2x16x8xf32> {
  ^bb0(%a0: f32, %a1: f32, %a2: f32, %a3: f32):
    %p = arith.mulf %a0, %a2 : f32
    %q = arith.mulf %a1, %a3 : f32
    %r = arith.subf %p, %q : f32
    ein.yield %r : f32
  }
  %k_r217 = ein.join_agg none ins(%k_lo14[d0, d1, d2, d3], %k_hi15[d0, d1, d2, d3], %cos[d2, d3], %sin[d2, d3] : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>) out[d0, d1, d2, d3] : tensor<1x2x16x8xf32> {
  ^bb0(%a0: f32, %a1: f32, %a2: f32, %a3: f32):
    %p = arith.mulf %a1, %a2 : f32
    %q = arith.mulf %a0, %a3 : f32
    %r = arith.addf %p, %q : f32
    ein.yield %r : f32
  }
  %k_rope18 = ein.concat dim 3 %k_r116, %k_r217 : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x16xf32>
  %v_split19 = ein.reshape %v4 [[0], [1], [2, 3]] : tensor<1x16x32xf32> -> tensor<1x16x2x16xf32>
  %v_t20 = ein.join_agg none ins(%v_split19[d0, d1, d2, d3] : tensor<1x16x2x16xf32>) out[d0, d2, d1, d3] : tensor<1x2x16x16xf32> {
  ^bb0(%a0: f32):
    ein.yield %a0 : f32
  }
  %att21 = ein.attention %q_rope11, %k_rope18, %v_t20 {causal, group = 2 : i64} : tensor<1x4x16x16xf32>, tensor<1x2x16x16xf32>, tensor<1x2x16x16xf32> -> tensor<1x4x16x16xf32>
  %att_t22 = ein.join_agg none ins(%att21[d0, d1, d2, d3] : tensor<1x4x16x16xf32>) out[d0, d2, d1, d3] : tensor<1x16x4x16xf32> {
  ^bb0(%a0: f32):
    ein.yield %a0 : f32
  }
  %att_merged23 = ein.reshape %att_t22 [[0], [1], [2, 3]] : tensor<1x16x4x16xf32> -> tensor<1x16x64xf32>
  %o24 = ein.join_agg add ins(%att_merged23[d0, d1, d2], %wo[d2, d3] : tensor<1x16x64xf32>, tensor<64x64xf32>) out[d0, d1, d3] : tensor<1x16x64xf32> {
  ^bb0(%a0: f32, %a1: f32):
    %m = arith.mulf %a0, %a1 : f32
    ein.yield %m : f32
  }
  %res1_25 = ein.join_agg none ins(%x[d0, d1, d2], %o24[d0, d1, d2] : tensor<1x16x64xf32>, tensor<1x16x64xf32>) out[d0, d1, d2] : tensor<1x16x64xf32> {
  ^bb0(%a0: f32, %a1: f32):
    %s = arith.addf %a0, %a1 : f32
    ein.yield %s : f32
  }
  %h26 = ein.rms_norm %res1_25, %norm2 eps 1.0e-05 : tensor<1x16x64xf32>, tensor<64xf32>
  %gate27 = ein.join_agg add ins(%h26[d0, d1, d2], %wg[d2, d3] : tensor<1x16x64xf32>, tensor<64x128xf32>) out[d0, d1, d3] : tensor<1x16x128xf32> {
  ^bb0(%a0: f32, %a1: f32):
    %m = arith.mulf %a0, %a1 : f32
    ein.yield %m : f32
  }
  %up28 = ein.join_agg add ins(%h26[d0, d1, d2], %wu[d2, d3] : tensor<1x16x64xf32>, tensor<64x128xf32>) out[d0, d1, d3] : tensor<1x16x128xf32> {
  ^bb0(%a0: f32, %a1: f32):
    %m = arith.mulf %a0, %a1 : f32
    ein.yield %m : f32
  }
  %swiglu29 = ein.join_agg none ins(%gate27[d0, d1, d2], %up28[d0, d1, d2] : tensor<1x16x128xf32>, tensor<1x16x128xf32>) out[d0, d1, d2] : tensor<1x16x128xf32> {
  ^bb0(%a0: f32, %a1: f32):
    %one = arith.constant 1.0 : f32
    %n = arith.negf %a0 : f32
    %e = math.exp %n : f32
    %den = arith.addf %one, %e : f32
    %silu = arith.divf %a0, %den : f32
    %r = arith.mulf %silu, %a1 : f32
    ein.yield %r : f32
  }
  %down30 = ein.join_agg add ins(%swiglu29[d0, d1, d2], %wd[d2, d3] : tensor<1x16x128xf32>, tensor<128x64xf32>) out[d0, d1, d3] : tensor<1x16x64xf32> {
  ^bb0(%a0: f32, %a1: f32):
    %m = arith.mulf %a0, %a1 : f32
    ein.yield %m : f32
  }
  %res2_31 = ein.join_agg none ins(%res1_25[d0, d1, d2], %down30[d0, d1, d2] : tensor<1x16x64xf32>, tensor<1x16x64xf32>) out[d0, d1, d2] : tensor<1x16x64xf32> {
  ^bb0(%a0: f32, %a1: f32):
    %s = arith.addf %a0, %a1 : f32
    ein.yield %s : f32
  }
  return %res2_31 : tensor<1x16x64xf32>
}
