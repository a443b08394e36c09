// Convolutions in nchw (filter fchw): a strided, dilated linalg.conv_2d_nchw_fchw
// into a zero fill over an uneven zero padding, then the same kind of
// convolution written as a linalg.generic (stride 1, no padding), then an
// average pool as torch-mlir writes one (a sum pool, then a division by the
// window's size).
func.func @cnn_nchw(%x: tensor<2x3x13x11xbf16>, %w: tensor<4x3x3x3xbf16>, %w2: tensor<5x4x2x2xbf16>) -> tensor<2x5x2x2xbf16> {
  %zero = arith.constant 0.0 : bf16
  %nine = arith.constant 9.0 : bf16
  %padded = tensor.pad %x low[0, 0, 2, 1] high[0, 0, 1, 2] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : bf16
  } : tensor<2x3x13x11xbf16> to tensor<2x3x16x14xbf16>
  %e = tensor.empty() : tensor<2x4x6x5xbf16>
  %f = linalg.fill ins(%zero : bf16) outs(%e : tensor<2x4x6x5xbf16>) -> tensor<2x4x6x5xbf16>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<2> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%padded, %w : tensor<2x3x16x14xbf16>, tensor<4x3x3x3xbf16>) outs(%f : tensor<2x4x6x5xbf16>) -> tensor<2x4x6x5xbf16>
  %e2 = tensor.empty() : tensor<2x5x5x4xbf16>
  %f2 = linalg.fill ins(%zero : bf16) outs(%e2 : tensor<2x5x5x4xbf16>) -> tensor<2x5x5x4xbf16>
  %c2 = linalg.generic {indexing_maps = [
      affine_map<(n, f, y, x, c, i, j) -> (n, c, y + i, x + j)>,
      affine_map<(n, f, y, x, c, i, j) -> (f, c, i, j)>,
      affine_map<(n, f, y, x, c, i, j) -> (n, f, y, x)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%c, %w2 : tensor<2x4x6x5xbf16>, tensor<5x4x2x2xbf16>) outs(%f2 : tensor<2x5x5x4xbf16>) {
  ^bb0(%a: bf16, %b: bf16, %acc: bf16):
    %m = arith.mulf %a, %b : bf16
    %s = arith.addf %acc, %m : bf16
    linalg.yield %s : bf16
  } -> tensor<2x5x5x4xbf16>
  %pp = tensor.pad %c2 low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : bf16
  } : tensor<2x5x5x4xbf16> to tensor<2x5x7x6xbf16>
  %win = tensor.empty() : tensor<3x3xbf16>
  %e3 = tensor.empty() : tensor<2x5x2x2xbf16>
  %f3 = linalg.fill ins(%zero : bf16) outs(%e3 : tensor<2x5x2x2xbf16>) -> tensor<2x5x2x2xbf16>
  %sum = linalg.pooling_nchw_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<3> : tensor<2xi64>}
      ins(%pp, %win : tensor<2x5x7x6xbf16>, tensor<3x3xbf16>) outs(%f3 : tensor<2x5x2x2xbf16>) -> tensor<2x5x2x2xbf16>
  %avg = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sum : tensor<2x5x2x2xbf16>) outs(%e3 : tensor<2x5x2x2xbf16>) {
  ^bb0(%v: bf16, %o: bf16):
    %d = arith.divf %v, %nine : bf16
    linalg.yield %d : bf16
  } -> tensor<2x5x2x2xbf16>
  return %avg : tensor<2x5x2x2xbf16>
}
