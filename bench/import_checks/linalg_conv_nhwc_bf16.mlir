// A convolution layer as front ends write it (torch-mlir: a zero tensor.pad,
// linalg.conv_2d_nhwc_hwcf into the broadcast bias), ReLU, then 3x3/2 max
// pooling over a -inf tensor.pad whose last padded row and column it never
// reads (so ein-import drops them).
func.func @cnn(%x: tensor<2x9x8x3xbf16>, %w: tensor<3x3x3x4xbf16>, %b: tensor<4xbf16>) -> tensor<2x4x4x4xbf16> {
  %zero = arith.constant 0.0 : bf16
  %ninf = arith.constant 0xFF80 : bf16
  %padded = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : bf16
  } : tensor<2x9x8x3xbf16> to tensor<2x11x10x3xbf16>
  %e = tensor.empty() : tensor<2x9x8x4xbf16>
  %bias = linalg.broadcast ins(%b : tensor<4xbf16>) outs(%e : tensor<2x9x8x4xbf16>) dimensions = [0, 1, 2]
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%padded, %w : tensor<2x11x10x3xbf16>, tensor<3x3x3x4xbf16>) outs(%bias : tensor<2x9x8x4xbf16>) -> tensor<2x9x8x4xbf16>
  %r = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c : tensor<2x9x8x4xbf16>) outs(%e : tensor<2x9x8x4xbf16>) {
  ^bb0(%v: bf16, %o: bf16):
    %m = arith.maximumf %v, %zero : bf16
    linalg.yield %m : bf16
  } -> tensor<2x9x8x4xbf16>
  %rp = tensor.pad %r low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %ninf : bf16
  } : tensor<2x9x8x4xbf16> to tensor<2x11x10x4xbf16>
  %win = tensor.empty() : tensor<3x3xbf16>
  %e2 = tensor.empty() : tensor<2x4x4x4xbf16>
  %init = linalg.fill ins(%ninf : bf16) outs(%e2 : tensor<2x4x4x4xbf16>) -> tensor<2x4x4x4xbf16>
  %p = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%rp, %win : tensor<2x11x10x4xbf16>, tensor<3x3xbf16>) outs(%init : tensor<2x4x4x4xbf16>) -> tensor<2x4x4x4xbf16>
  return %p : tensor<2x4x4x4xbf16>
}
