// The program of the matmul-2gpu bundle: C = A B, f32.
func.func @matmul(%a: tensor<64x32xf32>, %b: tensor<32x48xf32>) -> tensor<64x48xf32> {
  %c = ein.join_agg add ins(%a[d0, d1], %b[d1, d2] : tensor<64x32xf32>, tensor<32x48xf32>) out[d0, d2] : tensor<64x48xf32> {
  ^bb0(%x: f32, %y: f32):
    %m = arith.mulf %x, %y : f32
    ein.yield %m : f32
  }
  return %c : tensor<64x48xf32>
}
