// relu(x w1 + b) w2: named matmuls from zero fills, bias and ReLU as generics.
func.func @mlp(%x: tensor<12x20xf32>, %w1: tensor<20x24xf32>, %b: tensor<24xf32>, %w2: tensor<24x7xf32>) -> tensor<12x7xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<12x24xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<12x24xf32>) -> tensor<12x24xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<12x20xf32>, tensor<20x24xf32>) outs(%z1 : tensor<12x24xf32>) -> tensor<12x24xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%h, %b : tensor<12x24xf32>, tensor<24xf32>) outs(%e1 : tensor<12x24xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    %t = arith.maximumf %s, %zero : f32
    linalg.yield %t : f32
  } -> tensor<12x24xf32>
  %e2 = tensor.empty() : tensor<12x7xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<12x7xf32>) -> tensor<12x7xf32>
  %y = linalg.matmul ins(%r, %w2 : tensor<12x24xf32>, tensor<24x7xf32>) outs(%z2 : tensor<12x7xf32>) -> tensor<12x7xf32>
  return %y : tensor<12x7xf32>
}
