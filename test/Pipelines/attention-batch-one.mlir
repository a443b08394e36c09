// Grouped-query causal attention at a batch of one, as transformers'
// LlamaForCausalLM exports it: the key and values expanded over the query
// heads with their batch read at 0 (a unit dimension), which ein-import
// drops with an ein.reshape. ein-fuse-composites looks through that
// reshape and fuses (one ein.attention of group 2), and the bundle
// computes what the program does.
// RUN: ein-opt %s --ein-import --ein-fuse-composites | FileCheck %s
// CHECK-LABEL: func.func @llama_batch_one
// CHECK: ein.attention
// CHECK-SAME: causal
// CHECK-SAME: group = 2
// CHECK-NOT: ein.softmax
// RUN: rm -rf %t && ein-compile %s -o %t | FileCheck %s --check-prefix=STEPS
// STEPS: steps: {{.*}} 1 attention,
// RUN: ein-run %t --check --debug --seed=5 | FileCheck %s --check-prefix=CHECKED
// CHECKED: max_rel_err={{[0-9.e-]+}}
#q = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
#k = affine_map<(d0, d1, d2, d3, d4) -> (0, d1 floordiv 2, d3, d4)>
#v = affine_map<(d0, d1, d2, d3, d4) -> (0, d1 floordiv 2, d4, d3)>
#o = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#tr = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>
func.func @llama_batch_one(%q: tensor<1x4x16x8xf32>, %k: tensor<1x2x16x8xf32>, %vin: tensor<1x16x2x8xf32>) -> tensor<1x4x16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<1x4x16x16xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32>
  %scores = linalg.generic {indexing_maps = [#q, #k, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x4x16x8xf32>, tensor<1x2x16x8xf32>) outs(%f0 : tensor<1x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x4x16x16xf32>
  %e1 = tensor.empty() : tensor<1x4x16x16xf32>
  %masked = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%scores : tensor<1x4x16x16xf32>) outs(%e1 : tensor<1x4x16x16xf32>) {
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
  %e3 = tensor.empty() : tensor<1x2x16x8xf32>
  %v = linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%vin : tensor<1x16x2x8xf32>) outs(%e3 : tensor<1x2x16x8xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  } -> tensor<1x2x16x8xf32>
  %e4 = tensor.empty() : tensor<1x4x16x8xf32>
  %f4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<1x4x16x8xf32>) -> tensor<1x4x16x8xf32>
  %out = linalg.generic {indexing_maps = [#q, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<1x4x16x16xf32>, tensor<1x2x16x8xf32>) outs(%f4 : tensor<1x4x16x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x4x16x8xf32>
  return %out : tensor<1x4x16x8xf32>
}

