// A two-layer MLP with a ReLU and a residual: y = x + relu(x W1) W2.
// The weights are laid out ahead of time, in any layout, for free.
func.func @mlp(%x: tensor<64x128xf32>,
               %w1: tensor<128x512xf32> {ein.weight},
               %w2: tensor<512x128xf32> {ein.weight}) -> tensor<64x128xf32> {
  %h = ein.join_agg add ins(%x[d0, d1], %w1[d1, d2] : tensor<64x128xf32>, tensor<128x512xf32>) out[d0, d2] : tensor<64x512xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    ein.yield %m : f32
  }
  %r = ein.join_agg none ins(%h[d0, d1] : tensor<64x512xf32>) out[d0, d1] : tensor<64x512xf32> {
  ^bb0(%a: f32):
    %zero = arith.constant 0.0 : f32
    %m = arith.maximumf %a, %zero : f32
    ein.yield %m : f32
  }
  %o = ein.join_agg add ins(%r[d0, d1], %w2[d1, d2] : tensor<64x512xf32>, tensor<512x128xf32>) out[d0, d2] : tensor<64x128xf32> {
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
