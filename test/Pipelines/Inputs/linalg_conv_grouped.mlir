// Grouped and depthwise convolutions as front ends write them: torch-mlir's
// grouped form (a zero pad, the input, filter and bias-broadcast init
// expanded into 4 groups, linalg.conv_2d_ngchw_gfchw with dilation 2, the
// result collapsed back), its depthwise form (the filter's unit channel
// collapsed, linalg.depthwise_conv_2d_nchw_chw at stride 2 over a pad), and
// a depthwise convolution with a channel multiplier in nhwc
// (linalg.depthwise_conv_2d_nhwc_hwcm after a transpose).
func.func @grouped(%x: tensor<2x8x9x7xf32>, %w: tensor<12x2x3x3xf32>, %b: tensor<12xf32>, %dw: tensor<12x1x3x3xf32>, %m: tensor<3x3x12x2xf32>) -> (tensor<2x12x5x4xf32>, tensor<2x3x2x24xf32>) {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 2, 2] high[0, 0, 2, 2] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<2x8x9x7xf32> to tensor<2x8x13x11xf32>
  %e = tensor.empty() : tensor<2x12x9x7xf32>
  %bias = linalg.broadcast ins(%b : tensor<12xf32>) outs(%e : tensor<2x12x9x7xf32>) dimensions = [0, 2, 3]
  %xg = tensor.expand_shape %p [[0], [1, 2], [3], [4]] output_shape [2, 4, 2, 13, 11] : tensor<2x8x13x11xf32> into tensor<2x4x2x13x11xf32>
  %wg = tensor.expand_shape %w [[0, 1], [2], [3], [4]] output_shape [4, 3, 2, 3, 3] : tensor<12x2x3x3xf32> into tensor<4x3x2x3x3xf32>
  %bg = tensor.expand_shape %bias [[0], [1, 2], [3], [4]] output_shape [2, 4, 3, 9, 7] : tensor<2x12x9x7xf32> into tensor<2x4x3x9x7xf32>
  %g = linalg.conv_2d_ngchw_gfchw {dilations = dense<2> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%xg, %wg : tensor<2x4x2x13x11xf32>, tensor<4x3x2x3x3xf32>) outs(%bg : tensor<2x4x3x9x7xf32>) -> tensor<2x4x3x9x7xf32>
  %y = tensor.collapse_shape %g [[0], [1, 2], [3], [4]] : tensor<2x4x3x9x7xf32> into tensor<2x12x9x7xf32>
  %py = tensor.pad %y low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<2x12x9x7xf32> to tensor<2x12x11x9xf32>
  %dwc = tensor.collapse_shape %dw [[0, 1], [2], [3]] : tensor<12x1x3x3xf32> into tensor<12x3x3xf32>
  %e2 = tensor.empty() : tensor<2x12x5x4xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x12x5x4xf32>) -> tensor<2x12x5x4xf32>
  %d = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%py, %dwc : tensor<2x12x11x9xf32>, tensor<12x3x3xf32>) outs(%f2 : tensor<2x12x5x4xf32>) -> tensor<2x12x5x4xf32>
  %e3 = tensor.empty() : tensor<2x5x4x12xf32>
  %t = linalg.transpose ins(%d : tensor<2x12x5x4xf32>) outs(%e3 : tensor<2x5x4x12xf32>) permutation = [0, 2, 3, 1]
  %e4 = tensor.empty() : tensor<2x3x2x12x2xf32>
  %f4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<2x3x2x12x2xf32>) -> tensor<2x3x2x12x2xf32>
  %h = linalg.depthwise_conv_2d_nhwc_hwcm {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%t, %m : tensor<2x5x4x12xf32>, tensor<3x3x12x2xf32>) outs(%f4 : tensor<2x3x2x12x2xf32>) -> tensor<2x3x2x12x2xf32>
  %hc = tensor.collapse_shape %h [[0], [1], [2], [3, 4]] : tensor<2x3x2x12x2xf32> into tensor<2x3x2x24xf32>
  return %d, %hc : tensor<2x12x5x4xf32>, tensor<2x3x2x24xf32>
}
