// Grouped-query scores: query head h reads KV head h floordiv 4, and the
// body reads h (linalg.index) so the split loop must give it back whole.
func.func @gqa_scores(%q: tensor<8x4x16xf32>, %k: tensor<2x6x16xf32>) -> tensor<8x4x6xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x4x6xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4x6xf32>) -> tensor<8x4x6xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(h, i, j, d) -> (h, i, d)>, affine_map<(h, i, j, d) -> (h floordiv 4, j, d)>, affine_map<(h, i, j, d) -> (h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<8x4x16xf32>, tensor<2x6x16xf32>) outs(%z : tensor<8x4x6xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %h = linalg.index 0 : index
    %hf = arith.index_cast %h : index to i64
    %hs = arith.sitofp %hf : i64 to f32
    %p = arith.mulf %a, %b : f32
    %ps = arith.addf %p, %hs : f32
    %r = arith.addf %acc, %ps : f32
    linalg.yield %r : f32
  } -> tensor<8x4x6xf32>
  return %s : tensor<8x4x6xf32>
}
