// LayerNorm as the einsummable front end writes aten.native_layer_norm
// (python/einsummable/_aten.py): the sum, the mean as its own op, the sum
// of squared deviations, rsqrt(var + eps), one elementwise join with the
// weight and the bias. ein-fuse-composites makes it one ein.layer_norm.
func.func @layernorm(%in0: tensor<4x8x99xf32>, %w0: tensor<99xf32> {ein.weight}, %w1: tensor<99xf32> {ein.weight}) -> (tensor<4x8x99xf32>) {
  %v1 = tensor.empty() : tensor<4x8xf32>
  %c2 = arith.constant 0.0 : f32
  %v3 = linalg.fill ins(%c2 : f32) outs(%v1 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %v7 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%in0 : tensor<4x8x99xf32>) outs(%v3 : tensor<4x8xf32>) {
    ^bb0(%a4: f32, %a5: f32):
      %s6 = arith.addf %a4, %a5 : f32
      linalg.yield %s6 : f32
    } -> tensor<4x8xf32>
  %v8 = tensor.empty() : tensor<4x8xf32>
  %v13 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v7 : tensor<4x8xf32>) outs(%v8 : tensor<4x8xf32>) {
    ^bb0(%a9: f32, %a10: f32):
      %s11 = arith.constant 99.0 : f32
      %s12 = arith.divf %a9, %s11 : f32
      linalg.yield %s12 : f32
    } -> tensor<4x8xf32>
  %v14 = tensor.empty() : tensor<4x8x99xf32>
  %v19 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%in0, %v13 : tensor<4x8x99xf32>, tensor<4x8xf32>) outs(%v14 : tensor<4x8x99xf32>) {
    ^bb0(%a15: f32, %a16: f32, %a17: f32):
      %s18 = arith.subf %a15, %a16 : f32
      linalg.yield %s18 : f32
    } -> tensor<4x8x99xf32>
  %v20 = tensor.empty() : tensor<4x8xf32>
  %c21 = arith.constant 0.0 : f32
  %v22 = linalg.fill ins(%c21 : f32) outs(%v20 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %v27 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%v19 : tensor<4x8x99xf32>) outs(%v22 : tensor<4x8xf32>) {
    ^bb0(%a23: f32, %a24: f32):
      %s25 = arith.mulf %a23, %a23 : f32
      %s26 = arith.addf %s25, %a24 : f32
      linalg.yield %s26 : f32
    } -> tensor<4x8xf32>
  %v28 = tensor.empty() : tensor<4x8xf32>
  %v33 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v27 : tensor<4x8xf32>) outs(%v28 : tensor<4x8xf32>) {
    ^bb0(%a29: f32, %a30: f32):
      %s31 = arith.constant 99.0 : f32
      %s32 = arith.divf %a29, %s31 : f32
      linalg.yield %s32 : f32
    } -> tensor<4x8xf32>
  %v34 = tensor.empty() : tensor<4x8xf32>
  %v40 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v33 : tensor<4x8xf32>) outs(%v34 : tensor<4x8xf32>) {
    ^bb0(%a35: f32, %a36: f32):
      %s37 = arith.constant 1.0e-05 : f32
      %s38 = arith.addf %a35, %s37 : f32
      %s39 = math.rsqrt %s38 : f32
      linalg.yield %s39 : f32
    } -> tensor<4x8xf32>
  %v41 = tensor.empty() : tensor<4x8x99xf32>
  %v52 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%in0, %v13, %v40, %w0, %w1 : tensor<4x8x99xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<99xf32>, tensor<99xf32>) outs(%v41 : tensor<4x8x99xf32>) {
    ^bb0(%a42: f32, %a43: f32, %a44: f32, %a45: f32, %a46: f32, %a47: f32):
      %s48 = arith.subf %a42, %a43 : f32
      %s49 = arith.mulf %s48, %a44 : f32
      %s50 = arith.mulf %s49, %a45 : f32
      %s51 = arith.addf %s50, %a46 : f32
      linalg.yield %s51 : f32
    } -> tensor<4x8x99xf32>
  return %v52 : tensor<4x8x99xf32>
}
