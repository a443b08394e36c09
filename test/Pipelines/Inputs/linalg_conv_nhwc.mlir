// A convolution layer as front ends write it (torch-mlir: a zero tensor.pad,
// linalg.conv_2d_nhwc_hwcf into the broadcast bias), ReLU, then 3x3/2 max
// pooling over a -inf tensor.pad whose last padded row and column it never
// reads (so ein-import drops them).
func.func @cnn(%x: tensor<2x9x8x3xf32>, %w: tensor<3x3x3x4xf32>, %b: tensor<4xf32>) -> tensor<2x4x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %padded = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<2x9x8x3xf32> to tensor<2x11x10x3xf32>
  %e = tensor.empty() : tensor<2x9x8x4xf32>
  %bias = linalg.broadcast ins(%b : tensor<4xf32>) outs(%e : tensor<2x9x8x4xf32>) dimensions = [0, 1, 2]
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%padded, %w : tensor<2x11x10x3xf32>, tensor<3x3x3x4xf32>) outs(%bias : tensor<2x9x8x4xf32>) -> tensor<2x9x8x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c : tensor<2x9x8x4xf32>) outs(%e : tensor<2x9x8x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.maximumf %v, %zero : f32
    linalg.yield %m : f32
  } -> tensor<2x9x8x4xf32>
  %rp = tensor.pad %r low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %ninf : f32
  } : tensor<2x9x8x4xf32> to tensor<2x11x10x4xf32>
  %win = tensor.empty() : tensor<3x3xf32>
  %e2 = tensor.empty() : tensor<2x4x4x4xf32>
  %init = linalg.fill ins(%ninf : f32) outs(%e2 : tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32>
  %p = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%rp, %win : tensor<2x11x10x4xf32>, tensor<3x3xf32>) outs(%init : tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32>
  return %p : tensor<2x4x4x4xf32>
}
