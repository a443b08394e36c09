// Two grouped convolutions (2 groups each, nchw, 3x3, padding 1): one with
// many output channels per group (64 from 4 input channels each), one with
// many input channels per group (32 into 1 output channel each), and a
// depthwise one in nhwc with two features per channel.
func.func @f(%x: tensor<1x8x6x6xf32>, %w: tensor<64x4x3x3xf32>, %y: tensor<1x64x6x6xf32>, %v: tensor<2x32x3x3xf32>, %z: tensor<2x5x5x4xf32>, %u: tensor<3x3x1x8xf32>) -> (tensor<1x64x6x6xf32>, tensor<1x2x6x6xf32>, tensor<2x3x3x8xf32>) {
  %a = ein.conv %x, %w {layout = "nchw", groups = 2 : i64, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>} : tensor<1x8x6x6xf32>, tensor<64x4x3x3xf32> -> tensor<1x64x6x6xf32>
  %b = ein.conv %y, %v {layout = "nchw", groups = 2 : i64, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>} : tensor<1x64x6x6xf32>, tensor<2x32x3x3xf32> -> tensor<1x2x6x6xf32>
  %c = ein.conv %z, %u {layout = "nhwc", groups = 4 : i64, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>} : tensor<2x5x5x4xf32>, tensor<3x3x1x8xf32> -> tensor<2x3x3x8xf32>
  return %a, %b, %c : tensor<1x64x6x6xf32>, tensor<1x2x6x6xf32>, tensor<2x3x3x8xf32>
}
