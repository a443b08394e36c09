// insert_slice into a tensor and into an unwritten tensor.empty (rows
// assembled one by one, rank-reduced sources), a rank-reducing
// extract_slice, all fed by an elementwise op.
func.func @insert(%x: tensor<4x3xf32>, %y: tensor<8x8xf32>, %a: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<8x8xf32>, tensor<2x8xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<4x3xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%v: f32, %o: f32):
    %h = math.tanh %v : f32
    linalg.yield %h : f32
  } -> tensor<4x3xf32>
  %r = tensor.insert_slice %t into %y[2, 1] [4, 3] [1, 1] : tensor<4x3xf32> into tensor<8x8xf32>
  %rows = tensor.empty() : tensor<2x8xf32>
  %r0 = tensor.insert_slice %a into %rows[0, 0] [1, 8] [1, 1] : tensor<8xf32> into tensor<2x8xf32>
  %r1 = tensor.insert_slice %b into %r0[1, 0] [1, 8] [1, 1] : tensor<8xf32> into tensor<2x8xf32>
  %row = tensor.extract_slice %r[3, 0] [1, 8] [1, 1] : tensor<8x8xf32> to tensor<8xf32>
  return %r, %r1, %row : tensor<8x8xf32>, tensor<2x8xf32>, tensor<8xf32>
}
