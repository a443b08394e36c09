// Top-1 routing as torch-mlir writes it: the running maximum of each row of
// router logits and its index (one generic, two results), the chosen row of
// a table scaled by the maximum, and the index as a float.
func.func @route(%logits: tensor<64x8xbf16>, %table: tensor<8x16xbf16>) -> (tensor<64x16xbf16>, tensor<64xf32>) {
  %ninf = arith.constant 0xFF80 : bf16
  %zero = arith.constant 0 : i64
  %e = tensor.empty() : tensor<64xbf16>
  %v0 = linalg.fill ins(%ninf : bf16) outs(%e : tensor<64xbf16>) -> tensor<64xbf16>
  %ei = tensor.empty() : tensor<64xi64>
  %i0 = linalg.fill ins(%zero : i64) outs(%ei : tensor<64xi64>) -> tensor<64xi64>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%logits : tensor<64x8xbf16>) outs(%v0, %i0 : tensor<64xbf16>, tensor<64xi64>) {
  ^bb0(%in: bf16, %m: bf16, %i: i64):
    %k = linalg.index 1 : index
    %ki = arith.index_cast %k : index to i64
    %max = arith.maximumf %in, %m : bf16
    %gt = arith.cmpf ogt, %in, %m : bf16
    %sel = arith.select %gt, %ki, %i : i64
    linalg.yield %max, %sel : bf16, i64
  } -> (tensor<64xbf16>, tensor<64xi64>)
  %eg = tensor.empty() : tensor<64x16xbf16>
  %rows = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%r#1 : tensor<64xi64>) outs(%eg : tensor<64x16xbf16>) {
  ^bb0(%id: i64, %o: bf16):
    %row = arith.index_cast %id : i64 to index
    %col = linalg.index 1 : index
    %v = tensor.extract %table[%row, %col] : tensor<8x16xbf16>
    linalg.yield %v : bf16
  } -> tensor<64x16xbf16>
  %scaled = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%rows, %r#0 : tensor<64x16xbf16>, tensor<64xbf16>) outs(%eg : tensor<64x16xbf16>) {
  ^bb0(%a: bf16, %s: bf16, %o: bf16):
    %p = arith.mulf %a, %s : bf16
    linalg.yield %p : bf16
  } -> tensor<64x16xbf16>
  %ef = tensor.empty() : tensor<64xf32>
  %asf = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%r#1 : tensor<64xi64>) outs(%ef : tensor<64xf32>) {
  ^bb0(%id: i64, %o: f32):
    %f = arith.sitofp %id : i64 to f32
    linalg.yield %f : f32
  } -> tensor<64xf32>
  return %scaled, %asf : tensor<64x16xbf16>, tensor<64xf32>
}
