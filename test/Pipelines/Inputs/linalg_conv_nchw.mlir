// Convolutions in nchw (filter fchw): a strided, dilated linalg.conv_2d_nchw_fchw
// into a zero fill over an uneven zero padding, then the same kind of
// convolution written as a linalg.generic (stride 1, no padding), then an
// average pool as torch-mlir writes one (a sum pool, then a division by the
// window's size).
func.func @cnn_nchw(%x: tensor<2x3x13x11xf32>, %w: tensor<4x3x3x3xf32>, %w2: tensor<5x4x2x2xf32>) -> tensor<2x5x2x2xf32> {
  %zero = arith.constant 0.0 : f32
  %nine = arith.constant 9.0 : f32
  %padded = tensor.pad %x low[0, 0, 2, 1] high[0, 0, 1, 2] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<2x3x13x11xf32> to tensor<2x3x16x14xf32>
  %e = tensor.empty() : tensor<2x4x6x5xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x6x5xf32>) -> tensor<2x4x6x5xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<2> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%padded, %w : tensor<2x3x16x14xf32>, tensor<4x3x3x3xf32>) outs(%f : tensor<2x4x6x5xf32>) -> tensor<2x4x6x5xf32>
  %e2 = tensor.empty() : tensor<2x5x5x4xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x5x5x4xf32>) -> tensor<2x5x5x4xf32>
  %c2 = linalg.generic {indexing_maps = [
      affine_map<(n, f, y, x, c, i, j) -> (n, c, y + i, x + j)>,
      affine_map<(n, f, y, x, c, i, j) -> (f, c, i, j)>,
      affine_map<(n, f, y, x, c, i, j) -> (n, f, y, x)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%c, %w2 : tensor<2x4x6x5xf32>, tensor<5x4x2x2xf32>) outs(%f2 : tensor<2x5x5x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x5x5x4xf32>
  %pp = tensor.pad %c2 low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<2x5x5x4xf32> to tensor<2x5x7x6xf32>
  %win = tensor.empty() : tensor<3x3xf32>
  %e3 = tensor.empty() : tensor<2x5x2x2xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<2x5x2x2xf32>) -> tensor<2x5x2x2xf32>
  %sum = linalg.pooling_nchw_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<3> : tensor<2xi64>}
      ins(%pp, %win : tensor<2x5x7x6xf32>, tensor<3x3xf32>) outs(%f3 : tensor<2x5x2x2xf32>) -> tensor<2x5x2x2xf32>
  %avg = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sum : tensor<2x5x2x2xf32>) outs(%e3 : tensor<2x5x2x2xf32>) {
  ^bb0(%v: f32, %o: f32):
    %d = arith.divf %v, %nine : f32
    linalg.yield %d : f32
  } -> tensor<2x5x2x2xf32>
  return %avg : tensor<2x5x2x2xf32>
}
