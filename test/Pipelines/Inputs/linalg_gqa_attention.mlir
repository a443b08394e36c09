// Causal grouped-query attention: 8 query heads over 2 KV heads, query head
// h reading KV head h floordiv 4 in both the scores and the weighted values;
// the mask reads the query and key positions (linalg.index 1 and 2) of the
// loops the import splits around h.
func.func @gqa_attention(%q: tensor<8x7x8xf32>, %k: tensor<2x7x8xf32>, %v: tensor<2x7x8xf32>) -> tensor<8x7x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %scale = arith.constant 0.353553385 : f32
  %ehij = tensor.empty() : tensor<8x7x7xf32>
  %zhij = linalg.fill ins(%zero : f32) outs(%ehij : tensor<8x7x7xf32>) -> tensor<8x7x7xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(h, i, j, d) -> (h, i, d)>, affine_map<(h, i, j, d) -> (h floordiv 4, j, d)>, affine_map<(h, i, j, d) -> (h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<8x7x8xf32>, tensor<2x7x8xf32>) outs(%zhij : tensor<8x7x7xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %ps = arith.mulf %p, %scale : f32
    %r = arith.addf %acc, %ps : f32
    linalg.yield %r : f32
  } -> tensor<8x7x7xf32>
  %masked = linalg.generic {indexing_maps = [affine_map<(h, i, j) -> (h, i, j)>, affine_map<(h, i, j) -> (h, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<8x7x7xf32>) outs(%ehij : tensor<8x7x7xf32>) {
  ^bb0(%x: f32, %o: f32):
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %keep = arith.cmpi ule, %j, %i : index
    %r = arith.select %keep, %x, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<8x7x7xf32>
  %ehi = tensor.empty() : tensor<8x7xf32>
  %minit = linalg.fill ins(%ninf : f32) outs(%ehi : tensor<8x7xf32>) -> tensor<8x7xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(h, i, j) -> (h, i, j)>, affine_map<(h, i, j) -> (h, i)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%masked : tensor<8x7x7xf32>) outs(%minit : tensor<8x7xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.maximumf %acc, %x : f32
    linalg.yield %r : f32
  } -> tensor<8x7xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(h, i, j) -> (h, i, j)>, affine_map<(h, i, j) -> (h, i)>, affine_map<(h, i, j) -> (h, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%masked, %m : tensor<8x7x7xf32>, tensor<8x7xf32>) outs(%ehij : tensor<8x7x7xf32>) {
  ^bb0(%x: f32, %mx: f32, %o: f32):
    %d = arith.subf %x, %mx : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<8x7x7xf32>
  %zhi = linalg.fill ins(%zero : f32) outs(%ehi : tensor<8x7xf32>) -> tensor<8x7xf32>
  %l = linalg.generic {indexing_maps = [affine_map<(h, i, j) -> (h, i, j)>, affine_map<(h, i, j) -> (h, i)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%p : tensor<8x7x7xf32>) outs(%zhi : tensor<8x7xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %acc, %x : f32
    linalg.yield %r : f32
  } -> tensor<8x7xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(h, i, j) -> (h, i, j)>, affine_map<(h, i, j) -> (h, i)>, affine_map<(h, i, j) -> (h, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%p, %l : tensor<8x7x7xf32>, tensor<8x7xf32>) outs(%ehij : tensor<8x7x7xf32>) {
  ^bb0(%x: f32, %t: f32, %o: f32):
    %r = arith.divf %x, %t : f32
    linalg.yield %r : f32
  } -> tensor<8x7x7xf32>
  %ehid = tensor.empty() : tensor<8x7x8xf32>
  %zhid = linalg.fill ins(%zero : f32) outs(%ehid : tensor<8x7x8xf32>) -> tensor<8x7x8xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(h, i, d, j) -> (h, i, j)>, affine_map<(h, i, d, j) -> (h floordiv 4, j, d)>, affine_map<(h, i, d, j) -> (h, i, d)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%a, %v : tensor<8x7x7xf32>, tensor<2x7x8xf32>) outs(%zhid : tensor<8x7x8xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %pv = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %pv : f32
    linalg.yield %r : f32
  } -> tensor<8x7x8xf32>
  return %o : tensor<8x7x8xf32>
}
