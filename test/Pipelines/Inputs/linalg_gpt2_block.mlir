// transformers' GPT2Block (bf16, eager attention with its causal mask) as
// python/einsummable exported it (bench/frontend_gpu.py, hf-gpt2), shrunk
// to batch 2, 16 tokens, 2 heads of 64 (d_model 128, FFN 512): the fused
// QKV projection sliced into q, k and v, heads split and transposed, the
// result transposed back, LayerNorms, biases, tanh GELU and residuals.
// The linalg program of Block, written by the einsummable front end (python/einsummable).
// Arguments: the inputs, then the weights {ein.weight} (frontend.json names them).
module {
  func.func @forward(%in0: tensor<2x16x128xbf16>, %w0: tensor<128xbf16> {ein.weight}, %w1: tensor<128xbf16> {ein.weight}, %w2: tensor<128x384xbf16> {ein.weight}, %w3: tensor<384xbf16> {ein.weight}, %w4: tensor<128x128xbf16> {ein.weight}, %w5: tensor<128xbf16> {ein.weight}, %w6: tensor<128xbf16> {ein.weight}, %w7: tensor<128xbf16> {ein.weight}, %w8: tensor<128x512xbf16> {ein.weight}, %w9: tensor<512xbf16> {ein.weight}, %w10: tensor<512x128xbf16> {ein.weight}, %w11: tensor<128xbf16> {ein.weight}) -> (tensor<2x16x128xbf16>) {
    %v1 = tensor.empty() : tensor<2x16xf32>
    %c2 = arith.constant 0.0 : f32
    %v3 = linalg.fill ins(%c2 : f32) outs(%v1 : tensor<2x16xf32>) -> tensor<2x16xf32>
    %v8 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%in0 : tensor<2x16x128xbf16>) outs(%v3 : tensor<2x16xf32>) {
      ^bb0(%a4: bf16, %a5: f32):
        %s6 = arith.extf %a4 : bf16 to f32
        %s7 = arith.addf %s6, %a5 : f32
        linalg.yield %s7 : f32
      } -> tensor<2x16xf32>
    %v9 = tensor.empty() : tensor<2x16xf32>
    %v14 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v8 : tensor<2x16xf32>) outs(%v9 : tensor<2x16xf32>) {
      ^bb0(%a10: f32, %a11: f32):
        %s12 = arith.constant 128.0 : f32
        %s13 = arith.divf %a10, %s12 : f32
        linalg.yield %s13 : f32
      } -> tensor<2x16xf32>
    %v15 = tensor.empty() : tensor<2x16x128xf32>
    %v21 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%in0, %v14 : tensor<2x16x128xbf16>, tensor<2x16xf32>) outs(%v15 : tensor<2x16x128xf32>) {
      ^bb0(%a16: bf16, %a17: f32, %a18: f32):
        %s19 = arith.extf %a16 : bf16 to f32
        %s20 = arith.subf %s19, %a17 : f32
        linalg.yield %s20 : f32
      } -> tensor<2x16x128xf32>
    %v22 = tensor.empty() : tensor<2x16xf32>
    %c23 = arith.constant 0.0 : f32
    %v24 = linalg.fill ins(%c23 : f32) outs(%v22 : tensor<2x16xf32>) -> tensor<2x16xf32>
    %v29 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%v21 : tensor<2x16x128xf32>) outs(%v24 : tensor<2x16xf32>) {
      ^bb0(%a25: f32, %a26: f32):
        %s27 = arith.mulf %a25, %a25 : f32
        %s28 = arith.addf %s27, %a26 : f32
        linalg.yield %s28 : f32
      } -> tensor<2x16xf32>
    %v30 = tensor.empty() : tensor<2x16xf32>
    %v35 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v29 : tensor<2x16xf32>) outs(%v30 : tensor<2x16xf32>) {
      ^bb0(%a31: f32, %a32: f32):
        %s33 = arith.constant 128.0 : f32
        %s34 = arith.divf %a31, %s33 : f32
        linalg.yield %s34 : f32
      } -> tensor<2x16xf32>
    %v36 = tensor.empty() : tensor<2x16xf32>
    %v42 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v35 : tensor<2x16xf32>) outs(%v36 : tensor<2x16xf32>) {
      ^bb0(%a37: f32, %a38: f32):
        %s39 = arith.constant 1.0e-05 : f32
        %s40 = arith.addf %a37, %s39 : f32
        %s41 = math.rsqrt %s40 : f32
        linalg.yield %s41 : f32
      } -> tensor<2x16xf32>
    %v43 = tensor.empty() : tensor<2x16x128xbf16>
    %v58 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%in0, %v14, %v42, %w0, %w1 : tensor<2x16x128xbf16>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<128xbf16>, tensor<128xbf16>) outs(%v43 : tensor<2x16x128xbf16>) {
      ^bb0(%a44: bf16, %a45: f32, %a46: f32, %a47: bf16, %a48: bf16, %a49: bf16):
        %s50 = arith.extf %a44 : bf16 to f32
        %s51 = arith.extf %a47 : bf16 to f32
        %s52 = arith.extf %a48 : bf16 to f32
        %s53 = arith.subf %s50, %a45 : f32
        %s54 = arith.mulf %s53, %a46 : f32
        %s55 = arith.mulf %s54, %s51 : f32
        %s56 = arith.addf %s55, %s52 : f32
        %s57 = arith.truncf %s56 : f32 to bf16
        linalg.yield %s57 : bf16
      } -> tensor<2x16x128xbf16>
    %v59 = tensor.empty() : tensor<2x16x384xbf16>
    %c60 = arith.constant 0.0 : bf16
    %v61 = linalg.fill ins(%c60 : bf16) outs(%v59 : tensor<2x16x384xbf16>) -> tensor<2x16x384xbf16>
    %v67 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%v58, %w2 : tensor<2x16x128xbf16>, tensor<128x384xbf16>) outs(%v61 : tensor<2x16x384xbf16>) {
      ^bb0(%a62: bf16, %a63: bf16, %a64: bf16):
        %s65 = arith.mulf %a62, %a63 : bf16
        %s66 = arith.addf %a64, %s65 : bf16
        linalg.yield %s66 : bf16
      } -> tensor<2x16x384xbf16>
    %v68 = tensor.empty() : tensor<2x16x384xbf16>
    %v76 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%v67, %w3 : tensor<2x16x384xbf16>, tensor<384xbf16>) outs(%v68 : tensor<2x16x384xbf16>) {
      ^bb0(%a69: bf16, %a70: bf16, %a71: bf16):
        %s72 = arith.extf %a69 : bf16 to f32
        %s73 = arith.extf %a70 : bf16 to f32
        %s74 = arith.addf %s72, %s73 : f32
        %s75 = arith.truncf %s74 : f32 to bf16
        linalg.yield %s75 : bf16
      } -> tensor<2x16x384xbf16>
    %v77 = tensor.extract_slice %v76[0, 0, 0] [2, 16, 128] [1, 1, 1] : tensor<2x16x384xbf16> to tensor<2x16x128xbf16>
    %v78 = tensor.extract_slice %v76[0, 0, 128] [2, 16, 128] [1, 1, 1] : tensor<2x16x384xbf16> to tensor<2x16x128xbf16>
    %v79 = tensor.extract_slice %v76[0, 0, 256] [2, 16, 128] [1, 1, 1] : tensor<2x16x384xbf16> to tensor<2x16x128xbf16>
    %v80 = tensor.expand_shape %v78 [[0], [1], [2, 3]] output_shape [2, 16, 2, 64] : tensor<2x16x128xbf16> into tensor<2x16x2x64xbf16>
    %v81 = tensor.expand_shape %v79 [[0], [1], [2, 3]] output_shape [2, 16, 2, 64] : tensor<2x16x128xbf16> into tensor<2x16x2x64xbf16>
    %v82 = tensor.expand_shape %v77 [[0], [1], [2, 3]] output_shape [2, 16, 2, 64] : tensor<2x16x128xbf16> into tensor<2x16x2x64xbf16>
    %v83 = tensor.empty() : tensor<2x2x16x64xbf16>
    %v86 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%v82 : tensor<2x16x2x64xbf16>) outs(%v83 : tensor<2x2x16x64xbf16>) {
      ^bb0(%a84: bf16, %a85: bf16):
        linalg.yield %a84 : bf16
      } -> tensor<2x2x16x64xbf16>
    %v87 = tensor.empty() : tensor<2x2x16x64xbf16>
    %v90 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%v80 : tensor<2x16x2x64xbf16>) outs(%v87 : tensor<2x2x16x64xbf16>) {
      ^bb0(%a88: bf16, %a89: bf16):
        linalg.yield %a88 : bf16
      } -> tensor<2x2x16x64xbf16>
    %v91 = tensor.empty() : tensor<2x2x16x16xbf16>
    %c92 = arith.constant 0.0 : bf16
    %v93 = linalg.fill ins(%c92 : bf16) outs(%v91 : tensor<2x2x16x16xbf16>) -> tensor<2x2x16x16xbf16>
    %v99 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%v86, %v90 : tensor<2x2x16x64xbf16>, tensor<2x2x16x64xbf16>) outs(%v93 : tensor<2x2x16x16xbf16>) {
      ^bb0(%a94: bf16, %a95: bf16, %a96: bf16):
        %s97 = arith.mulf %a94, %a95 : bf16
        %s98 = arith.addf %a96, %s97 : bf16
        linalg.yield %s98 : bf16
      } -> tensor<2x2x16x16xbf16>
    %v100 = tensor.empty() : tensor<2x2x16x16xbf16>
    %v112 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%v99 : tensor<2x2x16x16xbf16>) outs(%v100 : tensor<2x2x16x16xbf16>) {
      ^bb0(%a101: bf16, %a102: bf16):
        %s103 = arith.extf %a101 : bf16 to f32
        %s104 = arith.constant 0.125 : f32
        %s105 = linalg.index 2 : index
        %s106 = linalg.index 3 : index
        %s107 = arith.cmpi sgt, %s106, %s105 : index
        %s108 = arith.mulf %s103, %s104 : f32
        %s109 = arith.constant 0xFF800000 : f32
        %s110 = arith.select %s107, %s109, %s108 : f32
        %s111 = arith.truncf %s110 : f32 to bf16
        linalg.yield %s111 : bf16
      } -> tensor<2x2x16x16xbf16>
    %v113 = tensor.empty() : tensor<2x2x16x16xbf16>
    %v114 = linalg.softmax dimension(3) ins(%v112 : tensor<2x2x16x16xbf16>) outs(%v113 : tensor<2x2x16x16xbf16>) -> tensor<2x2x16x16xbf16>
    %v115 = tensor.empty() : tensor<2x2x16x64xbf16>
    %v118 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%v81 : tensor<2x16x2x64xbf16>) outs(%v115 : tensor<2x2x16x64xbf16>) {
      ^bb0(%a116: bf16, %a117: bf16):
        linalg.yield %a116 : bf16
      } -> tensor<2x2x16x64xbf16>
    %v119 = tensor.empty() : tensor<2x2x16x64xbf16>
    %c120 = arith.constant 0.0 : bf16
    %v121 = linalg.fill ins(%c120 : bf16) outs(%v119 : tensor<2x2x16x64xbf16>) -> tensor<2x2x16x64xbf16>
    %v127 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%v114, %v118 : tensor<2x2x16x16xbf16>, tensor<2x2x16x64xbf16>) outs(%v121 : tensor<2x2x16x64xbf16>) {
      ^bb0(%a122: bf16, %a123: bf16, %a124: bf16):
        %s125 = arith.mulf %a122, %a123 : bf16
        %s126 = arith.addf %a124, %s125 : bf16
        linalg.yield %s126 : bf16
      } -> tensor<2x2x16x64xbf16>
    %v128 = tensor.empty() : tensor<2x16x128xbf16>
    %c129 = arith.constant 0.0 : bf16
    %v130 = linalg.fill ins(%c129 : bf16) outs(%v128 : tensor<2x16x128xbf16>) -> tensor<2x16x128xbf16>
    %v131 = tensor.empty() : tensor<2x16x2x64xbf16>
    %v134 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%v127 : tensor<2x2x16x64xbf16>) outs(%v131 : tensor<2x16x2x64xbf16>) {
      ^bb0(%a132: bf16, %a133: bf16):
        linalg.yield %a132 : bf16
      } -> tensor<2x16x2x64xbf16>
    %v135 = tensor.collapse_shape %v134 [[0], [1], [2, 3]] : tensor<2x16x2x64xbf16> into tensor<2x16x128xbf16>
    %v141 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%v135, %w4 : tensor<2x16x128xbf16>, tensor<128x128xbf16>) outs(%v130 : tensor<2x16x128xbf16>) {
      ^bb0(%a136: bf16, %a137: bf16, %a138: bf16):
        %s139 = arith.mulf %a136, %a137 : bf16
        %s140 = arith.addf %a138, %s139 : bf16
        linalg.yield %s140 : bf16
      } -> tensor<2x16x128xbf16>
    %v142 = tensor.empty() : tensor<2x16x128xbf16>
    %v150 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%v141, %w5 : tensor<2x16x128xbf16>, tensor<128xbf16>) outs(%v142 : tensor<2x16x128xbf16>) {
      ^bb0(%a143: bf16, %a144: bf16, %a145: bf16):
        %s146 = arith.extf %a143 : bf16 to f32
        %s147 = arith.extf %a144 : bf16 to f32
        %s148 = arith.addf %s146, %s147 : f32
        %s149 = arith.truncf %s148 : f32 to bf16
        linalg.yield %s149 : bf16
      } -> tensor<2x16x128xbf16>
    %v151 = tensor.empty() : tensor<2x16x128xbf16>
    %v159 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%v150, %in0 : tensor<2x16x128xbf16>, tensor<2x16x128xbf16>) outs(%v151 : tensor<2x16x128xbf16>) {
      ^bb0(%a152: bf16, %a153: bf16, %a154: bf16):
        %s155 = arith.extf %a152 : bf16 to f32
        %s156 = arith.extf %a153 : bf16 to f32
        %s157 = arith.addf %s155, %s156 : f32
        %s158 = arith.truncf %s157 : f32 to bf16
        linalg.yield %s158 : bf16
      } -> tensor<2x16x128xbf16>
    %v160 = tensor.empty() : tensor<2x16xf32>
    %c161 = arith.constant 0.0 : f32
    %v162 = linalg.fill ins(%c161 : f32) outs(%v160 : tensor<2x16xf32>) -> tensor<2x16xf32>
    %v167 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%v159 : tensor<2x16x128xbf16>) outs(%v162 : tensor<2x16xf32>) {
      ^bb0(%a163: bf16, %a164: f32):
        %s165 = arith.extf %a163 : bf16 to f32
        %s166 = arith.addf %s165, %a164 : f32
        linalg.yield %s166 : f32
      } -> tensor<2x16xf32>
    %v168 = tensor.empty() : tensor<2x16xf32>
    %v173 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v167 : tensor<2x16xf32>) outs(%v168 : tensor<2x16xf32>) {
      ^bb0(%a169: f32, %a170: f32):
        %s171 = arith.constant 128.0 : f32
        %s172 = arith.divf %a169, %s171 : f32
        linalg.yield %s172 : f32
      } -> tensor<2x16xf32>
    %v174 = tensor.empty() : tensor<2x16x128xf32>
    %v180 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%v159, %v173 : tensor<2x16x128xbf16>, tensor<2x16xf32>) outs(%v174 : tensor<2x16x128xf32>) {
      ^bb0(%a175: bf16, %a176: f32, %a177: f32):
        %s178 = arith.extf %a175 : bf16 to f32
        %s179 = arith.subf %s178, %a176 : f32
        linalg.yield %s179 : f32
      } -> tensor<2x16x128xf32>
    %v181 = tensor.empty() : tensor<2x16xf32>
    %c182 = arith.constant 0.0 : f32
    %v183 = linalg.fill ins(%c182 : f32) outs(%v181 : tensor<2x16xf32>) -> tensor<2x16xf32>
    %v188 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%v180 : tensor<2x16x128xf32>) outs(%v183 : tensor<2x16xf32>) {
      ^bb0(%a184: f32, %a185: f32):
        %s186 = arith.mulf %a184, %a184 : f32
        %s187 = arith.addf %s186, %a185 : f32
        linalg.yield %s187 : f32
      } -> tensor<2x16xf32>
    %v189 = tensor.empty() : tensor<2x16xf32>
    %v194 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v188 : tensor<2x16xf32>) outs(%v189 : tensor<2x16xf32>) {
      ^bb0(%a190: f32, %a191: f32):
        %s192 = arith.constant 128.0 : f32
        %s193 = arith.divf %a190, %s192 : f32
        linalg.yield %s193 : f32
      } -> tensor<2x16xf32>
    %v195 = tensor.empty() : tensor<2x16xf32>
    %v201 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v194 : tensor<2x16xf32>) outs(%v195 : tensor<2x16xf32>) {
      ^bb0(%a196: f32, %a197: f32):
        %s198 = arith.constant 1.0e-05 : f32
        %s199 = arith.addf %a196, %s198 : f32
        %s200 = math.rsqrt %s199 : f32
        linalg.yield %s200 : f32
      } -> tensor<2x16xf32>
    %v202 = tensor.empty() : tensor<2x16x128xbf16>
    %v217 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%v159, %v173, %v201, %w6, %w7 : tensor<2x16x128xbf16>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<128xbf16>, tensor<128xbf16>) outs(%v202 : tensor<2x16x128xbf16>) {
      ^bb0(%a203: bf16, %a204: f32, %a205: f32, %a206: bf16, %a207: bf16, %a208: bf16):
        %s209 = arith.extf %a203 : bf16 to f32
        %s210 = arith.extf %a206 : bf16 to f32
        %s211 = arith.extf %a207 : bf16 to f32
        %s212 = arith.subf %s209, %a204 : f32
        %s213 = arith.mulf %s212, %a205 : f32
        %s214 = arith.mulf %s213, %s210 : f32
        %s215 = arith.addf %s214, %s211 : f32
        %s216 = arith.truncf %s215 : f32 to bf16
        linalg.yield %s216 : bf16
      } -> tensor<2x16x128xbf16>
    %v218 = tensor.empty() : tensor<2x16x512xbf16>
    %c219 = arith.constant 0.0 : bf16
    %v220 = linalg.fill ins(%c219 : bf16) outs(%v218 : tensor<2x16x512xbf16>) -> tensor<2x16x512xbf16>
    %v226 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%v217, %w8 : tensor<2x16x128xbf16>, tensor<128x512xbf16>) outs(%v220 : tensor<2x16x512xbf16>) {
      ^bb0(%a221: bf16, %a222: bf16, %a223: bf16):
        %s224 = arith.mulf %a221, %a222 : bf16
        %s225 = arith.addf %a223, %s224 : bf16
        linalg.yield %s225 : bf16
      } -> tensor<2x16x512xbf16>
    %v227 = tensor.empty() : tensor<2x16x512xbf16>
    %v235 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%v226, %w9 : tensor<2x16x512xbf16>, tensor<512xbf16>) outs(%v227 : tensor<2x16x512xbf16>) {
      ^bb0(%a228: bf16, %a229: bf16, %a230: bf16):
        %s231 = arith.extf %a228 : bf16 to f32
        %s232 = arith.extf %a229 : bf16 to f32
        %s233 = arith.addf %s231, %s232 : f32
        %s234 = arith.truncf %s233 : f32 to bf16
        linalg.yield %s234 : bf16
      } -> tensor<2x16x512xbf16>
    %v236 = tensor.empty() : tensor<2x16x512xbf16>
    %v243 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%v235 : tensor<2x16x512xbf16>) outs(%v236 : tensor<2x16x512xbf16>) {
      ^bb0(%a237: bf16, %a238: bf16):
        %s239 = arith.extf %a237 : bf16 to f32
        %s240 = arith.constant 0.5 : f32
        %s241 = arith.mulf %s239, %s240 : f32
        %s242 = arith.truncf %s241 : f32 to bf16
        linalg.yield %s242 : bf16
      } -> tensor<2x16x512xbf16>
    %v244 = tensor.empty() : tensor<2x16x512xbf16>
    %v251 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%v235 : tensor<2x16x512xbf16>) outs(%v244 : tensor<2x16x512xbf16>) {
      ^bb0(%a245: bf16, %a246: bf16):
        %s247 = arith.extf %a245 : bf16 to f32
        %s248 = arith.mulf %s247, %s247 : f32
        %s249 = arith.mulf %s248, %s247 : f32
        %s250 = arith.truncf %s249 : f32 to bf16
        linalg.yield %s250 : bf16
      } -> tensor<2x16x512xbf16>
    %v252 = tensor.empty() : tensor<2x16x512xbf16>
    %v259 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%v251 : tensor<2x16x512xbf16>) outs(%v252 : tensor<2x16x512xbf16>) {
      ^bb0(%a253: bf16, %a254: bf16):
        %s255 = arith.extf %a253 : bf16 to f32
        %s256 = arith.constant 0.044715 : f32
        %s257 = arith.mulf %s255, %s256 : f32
        %s258 = arith.truncf %s257 : f32 to bf16
        linalg.yield %s258 : bf16
      } -> tensor<2x16x512xbf16>
    %v260 = tensor.empty() : tensor<2x16x512xbf16>
    %v268 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%v235, %v259 : tensor<2x16x512xbf16>, tensor<2x16x512xbf16>) outs(%v260 : tensor<2x16x512xbf16>) {
      ^bb0(%a261: bf16, %a262: bf16, %a263: bf16):
        %s264 = arith.extf %a261 : bf16 to f32
        %s265 = arith.extf %a262 : bf16 to f32
        %s266 = arith.addf %s264, %s265 : f32
        %s267 = arith.truncf %s266 : f32 to bf16
        linalg.yield %s267 : bf16
      } -> tensor<2x16x512xbf16>
    %v269 = tensor.empty() : tensor<2x16x512xbf16>
    %v276 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%v268 : tensor<2x16x512xbf16>) outs(%v269 : tensor<2x16x512xbf16>) {
      ^bb0(%a270: bf16, %a271: bf16):
        %s272 = arith.extf %a270 : bf16 to f32
        %s273 = arith.constant 0.7978845608028654 : f32
        %s274 = arith.mulf %s272, %s273 : f32
        %s275 = arith.truncf %s274 : f32 to bf16
        linalg.yield %s275 : bf16
      } -> tensor<2x16x512xbf16>
    %v277 = tensor.empty() : tensor<2x16x512xbf16>
    %v283 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%v276 : tensor<2x16x512xbf16>) outs(%v277 : tensor<2x16x512xbf16>) {
      ^bb0(%a278: bf16, %a279: bf16):
        %s280 = arith.extf %a278 : bf16 to f32
        %s281 = math.tanh %s280 : f32
        %s282 = arith.truncf %s281 : f32 to bf16
        linalg.yield %s282 : bf16
      } -> tensor<2x16x512xbf16>
    %v284 = tensor.empty() : tensor<2x16x512xbf16>
    %v291 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%v283 : tensor<2x16x512xbf16>) outs(%v284 : tensor<2x16x512xbf16>) {
      ^bb0(%a285: bf16, %a286: bf16):
        %s287 = arith.extf %a285 : bf16 to f32
        %s288 = arith.constant 1.0 : f32
        %s289 = arith.addf %s287, %s288 : f32
        %s290 = arith.truncf %s289 : f32 to bf16
        linalg.yield %s290 : bf16
      } -> tensor<2x16x512xbf16>
    %v292 = tensor.empty() : tensor<2x16x512xbf16>
    %v300 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%v243, %v291 : tensor<2x16x512xbf16>, tensor<2x16x512xbf16>) outs(%v292 : tensor<2x16x512xbf16>) {
      ^bb0(%a293: bf16, %a294: bf16, %a295: bf16):
        %s296 = arith.extf %a293 : bf16 to f32
        %s297 = arith.extf %a294 : bf16 to f32
        %s298 = arith.mulf %s296, %s297 : f32
        %s299 = arith.truncf %s298 : f32 to bf16
        linalg.yield %s299 : bf16
      } -> tensor<2x16x512xbf16>
    %v301 = tensor.empty() : tensor<2x16x128xbf16>
    %c302 = arith.constant 0.0 : bf16
    %v303 = linalg.fill ins(%c302 : bf16) outs(%v301 : tensor<2x16x128xbf16>) -> tensor<2x16x128xbf16>
    %v309 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%v300, %w10 : tensor<2x16x512xbf16>, tensor<512x128xbf16>) outs(%v303 : tensor<2x16x128xbf16>) {
      ^bb0(%a304: bf16, %a305: bf16, %a306: bf16):
        %s307 = arith.mulf %a304, %a305 : bf16
        %s308 = arith.addf %a306, %s307 : bf16
        linalg.yield %s308 : bf16
      } -> tensor<2x16x128xbf16>
    %v310 = tensor.empty() : tensor<2x16x128xbf16>
    %v318 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%v309, %w11 : tensor<2x16x128xbf16>, tensor<128xbf16>) outs(%v310 : tensor<2x16x128xbf16>) {
      ^bb0(%a311: bf16, %a312: bf16, %a313: bf16):
        %s314 = arith.extf %a311 : bf16 to f32
        %s315 = arith.extf %a312 : bf16 to f32
        %s316 = arith.addf %s314, %s315 : f32
        %s317 = arith.truncf %s316 : f32 to bf16
        linalg.yield %s317 : bf16
      } -> tensor<2x16x128xbf16>
    %v319 = tensor.empty() : tensor<2x16x128xbf16>
    %v327 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%v159, %v318 : tensor<2x16x128xbf16>, tensor<2x16x128xbf16>) outs(%v319 : tensor<2x16x128xbf16>) {
      ^bb0(%a320: bf16, %a321: bf16, %a322: bf16):
        %s323 = arith.extf %a320 : bf16 to f32
        %s324 = arith.extf %a321 : bf16 to f32
        %s325 = arith.addf %s323, %s324 : f32
        %s326 = arith.truncf %s325 : f32 to bf16
        linalg.yield %s326 : bf16
      } -> tensor<2x16x128xbf16>
    return %v327 : tensor<2x16x128xbf16>
  }
}
