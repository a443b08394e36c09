// Attention written with named ops only: the key transposed by
// linalg.transpose for linalg.batch_matmul, a scale as a product with a
// filled tensor, the softmax as linalg.reduce / linalg.broadcast /
// linalg.elementwise / linalg.map, the weighted values by batch_matmul.
// ein-import and ein-fuse-composites make it one ein.attention.
func.func @attention_named(%q: tensor<4x16x8xf32>, %k: tensor<4x16x8xf32>, %v: tensor<4x16x8xf32>) -> tensor<4x16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %scale = arith.constant 0.353553385 : f32
  %ekt = tensor.empty() : tensor<4x8x16xf32>
  %kt = linalg.transpose ins(%k : tensor<4x16x8xf32>) outs(%ekt : tensor<4x8x16xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<4x16x16xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<4x16x8xf32>, tensor<4x8x16xf32>) outs(%zs : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %c = linalg.fill ins(%scale : f32) outs(%es : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %ss = linalg.elementwise kind=#linalg.elementwise_kind<mul> ins(%s, %c : tensor<4x16x16xf32>, tensor<4x16x16xf32>) outs(%es : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %er = tensor.empty() : tensor<4x16xf32>
  %mi = linalg.fill ins(%ninf : f32) outs(%er : tensor<4x16xf32>) -> tensor<4x16xf32>
  %m = linalg.reduce ins(%ss : tensor<4x16x16xf32>) outs(%mi : tensor<4x16xf32>) dimensions = [2]
    (%in: f32, %acc: f32) {
      %r = arith.maximumf %in, %acc : f32
      linalg.yield %r : f32
    }
  %mb = linalg.broadcast ins(%m : tensor<4x16xf32>) outs(%es : tensor<4x16x16xf32>) dimensions = [2]
  %d = linalg.elementwise kind=#linalg.elementwise_kind<sub> ins(%ss, %mb : tensor<4x16x16xf32>, tensor<4x16x16xf32>) outs(%es : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %e = linalg.map { math.exp } ins(%d : tensor<4x16x16xf32>) outs(%es : tensor<4x16x16xf32>)
  %zr = linalg.fill ins(%zero : f32) outs(%er : tensor<4x16xf32>) -> tensor<4x16xf32>
  %l = linalg.reduce ins(%e : tensor<4x16x16xf32>) outs(%zr : tensor<4x16xf32>) dimensions = [2]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  %lb = linalg.broadcast ins(%l : tensor<4x16xf32>) outs(%es : tensor<4x16x16xf32>) dimensions = [2]
  %p = linalg.elementwise kind=#linalg.elementwise_kind<div> ins(%e, %lb : tensor<4x16x16xf32>, tensor<4x16x16xf32>) outs(%es : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %eo = tensor.empty() : tensor<4x16x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x16x8xf32>) -> tensor<4x16x8xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<4x16x16xf32>, tensor<4x16x8xf32>) outs(%zo : tensor<4x16x8xf32>) -> tensor<4x16x8xf32>
  return %o : tensor<4x16x8xf32>
}
