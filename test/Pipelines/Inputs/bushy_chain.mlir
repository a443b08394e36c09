// (A B)(C D), 512 x 512 f32: the bushy chain of the paper's placement result.
func.func @bushy(%a: tensor<512x512xf32>, %b: tensor<512x512xf32>, %c: tensor<512x512xf32>, %d: tensor<512x512xf32>) -> tensor<512x512xf32> {
  %ab = ein.join_agg add ins(%a[d0, d1], %b[d1, d2] : tensor<512x512xf32>, tensor<512x512xf32>) out[d0, d2] : tensor<512x512xf32> {
  ^bb0(%x: f32, %y: f32):
    %m = arith.mulf %x, %y : f32
    ein.yield %m : f32
  }
  %cd = ein.join_agg add ins(%c[d0, d1], %d[d1, d2] : tensor<512x512xf32>, tensor<512x512xf32>) out[d0, d2] : tensor<512x512xf32> {
  ^bb0(%x: f32, %y: f32):
    %m = arith.mulf %x, %y : f32
    ein.yield %m : f32
  }
  %r = ein.join_agg add ins(%ab[d0, d1], %cd[d1, d2] : tensor<512x512xf32>, tensor<512x512xf32>) out[d0, d2] : tensor<512x512xf32> {
  ^bb0(%x: f32, %y: f32):
    %m = arith.mulf %x, %y : f32
    ein.yield %m : f32
  }
  return %r : tensor<512x512xf32>
}
