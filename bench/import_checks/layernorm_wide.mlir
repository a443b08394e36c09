func.func @wide(%x: tensor<64x8192xbf16>, %w: tensor<8192xbf16>, %b: tensor<8192xbf16>) -> tensor<64x8192xbf16> {
  %z = ein.layer_norm %x weight %w bias %b eps 1.0e-05 : tensor<64x8192xbf16>, tensor<8192xbf16>, tensor<8192xbf16>
  return %z : tensor<64x8192xbf16>
}
