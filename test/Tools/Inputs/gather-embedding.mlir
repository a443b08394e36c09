// Token and position embeddings as a front end writes them (one linalg
// lookup each, the positions a constant), added: two ein.gather ops after
// import (test/Tools/ein-compile-gather.test).
func.func @embed(%ids: tensor<3x8xi64>, %wte: tensor<50x16xf32>, %wpe: tensor<8x16xf32>) -> tensor<3x8x16xf32> {
  %pos = arith.constant dense<[0, 1, 2, 3, 4, 5, 6, 7]> : tensor<8xi64>
  %e = tensor.empty() : tensor<3x8x16xf32>
  %tok = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ids : tensor<3x8xi64>) outs(%e : tensor<3x8x16xf32>) {
  ^bb0(%i: i64, %o: f32):
    %row = arith.index_cast %i : i64 to index
    %col = linalg.index 2 : index
    %v = tensor.extract %wte[%row, %col] : tensor<50x16xf32>
    linalg.yield %v : f32
  } -> tensor<3x8x16xf32>
  %ep = tensor.empty() : tensor<8x16xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%pos : tensor<8xi64>) outs(%ep : tensor<8x16xf32>) {
  ^bb0(%i: i64, %o: f32):
    %row = arith.index_cast %i : i64 to index
    %col = linalg.index 1 : index
    %v = tensor.extract %wpe[%row, %col] : tensor<8x16xf32>
    linalg.yield %v : f32
  } -> tensor<8x16xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%tok, %p : tensor<3x8x16xf32>, tensor<8x16xf32>) outs(%e : tensor<3x8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<3x8x16xf32>
  return %y : tensor<3x8x16xf32>
}
