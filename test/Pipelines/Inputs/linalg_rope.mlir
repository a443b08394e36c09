// RoPE by halves on a [tokens, dim] tensor: x cos, then slices, a negation
// and a concat for the rotated half times sin, and a reshape there and back.
// (x is first read whole: ein-synthesize-exchanges does not yet place an
// argument whose first reader is a slice.)
func.func @rope(%x: tensor<8x16xf32>, %cos: tensor<8x16xf32>, %sin: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %e2 = tensor.empty() : tensor<8x16xf32>
  %xc = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%x, %cos : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e2 : tensor<8x16xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %p = arith.mulf %a, %c : f32
    linalg.yield %p : f32
  } -> tensor<8x16xf32>
  %lo = tensor.extract_slice %x[0, 0] [8, 8] [1, 1] : tensor<8x16xf32> to tensor<8x8xf32>
  %hi = tensor.extract_slice %x[0, 8] [8, 8] [1, 1] : tensor<8x16xf32> to tensor<8x8xf32>
  %e = tensor.empty() : tensor<8x8xf32>
  %neg = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%hi : tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %n = arith.negf %v : f32
    linalg.yield %n : f32
  } -> tensor<8x8xf32>
  %rot = tensor.concat dim(1) %neg, %lo : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x16xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%xc, %rot, %sin : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) outs(%e2 : tensor<8x16xf32>) {
  ^bb0(%p: f32, %r: f32, %s: f32, %o: f32):
    %q = arith.mulf %r, %s : f32
    %t = arith.addf %p, %q : f32
    linalg.yield %t : f32
  } -> tensor<8x16xf32>
  %up = tensor.expand_shape %y [[0, 1], [2]] output_shape [2, 4, 16] : tensor<8x16xf32> into tensor<2x4x16xf32>
  %down = tensor.collapse_shape %up [[0, 1], [2]] : tensor<2x4x16xf32> into tensor<8x16xf32>
  return %down : tensor<8x16xf32>
}
