// A bf16 convolution (nhwc, 16 -> 8 channels, 3x3, padding 1).
func.func @f(%x: tensor<2x9x8x16xbf16>, %w: tensor<3x3x16x8xbf16>) -> tensor<2x9x8x8xbf16> {
  %y = ein.conv %x, %w {layout = "nhwc", strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>} : tensor<2x9x8x16xbf16>, tensor<3x3x16x8xbf16> -> tensor<2x9x8x8xbf16>
  return %y : tensor<2x9x8x8xbf16>
}
