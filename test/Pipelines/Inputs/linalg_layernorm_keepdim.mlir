// LayerNorm as torch-mlir decomposes aten.layer_norm: the mean kept as a
// [B, S, 1] tensor (keepdim), x - mean as a tensor of its own, its square
// summed and divided by the width, + eps, rsqrt, times the deviation, times
// the weight, plus the bias. ein-import reads the unit dimensions away and
// fuses the elementwise chains; ein-fuse-composites makes it one
// ein.layer_norm.
#x = affine_map<(b, s, i) -> (b, s, i)>
#keep = affine_map<(b, s, i) -> (b, s, 0)>
#w = affine_map<(b, s, i) -> (i)>
#u = affine_map<(b, s, u) -> (b, s, u)>
func.func @layernorm_keepdim(%x: tensor<2x6x32xf32>, %w: tensor<32xf32>, %bias: tensor<32xf32>) -> tensor<2x6x32xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 32.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %e = tensor.empty() : tensor<2x6x32xf32>
  %e1 = tensor.empty() : tensor<2x6x1xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x6x1xf32>) -> tensor<2x6x1xf32>
  %s = linalg.generic {indexing_maps = [#x, #keep], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<2x6x32xf32>) outs(%z1 : tensor<2x6x1xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x6x1xf32>
  %mean = linalg.generic {indexing_maps = [#u, #u], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<2x6x1xf32>) outs(%e1 : tensor<2x6x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.divf %a, %n : f32
    linalg.yield %m : f32
  } -> tensor<2x6x1xf32>
  %d = linalg.generic {indexing_maps = [#x, #keep, #x], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %mean : tensor<2x6x32xf32>, tensor<2x6x1xf32>) outs(%e : tensor<2x6x32xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %r = arith.subf %a, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x6x32xf32>
  %sq = linalg.generic {indexing_maps = [#x, #x], iterator_types = ["parallel", "parallel", "parallel"]} ins(%d : tensor<2x6x32xf32>) outs(%e : tensor<2x6x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %p = arith.mulf %a, %a : f32
    linalg.yield %p : f32
  } -> tensor<2x6x32xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x6x1xf32>) -> tensor<2x6x1xf32>
  %ss = linalg.generic {indexing_maps = [#x, #keep], iterator_types = ["parallel", "parallel", "reduction"]} ins(%sq : tensor<2x6x32xf32>) outs(%z2 : tensor<2x6x1xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x6x1xf32>
  %r = linalg.generic {indexing_maps = [#u, #u], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ss : tensor<2x6x1xf32>) outs(%e1 : tensor<2x6x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.divf %a, %n : f32
    %t = arith.addf %v, %eps : f32
    %q = math.rsqrt %t : f32
    linalg.yield %q : f32
  } -> tensor<2x6x1xf32>
  %y = linalg.generic {indexing_maps = [#x, #keep, #w, #w, #x], iterator_types = ["parallel", "parallel", "parallel"]} ins(%d, %r, %w, %bias : tensor<2x6x32xf32>, tensor<2x6x1xf32>, tensor<32xf32>, tensor<32xf32>) outs(%e : tensor<2x6x32xf32>) {
  ^bb0(%a: f32, %q: f32, %g: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %q : f32
    %k = arith.mulf %m, %g : f32
    %t = arith.addf %k, %c : f32
    linalg.yield %t : f32
  } -> tensor<2x6x32xf32>
  return %y : tensor<2x6x32xf32>
}
