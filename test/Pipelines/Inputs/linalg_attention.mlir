// Attention over 2 heads written as generics, plain and causal from the same
// scores: q k^T times 1/sqrt(16), the causal mask from linalg.index and a
// select of -inf, a max from -inf, exp of the difference, a sum from zero, a
// division, and the weighted sum of the values.
func.func @attention(%q: tensor<2x8x16xf32>, %k: tensor<2x8x16xf32>, %v: tensor<2x8x16xf32>) -> (tensor<2x8x16xf32>, tensor<2x8x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %scale = arith.constant 0.25 : f32
  %ehij = tensor.empty() : tensor<2x8x8xf32>
  %zhij = linalg.fill ins(%zero : f32) outs(%ehij : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(h, i, j, d) -> (h, i, d)>, affine_map<(h, i, j, d) -> (h, j, d)>, affine_map<(h, i, j, d) -> (h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<2x8x16xf32>, tensor<2x8x16xf32>) outs(%zhij : tensor<2x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %ps = arith.mulf %p, %scale : f32
    %r = arith.addf %acc, %ps : f32
    linalg.yield %r : f32
  } -> tensor<2x8x8xf32>
  %ehi = tensor.empty() : tensor<2x8xf32>
  %zhi = linalg.fill ins(%zero : f32) outs(%ehi : tensor<2x8xf32>) -> tensor<2x8xf32>
  %ehid = tensor.empty() : tensor<2x8x16xf32>
  %zhid = linalg.fill ins(%zero : f32) outs(%ehid : tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %masked = linalg.generic {indexing_maps = [affine_map<(h, i, j) -> (h, i, j)>, affine_map<(h, i, j) -> (h, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<2x8x8xf32>) outs(%ehij : tensor<2x8x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %keep = arith.cmpi ule, %j, %i : index
    %r = arith.select %keep, %x, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<2x8x8xf32>
  // Without the mask.
  %mfinit = linalg.fill ins(%ninf : f32) outs(%ehi : tensor<2x8xf32>) -> tensor<2x8xf32>
  %mf = linalg.generic {indexing_maps = [affine_map<(h, i, j) -> (h, i, j)>, affine_map<(h, i, j) -> (h, i)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%s : tensor<2x8x8xf32>) outs(%mfinit : tensor<2x8xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.maximumf %acc, %x : f32
    linalg.yield %r : f32
  } -> tensor<2x8xf32>
  %pf = linalg.generic {indexing_maps = [affine_map<(h, i, j) -> (h, i, j)>, affine_map<(h, i, j) -> (h, i)>, affine_map<(h, i, j) -> (h, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s, %mf : tensor<2x8x8xf32>, tensor<2x8xf32>) outs(%ehij : tensor<2x8x8xf32>) {
  ^bb0(%x: f32, %mx: f32, %o: f32):
    %d = arith.subf %x, %mx : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<2x8x8xf32>
  %lf = linalg.generic {indexing_maps = [affine_map<(h, i, j) -> (h, i, j)>, affine_map<(h, i, j) -> (h, i)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%pf : tensor<2x8x8xf32>) outs(%zhi : tensor<2x8xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %acc, %x : f32
    linalg.yield %r : f32
  } -> tensor<2x8xf32>
  %af = linalg.generic {indexing_maps = [affine_map<(h, i, j) -> (h, i, j)>, affine_map<(h, i, j) -> (h, i)>, affine_map<(h, i, j) -> (h, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%pf, %lf : tensor<2x8x8xf32>, tensor<2x8xf32>) outs(%ehij : tensor<2x8x8xf32>) {
  ^bb0(%x: f32, %t: f32, %o: f32):
    %r = arith.divf %x, %t : f32
    linalg.yield %r : f32
  } -> tensor<2x8x8xf32>
  %of = linalg.generic {indexing_maps = [affine_map<(h, i, d, j) -> (h, i, j)>, affine_map<(h, i, d, j) -> (h, j, d)>, affine_map<(h, i, d, j) -> (h, i, d)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%af, %v : tensor<2x8x8xf32>, tensor<2x8x16xf32>) outs(%zhid : tensor<2x8x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x8x16xf32>
  // With it.
  %mcinit = linalg.fill ins(%ninf : f32) outs(%ehi : tensor<2x8xf32>) -> tensor<2x8xf32>
  %mc = linalg.generic {indexing_maps = [affine_map<(h, i, j) -> (h, i, j)>, affine_map<(h, i, j) -> (h, i)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%masked : tensor<2x8x8xf32>) outs(%mcinit : tensor<2x8xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.maximumf %acc, %x : f32
    linalg.yield %r : f32
  } -> tensor<2x8xf32>
  %pc = linalg.generic {indexing_maps = [affine_map<(h, i, j) -> (h, i, j)>, affine_map<(h, i, j) -> (h, i)>, affine_map<(h, i, j) -> (h, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%masked, %mc : tensor<2x8x8xf32>, tensor<2x8xf32>) outs(%ehij : tensor<2x8x8xf32>) {
  ^bb0(%x: f32, %mx: f32, %o: f32):
    %d = arith.subf %x, %mx : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<2x8x8xf32>
  %lc = linalg.generic {indexing_maps = [affine_map<(h, i, j) -> (h, i, j)>, affine_map<(h, i, j) -> (h, i)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%pc : tensor<2x8x8xf32>) outs(%zhi : tensor<2x8xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %acc, %x : f32
    linalg.yield %r : f32
  } -> tensor<2x8xf32>
  %ac = linalg.generic {indexing_maps = [affine_map<(h, i, j) -> (h, i, j)>, affine_map<(h, i, j) -> (h, i)>, affine_map<(h, i, j) -> (h, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%pc, %lc : tensor<2x8x8xf32>, tensor<2x8xf32>) outs(%ehij : tensor<2x8x8xf32>) {
  ^bb0(%x: f32, %t: f32, %o: f32):
    %r = arith.divf %x, %t : f32
    linalg.yield %r : f32
  } -> tensor<2x8x8xf32>
  %oc = linalg.generic {indexing_maps = [affine_map<(h, i, d, j) -> (h, i, j)>, affine_map<(h, i, d, j) -> (h, j, d)>, affine_map<(h, i, d, j) -> (h, i, d)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%ac, %v : tensor<2x8x8xf32>, tensor<2x8x16xf32>) outs(%zhid : tensor<2x8x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x8x16xf32>
  return %of, %oc : tensor<2x8x16xf32>, tensor<2x8x16xf32>
}
