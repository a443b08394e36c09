// GELU in both approximations (tanh, erf) after a linear layer with a bias,
// as the einsummable front end writes F.gelu: one elementwise join after
// import (the bias adds, both GELUs and the sum fused into it).
func.func @gelu(%in0: tensor<4x16xf32>, %w0: tensor<32x16xf32> {ein.weight}, %w1: tensor<32xf32> {ein.weight}) -> (tensor<4x32xf32>) {
  %v1 = tensor.empty() : tensor<4x32xf32>
  %c2 = arith.constant 0.0 : f32
  %v3 = linalg.fill ins(%c2 : f32) outs(%v1 : tensor<4x32xf32>) -> tensor<4x32xf32>
  %v9 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%in0, %w0 : tensor<4x16xf32>, tensor<32x16xf32>) outs(%v3 : tensor<4x32xf32>) {
    ^bb0(%a4: f32, %a5: f32, %a6: f32):
      %s7 = arith.mulf %a4, %a5 : f32
      %s8 = arith.addf %a6, %s7 : f32
      linalg.yield %s8 : f32
    } -> tensor<4x32xf32>
  %v10 = tensor.empty() : tensor<4x32xf32>
  %v15 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v9, %w1 : tensor<4x32xf32>, tensor<32xf32>) outs(%v10 : tensor<4x32xf32>) {
    ^bb0(%a11: f32, %a12: f32, %a13: f32):
      %s14 = arith.addf %a11, %a12 : f32
      linalg.yield %s14 : f32
    } -> tensor<4x32xf32>
  %v16 = tensor.empty() : tensor<4x32xf32>
  %v32 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v15 : tensor<4x32xf32>) outs(%v16 : tensor<4x32xf32>) {
    ^bb0(%a17: f32, %a18: f32):
      %s19 = arith.constant 0.5 : f32
      %s20 = arith.constant 1.0 : f32
      %s21 = arith.mulf %a17, %a17 : f32
      %s22 = arith.mulf %s21, %a17 : f32
      %s23 = arith.constant 0.044715 : f32
      %s24 = arith.mulf %s23, %s22 : f32
      %s25 = arith.addf %a17, %s24 : f32
      %s26 = arith.constant 0.7978845608028654 : f32
      %s27 = arith.mulf %s26, %s25 : f32
      %s28 = math.tanh %s27 : f32
      %s29 = arith.mulf %s19, %a17 : f32
      %s30 = arith.addf %s20, %s28 : f32
      %s31 = arith.mulf %s29, %s30 : f32
      linalg.yield %s31 : f32
    } -> tensor<4x32xf32>
  %v33 = tensor.empty() : tensor<4x32xf32>
  %c34 = arith.constant 0.0 : f32
  %v35 = linalg.fill ins(%c34 : f32) outs(%v33 : tensor<4x32xf32>) -> tensor<4x32xf32>
  %v41 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%in0, %w0 : tensor<4x16xf32>, tensor<32x16xf32>) outs(%v35 : tensor<4x32xf32>) {
    ^bb0(%a36: f32, %a37: f32, %a38: f32):
      %s39 = arith.mulf %a36, %a37 : f32
      %s40 = arith.addf %a38, %s39 : f32
      linalg.yield %s40 : f32
    } -> tensor<4x32xf32>
  %v42 = tensor.empty() : tensor<4x32xf32>
  %v47 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v41, %w1 : tensor<4x32xf32>, tensor<32xf32>) outs(%v42 : tensor<4x32xf32>) {
    ^bb0(%a43: f32, %a44: f32, %a45: f32):
      %s46 = arith.addf %a43, %a44 : f32
      linalg.yield %s46 : f32
    } -> tensor<4x32xf32>
  %v48 = tensor.empty() : tensor<4x32xf32>
  %v59 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v47 : tensor<4x32xf32>) outs(%v48 : tensor<4x32xf32>) {
    ^bb0(%a49: f32, %a50: f32):
      %s51 = arith.constant 0.5 : f32
      %s52 = arith.constant 1.0 : f32
      %s53 = arith.constant 0.7071067811865475 : f32
      %s54 = arith.mulf %a49, %s53 : f32
      %s55 = math.erf %s54 : f32
      %s56 = arith.mulf %s51, %a49 : f32
      %s57 = arith.addf %s52, %s55 : f32
      %s58 = arith.mulf %s56, %s57 : f32
      linalg.yield %s58 : f32
    } -> tensor<4x32xf32>
  %v60 = tensor.empty() : tensor<4x32xf32>
  %v65 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v32, %v59 : tensor<4x32xf32>, tensor<4x32xf32>) outs(%v60 : tensor<4x32xf32>) {
    ^bb0(%a61: f32, %a62: f32, %a63: f32):
      %s64 = arith.addf %a61, %a62 : f32
      linalg.yield %s64 : f32
    } -> tensor<4x32xf32>
  return %v65 : tensor<4x32xf32>
}
