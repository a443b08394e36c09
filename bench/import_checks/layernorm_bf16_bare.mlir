// The linalg program of LNnoaff, written by the einsummable front end (python/einsummable).
// Arguments: the inputs, then the weights {ein.weight} (frontend.json names them).
module {
  func.func @forward(%in0: tensor<4x8x64xbf16>) -> (tensor<4x8x64xbf16>) {
    %v1 = tensor.empty() : tensor<4x8xf32>
    %c2 = arith.constant 0.0 : f32
    %v3 = linalg.fill ins(%c2 : f32) outs(%v1 : tensor<4x8xf32>) -> tensor<4x8xf32>
    %v8 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%in0 : tensor<4x8x64xbf16>) outs(%v3 : tensor<4x8xf32>) {
      ^bb0(%a4: bf16, %a5: f32):
        %s6 = arith.extf %a4 : bf16 to f32
        %s7 = arith.addf %s6, %a5 : f32
        linalg.yield %s7 : f32
      } -> tensor<4x8xf32>
    %v9 = tensor.empty() : tensor<4x8xf32>
    %v14 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v8 : tensor<4x8xf32>) outs(%v9 : tensor<4x8xf32>) {
      ^bb0(%a10: f32, %a11: f32):
        %s12 = arith.constant 64.0 : f32
        %s13 = arith.divf %a10, %s12 : f32
        linalg.yield %s13 : f32
      } -> tensor<4x8xf32>
    %v15 = tensor.empty() : tensor<4x8x64xf32>
    %v21 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%in0, %v14 : tensor<4x8x64xbf16>, tensor<4x8xf32>) outs(%v15 : tensor<4x8x64xf32>) {
      ^bb0(%a16: bf16, %a17: f32, %a18: f32):
        %s19 = arith.extf %a16 : bf16 to f32
        %s20 = arith.subf %s19, %a17 : f32
        linalg.yield %s20 : f32
      } -> tensor<4x8x64xf32>
    %v22 = tensor.empty() : tensor<4x8xf32>
    %c23 = arith.constant 0.0 : f32
    %v24 = linalg.fill ins(%c23 : f32) outs(%v22 : tensor<4x8xf32>) -> tensor<4x8xf32>
    %v29 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%v21 : tensor<4x8x64xf32>) outs(%v24 : tensor<4x8xf32>) {
      ^bb0(%a25: f32, %a26: f32):
        %s27 = arith.mulf %a25, %a25 : f32
        %s28 = arith.addf %s27, %a26 : f32
        linalg.yield %s28 : f32
      } -> tensor<4x8xf32>
    %v30 = tensor.empty() : tensor<4x8xf32>
    %v35 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v29 : tensor<4x8xf32>) outs(%v30 : tensor<4x8xf32>) {
      ^bb0(%a31: f32, %a32: f32):
        %s33 = arith.constant 64.0 : f32
        %s34 = arith.divf %a31, %s33 : f32
        linalg.yield %s34 : f32
      } -> tensor<4x8xf32>
    %v36 = tensor.empty() : tensor<4x8xf32>
    %v42 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v35 : tensor<4x8xf32>) outs(%v36 : tensor<4x8xf32>) {
      ^bb0(%a37: f32, %a38: f32):
        %s39 = arith.constant 1.0e-05 : f32
        %s40 = arith.addf %a37, %s39 : f32
        %s41 = math.rsqrt %s40 : f32
        linalg.yield %s41 : f32
      } -> tensor<4x8xf32>
    %v43 = tensor.empty() : tensor<4x8x64xbf16>
    %v52 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%in0, %v14, %v42 : tensor<4x8x64xbf16>, tensor<4x8xf32>, tensor<4x8xf32>) outs(%v43 : tensor<4x8x64xbf16>) {
      ^bb0(%a44: bf16, %a45: f32, %a46: f32, %a47: bf16):
        %s48 = arith.extf %a44 : bf16 to f32
        %s49 = arith.subf %s48, %a45 : f32
        %s50 = arith.mulf %s49, %a46 : f32
        %s51 = arith.truncf %s50 : f32 to bf16
        linalg.yield %s51 : bf16
      } -> tensor<4x8x64xbf16>
    return %v52 : tensor<4x8x64xbf16>
  }
}
