// 392 rows on 3 GPUs: an uneven cut in granules of 8 (136, 128, 128).
func.func @scale(%x: tensor<392x24xf32>, %w: tensor<24x40xf32>) -> tensor<392x40xf32> {
  %y = ein.join_agg add ins(%x[d0, d1], %w[d1, d2] : tensor<392x24xf32>, tensor<24x40xf32>) out[d0, d2] : tensor<392x40xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    ein.yield %m : f32
  }
  return %y : tensor<392x40xf32>
}
