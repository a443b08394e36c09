// RMSNorm as torch-mlir writes it: the mean kept as a [B, S, 1] tensor
// (keepdim), read back through maps with a constant 0, x * x, the sum
// divided by the width, + eps, rsqrt, times x, times the weight.
// ein-import reads the unit dimension away, fuses the elementwise chain,
// and ein-fuse-composites makes it one ein.rms_norm.
#x = affine_map<(b, s, i) -> (b, s, i)>
#keep = affine_map<(b, s, i) -> (b, s, 0)>
#w = affine_map<(b, s, i) -> (i)>
func.func @rmsnorm_keepdim(%x: tensor<2x6x32xf32>, %w: tensor<32xf32>) -> tensor<2x6x32xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 32.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %e = tensor.empty() : tensor<2x6x32xf32>
  %sq = linalg.generic {indexing_maps = [#x, #x], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<2x6x32xf32>) outs(%e : tensor<2x6x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %two = arith.constant 2.0 : f32
    %p = math.powf %a, %two : f32
    linalg.yield %p : f32
  } -> tensor<2x6x32xf32>
  %e1 = tensor.empty() : tensor<2x6x1xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x6x1xf32>) -> tensor<2x6x1xf32>
  %ss = linalg.generic {indexing_maps = [#x, #keep], iterator_types = ["parallel", "parallel", "reduction"]} ins(%sq : tensor<2x6x32xf32>) outs(%z1 : tensor<2x6x1xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x6x1xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(b, s, u) -> (b, s, u)>, affine_map<(b, s, u) -> (b, s, u)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ss : tensor<2x6x1xf32>) outs(%e1 : tensor<2x6x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.divf %a, %n : f32
    %v = arith.addf %m, %eps : f32
    %q = math.rsqrt %v : f32
    linalg.yield %q : f32
  } -> tensor<2x6x1xf32>
  %y = linalg.generic {indexing_maps = [#x, #keep, #x], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %r : tensor<2x6x32xf32>, tensor<2x6x1xf32>) outs(%e : tensor<2x6x32xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x6x32xf32>
  %z = linalg.generic {indexing_maps = [#x, #w, #x], iterator_types = ["parallel", "parallel", "parallel"]} ins(%y, %w : tensor<2x6x32xf32>, tensor<32xf32>) outs(%e : tensor<2x6x32xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x6x32xf32>
  return %z : tensor<2x6x32xf32>
}
