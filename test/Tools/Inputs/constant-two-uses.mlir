// Two ops read one bf16 constant (a mask and a table), each in its own cut
// (test/Tools/ein-compile-dense-constant.test).
func.func @two(%x: tensor<8x6xbf16>, %w: tensor<6x8xbf16>) -> (tensor<8x6xbf16>, tensor<8x8xf32>) {
  %m = arith.constant dense<[[1.0, 0.0, 2.0, 0.0, 3.0, 0.0], [0.5, 0.5, 0.5, 0.5, 0.5, 0.5], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [0.0, 0.0, 0.0, 0.0, 0.0, 1.0], [1.0, 0.0, 2.0, 0.0, 3.0, 0.0], [0.5, 0.5, 0.5, 0.5, 0.5, 0.5], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [-1.0, 0.0, 0.0, 0.0, 0.0, 1.0]]> : tensor<8x6xbf16>
  %e = tensor.empty() : tensor<8x6xbf16>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%x, %m : tensor<8x6xbf16>, tensor<8x6xbf16>) outs(%e : tensor<8x6xbf16>) {
  ^bb0(%a: bf16, %b: bf16, %o: bf16):
    %s = arith.mulf %a, %b : bf16
    linalg.yield %s : bf16
  } -> tensor<8x6xbf16>
  %z = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<8x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%e2 : tensor<8x8xf32>) -> tensor<8x8xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%m, %w : tensor<8x6xbf16>, tensor<6x8xbf16>) outs(%f : tensor<8x8xf32>) {
  ^bb0(%a: bf16, %b: bf16, %o: f32):
    %af = arith.extf %a : bf16 to f32
    %bf = arith.extf %b : bf16 to f32
    %s = arith.mulf %af, %bf : f32
    %t = arith.addf %o, %s : f32
    linalg.yield %t : f32
  } -> tensor<8x8xf32>
  return %y, %p : tensor<8x6xbf16>, tensor<8x8xf32>
}
