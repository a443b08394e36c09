// The MLP with upstream shard annotations a user wrote: x arrives by rows,
// the first matmul's result by columns (pins for the planner).
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
