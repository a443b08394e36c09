// A matrix chain ((A B) C) D, as the workloads' chains A and B but small.
// Every operand is an activation: it may arrive in any partition for free.
func.func @matrix_chain(%a: tensor<256x64xf32>, %b: tensor<64x128xf32>,
                        %c: tensor<128x32xf32>, %d: tensor<32x256xf32>)
    -> tensor<256x256xf32> {
  %ab = ein.join_agg add ins(%a[d0, d1], %b[d1, d2] : tensor<256x64xf32>, tensor<64x128xf32>) out[d0, d2] : tensor<256x128xf32> {
  ^bb0(%x: f32, %y: f32):
    %m = arith.mulf %x, %y : f32
    ein.yield %m : f32
  }
  %abc = ein.join_agg add ins(%ab[d0, d1], %c[d1, d2] : tensor<256x128xf32>, tensor<128x32xf32>) out[d0, d2] : tensor<256x32xf32> {
  ^bb0(%x: f32, %y: f32):
    %m = arith.mulf %x, %y : f32
    ein.yield %m : f32
  }
  %abcd = ein.join_agg add ins(%abc[d0, d1], %d[d1, d2] : tensor<256x32xf32>, tensor<32x256xf32>) out[d0, d2] : tensor<256x256xf32> {
  ^bb0(%x: f32, %y: f32):
    %m = arith.mulf %x, %y : f32
    ein.yield %m : f32
  }
  return %abcd : tensor<256x256xf32>
}
