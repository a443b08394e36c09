// GPT-2 at a batch of one: the scores of a batched matmul over the heads
// (the unit batch read at 0 and dropped), scaled and causally masked into
// [1, heads, s, t] for the softmax, the probabilities read back without
// the batch. The attention is of the scores' rank, one ein.attention.
// RUN: ein-opt %s --ein-import --ein-fuse-composites | FileCheck %s 
// CHECK-LABEL: func.func @gpt2_batch_one
// CHECK: ein.attention
// CHECK-SAME: causal
// CHECK-NOT: ein.softmax
// RUN: rm -rf %t && ein-compile %s -o %t | FileCheck %s --check-prefix=STEPS
// RUN: ein-run %t --check --debug --seed=6 | FileCheck %s --check-prefix=CHECKED
// STEPS: steps: {{.*}} 1 attention,
// CHECKED: max_rel_err={{[0-9.e-]+}}
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#g_qk_q = affine_map<(d0, d1, d2, d3) -> (0, d0, d1, d3)>
#g_qk_k = affine_map<(d0, d1, d2, d3) -> (0, d0, d2, d3)>
#g_qk_o = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#g_up = affine_map<(d0, d1, d2, d3) -> (d1, d2, d3)>
#g_pv_v = affine_map<(d0, d1, d2, d3) -> (0, d0, d3, d2)>
func.func @gpt2_batch_one(%q: tensor<1x4x16x8xf32>, %k: tensor<1x4x16x8xf32>, %v: tensor<1x4x16x8xf32>) -> tensor<1x4x16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<4x16x16xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %scores = linalg.generic {indexing_maps = [#g_qk_q, #g_qk_k, #g_qk_o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x4x16x8xf32>, tensor<1x4x16x8xf32>) outs(%f0 : tensor<4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x16x16xf32>
  %e1 = tensor.empty() : tensor<1x4x16x16xf32>
  %masked = linalg.generic {indexing_maps = [#g_up, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%scores : tensor<4x16x16xf32>) outs(%e1 : tensor<1x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32):
    %scale = arith.constant 0.35355339059327373 : f32
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %after = arith.cmpi sgt, %j, %i : index
    %x = arith.mulf %a, %scale : f32
    %ninf = arith.constant 0xFF800000 : f32
    %r = arith.select %after, %ninf, %x : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16x16xf32>
  %e2 = tensor.empty() : tensor<1x4x16x16xf32>
  %p = linalg.softmax dimension(3) ins(%masked : tensor<1x4x16x16xf32>) outs(%e2 : tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32>
  %e3 = tensor.empty() : tensor<4x16x8xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<4x16x8xf32>) -> tensor<4x16x8xf32>
  %pv = linalg.generic {indexing_maps = [#g_qk_q, #g_pv_v, #g_qk_o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<1x4x16x16xf32>, tensor<1x4x16x8xf32>) outs(%f3 : tensor<4x16x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x16x8xf32>
  %e4 = tensor.empty() : tensor<1x4x16x8xf32>
  %out = linalg.generic {indexing_maps = [#g_up, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%pv : tensor<4x16x8xf32>) outs(%e4 : tensor<1x4x16x8xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  } -> tensor<1x4x16x8xf32>
  return %out : tensor<1x4x16x8xf32>
}
