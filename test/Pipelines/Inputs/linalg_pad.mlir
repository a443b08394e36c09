// A tensor.pad that no window reads (by 0.5, uneven, on both dimensions),
// then an elementwise op over the padded tensor.
func.func @pad(%x: tensor<5x6xf32>) -> tensor<8x7xf32> {
  %half = arith.constant 0.5 : f32
  %p = tensor.pad %x low[1, 0] high[2, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %half : f32
  } : tensor<5x6xf32> to tensor<8x7xf32>
  %e = tensor.empty() : tensor<8x7xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a, b)>], iterator_types = ["parallel", "parallel"]} ins(%p : tensor<8x7xf32>) outs(%e : tensor<8x7xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.mulf %v, %v : f32
    linalg.yield %m : f32
  } -> tensor<8x7xf32>
  return %y : tensor<8x7xf32>
}
