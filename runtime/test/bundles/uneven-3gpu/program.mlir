// The program of the uneven-3gpu bundle: Y = relu(A B) in bf16, accumulating
// in f32.
func.func @matmul_relu(%a: tensor<10x5xbf16>, %b: tensor<5x7xbf16>) -> tensor<10x7xbf16> {
  %z = ein.join_agg add ins(%a[d0, d1], %b[d1, d2] : tensor<10x5xbf16>, tensor<5x7xbf16>) out[d0, d2] : tensor<10x7xbf16> {
  ^bb0(%x: bf16, %y: bf16):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %m = arith.mulf %xf, %yf : f32
    ein.yield %m : f32
  }
  %r = ein.join_agg none ins(%z[d0, d1] : tensor<10x7xbf16>) out[d0, d1] : tensor<10x7xbf16> {
  ^bb0(%x: bf16):
    %xf = arith.extf %x : bf16 to f32
    %zero = arith.constant 0.0 : f32
    %m = arith.maximumf %xf, %zero : f32
    ein.yield %m : f32
  }
  return %r : tensor<10x7xbf16>
}
