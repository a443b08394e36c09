// RMSNorm as separate generics (square, sum, mean, + eps and rsqrt, times
// x, times w): ein-import fuses the elementwise chain and
// ein-fuse-composites makes it one ein.rms_norm.
#id = affine_map<(b, s, i) -> (b, s, i)>
#row = affine_map<(b, s, i) -> (b, s)>
#col = affine_map<(b, s, i) -> (i)>
#r2 = affine_map<(b, s) -> (b, s)>
func.func @rms(%x: tensor<2x6x32xf32>, %w: tensor<32xf32>) -> tensor<2x6x32xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 32.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %e3 = tensor.empty() : tensor<2x6x32xf32>
  %sq = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<2x6x32xf32>) outs(%e3 : tensor<2x6x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<2x6x32xf32>
  %e2 = tensor.empty() : tensor<2x6xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x6xf32>) -> tensor<2x6xf32>
  %ss = linalg.reduce ins(%sq : tensor<2x6x32xf32>) outs(%z2 : tensor<2x6xf32>) dimensions = [2]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %ms = linalg.generic {indexing_maps = [#r2, #r2], iterator_types = ["parallel", "parallel"]} ins(%ss : tensor<2x6xf32>) outs(%e2 : tensor<2x6xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.divf %a, %n : f32
    linalg.yield %m : f32
  } -> tensor<2x6xf32>
  %r = linalg.generic {indexing_maps = [#r2, #r2], iterator_types = ["parallel", "parallel"]} ins(%ms : tensor<2x6xf32>) outs(%e2 : tensor<2x6xf32>) {
  ^bb0(%a: f32, %o: f32):
    %p = arith.addf %a, %eps : f32
    %q = math.rsqrt %p : f32
    linalg.yield %q : f32
  } -> tensor<2x6xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %r : tensor<2x6x32xf32>, tensor<2x6xf32>) outs(%e3 : tensor<2x6x32xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x6x32xf32>
  %z = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%y, %w : tensor<2x6x32xf32>, tensor<32xf32>) outs(%e3 : tensor<2x6x32xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x6x32xf32>
  return %z : tensor<2x6x32xf32>
}
