// The row softmax of linalg_softmax.mlir with its row maximum pinned (a
// shard.shard on a value inside the composite): the value must exist, so
// the softmax is not fused; the ops compute it one by one.
// Row softmax of a causal-masked score matrix, every step a generic: the
// mask from linalg.index, a max from -inf, exp of the difference, a sum from
// zero, a division. One input feeds several branches.
shard.grid @g(shape = 2)
func.func @softmax(%s: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x16xf32>
  %masked = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%s : tensor<16x16xf32>) outs(%e : tensor<16x16xf32>) {
  ^bb0(%v: f32, %o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %keep = arith.cmpi ule, %j, %i : index
    %r = arith.select %keep, %v, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<16x16xf32>
  %er = tensor.empty() : tensor<16xf32>
  %minit = linalg.fill ins(%ninf : f32) outs(%er : tensor<16xf32>) -> tensor<16xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%masked : tensor<16x16xf32>) outs(%minit : tensor<16xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.maximumf %acc, %v : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %ms0 = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %mpin = shard.shard %m to %ms0 : tensor<16xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%masked, %mpin : tensor<16x16xf32>, tensor<16xf32>) outs(%e : tensor<16x16xf32>) {
  ^bb0(%v: f32, %mx: f32, %o: f32):
    %d = arith.subf %v, %mx : f32
    %x = math.exp %d : f32
    linalg.yield %x : f32
  } -> tensor<16x16xf32>
  %sinit = linalg.fill ins(%zero : f32) outs(%er : tensor<16xf32>) -> tensor<16xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%p : tensor<16x16xf32>) outs(%sinit : tensor<16xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %v, %acc : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%p, %sum : tensor<16x16xf32>, tensor<16xf32>) outs(%e : tensor<16x16xf32>) {
  ^bb0(%v: f32, %t: f32, %o: f32):
    %q = arith.divf %v, %t : f32
    linalg.yield %q : f32
  } -> tensor<16x16xf32>
  return %y : tensor<16x16xf32>
}
