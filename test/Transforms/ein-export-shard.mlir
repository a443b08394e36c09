// ein-export-shard writes the plan back onto the linalg program as upstream
// `shard` annotations that LLVM 22's own mlir-opt reads and partitions.
// RUN: ein-opt %s --ein-attach-target=devices=4 --ein-export-shard | FileCheck %s --check-prefix=FOUR
// RUN: ein-opt %s --ein-attach-target=devices=4 --ein-export-shard | mlir-opt --verify-each | FileCheck %s --check-prefix=PARSED
// RUN: ein-opt %s --ein-attach-target=devices=4 --ein-export-shard | mlir-opt --pass-pipeline='builtin.module(func.func(sharding-propagation,shard-partition))' | FileCheck %s --check-prefix=UPSTREAM
// RUN: ein-opt %s --ein-attach-target=devices=3 --ein-export-shard | FileCheck %s --check-prefix=THREE
// RUN: ein-opt %s --ein-attach-target=devices=8 --ein-export-shard | FileCheck %s --check-prefix=EIGHT
// RUN: ein-opt %s --ein-attach-target=devices=1 --ein-export-shard | FileCheck %s --check-prefix=ONE

// The optimal plan at 4 devices cuts the first matmul's columns and its
// contraction 2 x 2: one 2x2 grid serves every op (the prime factors of 4),
// a 4-way cut takes both axes. The matmul's result is annotated after its
// aggregation (replicated along axis 1, which cut the contraction).
// FOUR-NOT: ein.target
// FOUR: shard.grid @ein_grid_2x2(shape = 2x2)
// FOUR-NOT: shard.grid
// FOUR-LABEL: func.func @mlp(
// FOUR-SAME: %[[X:[^:]*]]: tensor<12x20xf32>, %[[W1:[^:]*]]: tensor<20x24xf32>, %[[B:[^:]*]]: tensor<24xf32>, %[[W2:[^:]*]]: tensor<24x7xf32>)
// Arrival layouts first, in argument order, each as its first reader reads it.
// FOUR-NEXT: %[[S0:.*]] = shard.sharding @ein_grid_2x2 split_axes = {{\[\[}}], [1]]
// FOUR-NEXT: %[[XA:.*]] = shard.shard %[[X]] to %[[S0]] : tensor<12x20xf32>
// FOUR-NEXT: %[[S1:.*]] = shard.sharding @ein_grid_2x2 split_axes = {{\[\[}}1], [0]]
// FOUR-NEXT: %[[W1A:.*]] = shard.shard %[[W1]] to %[[S1]] : tensor<20x24xf32>
// FOUR: shard.shard %[[B]] to
// FOUR: shard.shard %[[W2]] to
// The first matmul reads x by contraction columns, w1 by both.
// FOUR: %[[XR:.*]] = shard.shard %[[XA]] to %{{.*}} annotate_for_users : tensor<12x20xf32>
// FOUR: %[[W1R:.*]] = shard.shard %[[W1A]] to %{{.*}} annotate_for_users : tensor<20x24xf32>
// FOUR-NEXT: %[[H:.*]] = linalg.matmul ins(%[[XR]], %[[W1R]] :
// FOUR-NEXT: %[[S2:.*]] = shard.sharding @ein_grid_2x2 split_axes = {{\[\[}}], [0]]
// FOUR-NEXT: %[[HA:.*]] = shard.shard %[[H]] to %[[S2]] : tensor<12x24xf32>
// The bias and ReLU read it 4 ways by columns: both axes on dimension 1.
// FOUR-NEXT: %[[S3:.*]] = shard.sharding @ein_grid_2x2 split_axes = {{\[\[}}], [0, 1]]
// FOUR-NEXT: shard.shard %[[HA]] to %[[S3]] annotate_for_users
// FOUR: linalg.generic
// The last matmul contracts over all 4 devices: its result, aggregated, is
// replicated.
// FOUR: %[[Y:.*]] = linalg.matmul
// FOUR-NEXT: %[[S4:.*]] = shard.sharding @ein_grid_2x2 split_axes = {{\[\[}}]]
// FOUR-NEXT: %[[YA:.*]] = shard.shard %[[Y]] to %[[S4]] : tensor<12x7xf32>
// FOUR-NEXT: return %[[YA]]

// Weights marked {ein.weight} are free to replicate: the plan is data
// parallel, the weights arrive with no annotation of their own and are
// read replicated.
// FOUR-LABEL: func.func @dp(
// FOUR-SAME: %[[DX:[^:]*]]: tensor<12x20xf32>, %[[DW1:[^:]*]]: tensor<20x24xf32> {ein.weight}
// FOUR-NEXT: %[[DS:.*]] = shard.sharding @ein_grid_2x2 split_axes = {{\[\[}}0, 1]]
// FOUR-NEXT: shard.shard %[[DX]] to %[[DS]] : tensor<12x20xf32>
// FOUR-NOT: shard.shard %[[DW1]] to %{{.*}} : tensor
// FOUR: shard.shard %[[DW1]] to %{{.*}} annotate_for_users : tensor<20x24xf32>

// PARSED: shard.grid @ein_grid_2x2
// PARSED: linalg.matmul

// Upstream's partitioner turns the annotations into per-device shapes and
// collectives: 2x2 of the first matmul's operands, a sum over the
// contraction's axis, the last matmul's sum over both.
// UPSTREAM-LABEL: func.func @mlp(%{{.*}}: tensor<12x10xf32>, %{{.*}}: tensor<10x12xf32>, %{{.*}}: tensor<6xf32>, %{{.*}}: tensor<6x7xf32>) -> tensor<12x7xf32>
// UPSTREAM: shard.all_reduce %{{.*}} on @ein_grid_2x2 grid_axes = [1] : tensor<12x12xf32>
// UPSTREAM: shard.all_reduce %{{.*}} on @ein_grid_2x2 grid_axes = [0, 1] : tensor<12x7xf32>
// UPSTREAM-LABEL: func.func @dp(%{{.*}}: tensor<3x20xf32>, %{{.*}}: tensor<20x24xf32>

// Three devices: a grid of 3, the columns cut 3 ways.
// THREE: shard.grid @ein_grid_3(shape = 3)
// THREE-NOT: shard.grid
// THREE-LABEL: func.func @mlp(
// THREE: split_axes = {{\[\[}}], [0]]

// Eight devices: 2x2x2.
// EIGHT: shard.grid @ein_grid_2x2x2(shape = 2x2x2)
// EIGHT-NOT: shard.grid
// 12 rows cut 8 ways: 2, 2, 2, 2, 1, 1, 1, 1.
// EIGHT: split_axes = {{\[\[}}0, 1, 2]] sharded_dims_offsets = [0, 2, 4, 6, 8, 9, 10, 11, 12]

// One device: nothing is cut.
// ONE: shard.grid @ein_grid_1(shape = 1)
// ONE-NOT: split_axes = {{\[\[}}0
// ONE-NOT: split_axes = {{\[\[}}],
func.func @mlp(%x: tensor<12x20xf32>, %w1: tensor<20x24xf32>, %b: tensor<24xf32>, %w2: tensor<24x7xf32>) -> tensor<12x7xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<12x24xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<12x24xf32>) -> tensor<12x24xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<12x20xf32>, tensor<20x24xf32>) outs(%z1 : tensor<12x24xf32>) -> tensor<12x24xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%h, %b : tensor<12x24xf32>, tensor<24xf32>) outs(%e1 : tensor<12x24xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    %t = arith.maximumf %s, %zero : f32
    linalg.yield %t : f32
  } -> tensor<12x24xf32>
  %e2 = tensor.empty() : tensor<12x7xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<12x7xf32>) -> tensor<12x7xf32>
  %y = linalg.matmul ins(%r, %w2 : tensor<12x24xf32>, tensor<24x7xf32>) outs(%z2 : tensor<12x7xf32>) -> tensor<12x7xf32>
  return %y : tensor<12x7xf32>
}

func.func @dp(%x: tensor<12x20xf32>, %w1: tensor<20x24xf32> {ein.weight}) -> tensor<12x24xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<12x24xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<12x24xf32>) -> tensor<12x24xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<12x20xf32>, tensor<20x24xf32>) outs(%z1 : tensor<12x24xf32>) -> tensor<12x24xf32>
  return %h : tensor<12x24xf32>
}
