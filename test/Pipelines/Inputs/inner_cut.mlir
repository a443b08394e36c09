// The inner loop of a bf16 matmul cut over 4 GPUs (test input).
module attributes {ein.target = #ein.target<devices = 4>} {
  func.func @inner(%a: tensor<8x4096xbf16>, %b: tensor<4096x8xbf16>) -> tensor<8x8xbf16> {
    %c = ein.join_agg add ins(%a[d0, d1], %b[d1, d2] : tensor<8x4096xbf16>, tensor<4096x8xbf16>) out[d0, d2] : tensor<8x8xbf16> {
    ^bb0(%x: bf16, %y: bf16):
      %xf = arith.extf %x : bf16 to f32
      %yf = arith.extf %y : bf16 to f32
      %m = arith.mulf %xf, %yf : f32
      ein.yield %m : f32
    }
    return %c : tensor<8x8xbf16>
  }
}
