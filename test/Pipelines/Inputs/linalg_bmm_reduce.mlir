// Batched products through transposes, then a max and a sum: a stored
// [b, k, i] and bt stored [b, j, k] multiply through transposed indexing
// maps; the result times w (stored [b, n, j]) by a named batch_matmul with
// a transposed operand map and again by one after a linalg.transpose;
// linalg.reduce takes the max over n, a generic sums that over the batch.
func.func @bmm_reduce(%a: tensor<3x16x10xf32>, %bt: tensor<3x12x16xf32>, %w: tensor<3x5x12xf32>) -> (tensor<3x10xf32>, tensor<10xf32>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %ebij = tensor.empty() : tensor<3x10x12xf32>
  %zbij = linalg.fill ins(%zero : f32) outs(%ebij : tensor<3x10x12xf32>) -> tensor<3x10x12xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(b, i, j, k) -> (b, k, i)>, affine_map<(b, i, j, k) -> (b, j, k)>, affine_map<(b, i, j, k) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%a, %bt : tensor<3x16x10xf32>, tensor<3x12x16xf32>) outs(%zbij : tensor<3x10x12xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<3x10x12xf32>
  %ebin = tensor.empty() : tensor<3x10x5xf32>
  %zbin = linalg.fill ins(%zero : f32) outs(%ebin : tensor<3x10x5xf32>) -> tensor<3x10x5xf32>
  %d = linalg.batch_matmul indexing_maps = [affine_map<(b, i, n, j) -> (b, i, j)>, affine_map<(b, i, n, j) -> (b, n, j)>, affine_map<(b, i, n, j) -> (b, i, n)>] ins(%c, %w : tensor<3x10x12xf32>, tensor<3x5x12xf32>) outs(%zbin : tensor<3x10x5xf32>) -> tensor<3x10x5xf32>
  %ebjn = tensor.empty() : tensor<3x12x5xf32>
  %wt = linalg.transpose ins(%w : tensor<3x5x12xf32>) outs(%ebjn : tensor<3x12x5xf32>) permutation = [0, 2, 1]
  %e = linalg.batch_matmul ins(%c, %wt : tensor<3x10x12xf32>, tensor<3x12x5xf32>) outs(%d : tensor<3x10x5xf32>) -> tensor<3x10x5xf32>
  %ebi = tensor.empty() : tensor<3x10xf32>
  %mbi = linalg.fill ins(%ninf : f32) outs(%ebi : tensor<3x10xf32>) -> tensor<3x10xf32>
  %m = linalg.reduce ins(%e : tensor<3x10x5xf32>) outs(%mbi : tensor<3x10xf32>) dimensions = [2]
    (%x: f32, %acc: f32) {
      %r = arith.maximumf %x, %acc : f32
      linalg.yield %r : f32
    }
  %ei = tensor.empty() : tensor<10xf32>
  %zi = linalg.fill ins(%zero : f32) outs(%ei : tensor<10xf32>) -> tensor<10xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, b) -> (b, i)>, affine_map<(i, b) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%m : tensor<3x10xf32>) outs(%zi : tensor<10xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %acc, %x : f32
    linalg.yield %r : f32
  } -> tensor<10xf32>
  return %m, %s : tensor<3x10xf32>, tensor<10xf32>
}
