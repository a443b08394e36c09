// Annotations ein cannot honour are errors that name the value and say why.
// RUN: ein-opt %s --split-input-file --verify-diagnostics --ein-import --ein-attach-target=devices=4 --ein-decompose

shard.grid @g8(shape = 8)
func.func @other_grid(%x: tensor<16x4xf32>) -> tensor<16x4xf32> {
  %s = shard.sharding @g8 split_axes = [[0]] : !shard.sharding
  // expected-error @below {{cannot be honoured as a pin on 'tensor<16x4xf32>': grid @g8 has 8 devices; the target has 4}}
  %xs = shard.shard %x to %s : tensor<16x4xf32>
  return %xs : tensor<16x4xf32>
}

// -----

shard.grid @g(shape = 4)
func.func @offsets(%x: tensor<97x4xf32>) -> tensor<97x4xf32> {
  %s = shard.sharding @g split_axes = [[0]] sharded_dims_offsets = [0, 24, 48, 72, 97] : !shard.sharding
  // expected-error @below {{its sharded_dims_offsets [0, 24, 48, 72, 97] are not where ein cuts those parts ([0, 25, 49, 73, 97])}}
  %xs = shard.shard %x to %s : tensor<97x4xf32>
  return %xs : tensor<97x4xf32>
}

// -----

shard.grid @g(shape = 4)
func.func @halo(%x: tensor<16x4xf32>) -> tensor<16x4xf32> {
  %s = shard.sharding @g split_axes = [[0]] halo_sizes = [1, 1] : !shard.sharding
  // expected-error @below {{ein takes split axes and static sharded_dims_offsets, not halo sizes}}
  %xs = shard.shard %x to %s : tensor<16x4xf32>
  return %xs : tensor<16x4xf32>
}

// -----

// Rows 4 ways on the read and columns 4 ways on the result: 16 blocks on 4
// devices, no legal spec.
shard.grid @g(shape = 4)
func.func @conflict(%x: tensor<12x20xf32>, %w: tensor<20x24xf32>) -> tensor<12x24xf32> {
  %zero = arith.constant 0.0 : f32
  %s0 = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %s0 annotate_for_users : tensor<12x20xf32>
  %e = tensor.empty() : tensor<12x24xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<12x24xf32>) -> tensor<12x24xf32>
  // expected-error @below {{has no plan: op 'ein.join_agg #0' has no legal spec that honours its shard pins (operand 0 in [4, 1] parts, the result in [1, 4] parts)}}
  %h = linalg.matmul ins(%xs, %w : tensor<12x20xf32>, tensor<20x24xf32>) outs(%z : tensor<12x24xf32>) -> tensor<12x24xf32>
  %s1 = shard.sharding @g split_axes = [[], [0]] : !shard.sharding
  %hs = shard.shard %h to %s1 : tensor<12x24xf32>
  return %hs : tensor<12x24xf32>
}
