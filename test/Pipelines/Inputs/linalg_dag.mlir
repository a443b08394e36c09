// A DAG where x feeds four branches and w two: x w scaled by the inverse
// RMS of x's rows, plus tanh(x) w; and the Gram matrix x^T x (x as both
// operands of one product) as a second result.
func.func @dag(%x: tensor<10x24xf32>, %w: tensor<24x12xf32>) -> (tensor<10x12xf32>, tensor<24x24xf32>) {
  %zero = arith.constant 0.0 : f32
  %inv = arith.constant 0.0416666679 : f32
  %eps = arith.constant 1.0e-05 : f32
  %eil = tensor.empty() : tensor<10x12xf32>
  %zil = linalg.fill ins(%zero : f32) outs(%eil : tensor<10x12xf32>) -> tensor<10x12xf32>
  %xw = linalg.matmul ins(%x, %w : tensor<10x24xf32>, tensor<24x12xf32>) outs(%zil : tensor<10x12xf32>) -> tensor<10x12xf32>
  %ei = tensor.empty() : tensor<10xf32>
  %zi = linalg.fill ins(%zero : f32) outs(%ei : tensor<10xf32>) -> tensor<10xf32>
  %ss = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<10x24xf32>) outs(%zi : tensor<10xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %sq = arith.mulf %v, %v : f32
    %r = arith.addf %acc, %sq : f32
    linalg.yield %r : f32
  } -> tensor<10xf32>
  %eij = tensor.empty() : tensor<10x24xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<10x24xf32>) outs(%eij : tensor<10x24xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = math.tanh %v : f32
    linalg.yield %r : f32
  } -> tensor<10x24xf32>
  %tw = linalg.matmul ins(%t, %w : tensor<10x24xf32>, tensor<24x12xf32>) outs(%zil : tensor<10x12xf32>) -> tensor<10x12xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i, l) -> (i, l)>, affine_map<(i, l) -> (i)>, affine_map<(i, l) -> (i, l)>, affine_map<(i, l) -> (i, l)>], iterator_types = ["parallel", "parallel"]} ins(%xw, %ss, %tw : tensor<10x12xf32>, tensor<10xf32>, tensor<10x12xf32>) outs(%eil : tensor<10x12xf32>) {
  ^bb0(%a: f32, %s: f32, %b: f32, %o: f32):
    %mean = arith.mulf %s, %inv : f32
    %me = arith.addf %mean, %eps : f32
    %r = math.rsqrt %me : f32
    %n = arith.mulf %a, %r : f32
    %sum = arith.addf %n, %b : f32
    linalg.yield %sum : f32
  } -> tensor<10x12xf32>
  %ejk = tensor.empty() : tensor<24x24xf32>
  %zjk = linalg.fill ins(%zero : f32) outs(%ejk : tensor<24x24xf32>) -> tensor<24x24xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(j, k, i) -> (i, j)>, affine_map<(j, k, i) -> (i, k)>, affine_map<(j, k, i) -> (j, k)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %x : tensor<10x24xf32>, tensor<10x24xf32>) outs(%zjk : tensor<24x24xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<24x24xf32>
  return %y, %g : tensor<10x12xf32>, tensor<24x24xf32>
}
