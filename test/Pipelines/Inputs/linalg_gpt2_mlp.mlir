// GPT-2's feed-forward with its residual, and a ReLU layer, in bf16 as a
// front end writes them: a linear layer is a matmul generic into a zero
// fill and a bias-add generic; GELU (tanh) is computed in f32 and rounded.
// ein-fuse-gemm-epilogues folds each bias add, the GELU, the residual add
// and the ReLU into its gemm.
#mk = affine_map<(d0, d1, d2) -> (d0, d2)>
#kn = affine_map<(d0, d1, d2) -> (d2, d1)>
#mn3 = affine_map<(d0, d1, d2) -> (d0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @mlp(%x: tensor<24x32xbf16>, %w1: tensor<32x64xbf16> {ein.weight}, %b1: tensor<64xbf16> {ein.weight},
               %w2: tensor<64x32xbf16> {ein.weight}, %b2: tensor<32xbf16> {ein.weight},
               %w3: tensor<32x16xbf16> {ein.weight}, %b3: tensor<16xbf16> {ein.weight}) -> tensor<24x16xbf16> {
  %zero = arith.constant 0.0 : bf16
  %e1 = tensor.empty() : tensor<24x64xbf16>
  %f1 = linalg.fill ins(%zero : bf16) outs(%e1 : tensor<24x64xbf16>) -> tensor<24x64xbf16>
  %m1 = linalg.generic {indexing_maps = [#mk, #kn, #mn3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w1 : tensor<24x32xbf16>, tensor<32x64xbf16>) outs(%f1 : tensor<24x64xbf16>) {
    ^bb0(%a: bf16, %b: bf16, %acc: bf16):
      %p = arith.mulf %a, %b : bf16
      %s = arith.addf %acc, %p : bf16
      linalg.yield %s : bf16
    } -> tensor<24x64xbf16>
  %a1 = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%m1, %b1 : tensor<24x64xbf16>, tensor<64xbf16>) outs(%e1 : tensor<24x64xbf16>) {
    ^bb0(%v: bf16, %b: bf16, %o: bf16):
      %s = arith.addf %v, %b : bf16
      linalg.yield %s : bf16
    } -> tensor<24x64xbf16>
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a1 : tensor<24x64xbf16>) outs(%e1 : tensor<24x64xbf16>) {
    ^bb0(%v: bf16, %o: bf16):
      %t = arith.extf %v : bf16 to f32
      %half = arith.constant 0.5 : f32
      %one = arith.constant 1.0 : f32
      %k = arith.constant 0.7978845608028654 : f32
      %c = arith.constant 0.044715 : f32
      %t2 = arith.mulf %t, %t : f32
      %t3 = arith.mulf %t2, %t : f32
      %ct3 = arith.mulf %c, %t3 : f32
      %in = arith.addf %t, %ct3 : f32
      %arg = arith.mulf %k, %in : f32
      %th = math.tanh %arg : f32
      %ht = arith.mulf %half, %t : f32
      %op = arith.addf %one, %th : f32
      %r = arith.mulf %ht, %op : f32
      %rb = arith.truncf %r : f32 to bf16
      linalg.yield %rb : bf16
    } -> tensor<24x64xbf16>
  %e2 = tensor.empty() : tensor<24x32xbf16>
  %f2 = linalg.fill ins(%zero : bf16) outs(%e2 : tensor<24x32xbf16>) -> tensor<24x32xbf16>
  %m2 = linalg.generic {indexing_maps = [#mk, #kn, #mn3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%g, %w2 : tensor<24x64xbf16>, tensor<64x32xbf16>) outs(%f2 : tensor<24x32xbf16>) {
    ^bb0(%a: bf16, %b: bf16, %acc: bf16):
      %p = arith.mulf %a, %b : bf16
      %s = arith.addf %acc, %p : bf16
      linalg.yield %s : bf16
    } -> tensor<24x32xbf16>
  %a2 = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%m2, %b2 : tensor<24x32xbf16>, tensor<32xbf16>) outs(%e2 : tensor<24x32xbf16>) {
    ^bb0(%v: bf16, %b: bf16, %o: bf16):
      %s = arith.addf %v, %b : bf16
      linalg.yield %s : bf16
    } -> tensor<24x32xbf16>
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %a2 : tensor<24x32xbf16>, tensor<24x32xbf16>) outs(%e2 : tensor<24x32xbf16>) {
    ^bb0(%r: bf16, %v: bf16, %o: bf16):
      %s = arith.addf %r, %v : bf16
      linalg.yield %s : bf16
    } -> tensor<24x32xbf16>
  %e3 = tensor.empty() : tensor<24x16xbf16>
  %f3 = linalg.fill ins(%zero : bf16) outs(%e3 : tensor<24x16xbf16>) -> tensor<24x16xbf16>
  %m3 = linalg.generic {indexing_maps = [#mk, #kn, #mn3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%y, %w3 : tensor<24x32xbf16>, tensor<32x16xbf16>) outs(%f3 : tensor<24x16xbf16>) {
    ^bb0(%a: bf16, %b: bf16, %acc: bf16):
      %p = arith.mulf %a, %b : bf16
      %s = arith.addf %acc, %p : bf16
      linalg.yield %s : bf16
    } -> tensor<24x16xbf16>
  %z = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%m3, %b3 : tensor<24x16xbf16>, tensor<16xbf16>) outs(%e3 : tensor<24x16xbf16>) {
    ^bb0(%v: bf16, %b: bf16, %o: bf16):
      %s = arith.addf %v, %b : bf16
      %r = arith.maximumf %s, %zero : bf16
      linalg.yield %r : bf16
    } -> tensor<24x16xbf16>
  return %z : tensor<24x16xbf16>
}
