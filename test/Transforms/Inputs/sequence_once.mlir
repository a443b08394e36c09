// A batch of one row whose positions table is scaled once (from no chunked
// value) and then read along the sequence by every chunk.
func.func @once(%x: tensor<1x16x8xf32>, %pos: tensor<16x8xf32> {ein.weight}) -> tensor<1x16x8xf32> {
  %scaled = ein.join_agg none ins(%pos[d0, d1] : tensor<16x8xf32>) out[d0, d1] : tensor<16x8xf32> {
  ^bb0(%a: f32):
    %two = arith.constant 2.0 : f32
    %m = arith.mulf %a, %two : f32
    ein.yield %m : f32
  }
  %y = ein.join_agg none ins(%x[d0, d1, d2], %scaled[d1, d2] : tensor<1x16x8xf32>, tensor<16x8xf32>) out[d0, d1, d2] : tensor<1x16x8xf32> {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    ein.yield %s : f32
  }
  return %y : tensor<1x16x8xf32>
}
