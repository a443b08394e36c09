// Uneven cuts carry their cut points (sharded_dims_offsets), ein's own:
// 97 rows in 3 parts are 33, 32, 32. mlir-opt reads them; LLVM 22's
// shard-partition crashes on them, so it is not run here
// (docs/interop.md).
// RUN: ein-opt %s --ein-attach-target=devices=3 --ein-export-shard | FileCheck %s --check-prefix=THREE
// RUN: ein-opt %s --ein-attach-target=devices=4 --ein-export-shard | FileCheck %s --check-prefix=FOUR
// RUN: ein-opt %s --ein-attach-target=devices=8 --ein-export-shard | FileCheck %s --check-prefix=EIGHT
// RUN: ein-opt %s --ein-attach-target=devices=8 --ein-export-shard | mlir-opt --verify-each | FileCheck %s --check-prefix=PARSED

// THREE: shard.sharding @ein_grid_3 split_axes = {{\[\[}}0]] sharded_dims_offsets = [0, 33, 65, 97]
// THREE-NEXT: shard.shard %arg0
// FOUR: shard.sharding @ein_grid_2x2 split_axes = {{\[\[}}0, 1]] sharded_dims_offsets = [0, 25, 49, 73, 97]
// EIGHT: shard.sharding @ein_grid_2x2x2 split_axes = {{\[\[}}0, 1, 2]] sharded_dims_offsets = [0, 13, 25, 37, 49, 61, 73, 85, 97]
// PARSED: sharded_dims_offsets = [0, 13, 25, 37, 49, 61, 73, 85, 97]
func.func @odd(%x: tensor<97x5xf32>) -> tensor<97x5xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<97x5xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<97x5xf32>) outs(%e : tensor<97x5xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.maximumf %a, %zero : f32
    linalg.yield %t : f32
  } -> tensor<97x5xf32>
  return %r : tensor<97x5xf32>
}
