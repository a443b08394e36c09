// A user's upstream `shard.shard` annotations are pins: ein-import keeps
// them, ein-decompose plans with each pinned layout fixed and then drops
// them.
// RUN: ein-opt %s --split-input-file --ein-import --ein-attach-target=devices=4 --ein-decompose | FileCheck %s
// RUN: ein-opt %s --split-input-file --ein-import --ein-attach-target=devices=4 --ein-decompose=explain=- | FileCheck %s --check-prefix=EXPLAIN

// Unpinned, the optimal plan cuts this matmul's columns and contraction
// 2 x 2 (ein-export-shard.mlir); the pin on its result asks for its
// columns 4 ways, and x arrives pinned by rows (its move to the matmul's
// reads is charged).
// CHECK-LABEL: func.func @mlp
// CHECK-NOT: shard.shard
// CHECK: ein.join_agg add ins(%arg0{{.*}}spec = #ein.spec<[1, 4, 1]>
// CHECK-NOT: shard.shard
// CHECK: return
// EXPLAIN: ein.join_agg #0 {{.*}} d1/4
shard.grid @g(shape = 4)
func.func @mlp(%x: tensor<12x20xf32>, %w1: tensor<20x24xf32>, %w2: tensor<24x7xf32>) -> tensor<12x7xf32> {
  %zero = arith.constant 0.0 : f32
  %s0 = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %s0 : tensor<12x20xf32>
  %e1 = tensor.empty() : tensor<12x24xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<12x24xf32>) -> tensor<12x24xf32>
  %h = linalg.matmul ins(%xs, %w1 : tensor<12x20xf32>, tensor<20x24xf32>) outs(%z1 : tensor<12x24xf32>) -> tensor<12x24xf32>
  %s1 = shard.sharding @g split_axes = [[], [0]] : !shard.sharding
  %hs = shard.shard %h to %s1 : tensor<12x24xf32>
  %e2 = tensor.empty() : tensor<12x7xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<12x7xf32>) -> tensor<12x7xf32>
  %y = linalg.matmul ins(%hs, %w2 : tensor<12x24xf32>, tensor<24x7xf32>) outs(%z2 : tensor<12x7xf32>) -> tensor<12x7xf32>
  return %y : tensor<12x7xf32>
}

// -----

// A pin for users: this reader takes the rows 2 ways and the columns 2
// ways (a 2x2 grid), whatever else would be cheaper.
// CHECK-LABEL: func.func @relu
// CHECK: spec = #ein.spec<[2, 2]>
shard.grid @g2(shape = 2x2)
func.func @relu(%x: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %s = shard.sharding @g2 split_axes = [[0], [1]] : !shard.sharding
  %xs = shard.shard %x to %s annotate_for_users : tensor<16x16xf32>
  %e = tensor.empty() : tensor<16x16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%xs : tensor<16x16xf32>) outs(%e : tensor<16x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.maximumf %a, %zero : f32
    linalg.yield %t : f32
  } -> tensor<16x16xf32>
  return %r : tensor<16x16xf32>
}
