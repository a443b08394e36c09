// (A B)(C D) with odd sizes, and the batched form of A^T B (a transposed
// operand through its indexing map) summed over the batch.
func.func @bushy(%a: tensor<97x131xf32>, %b: tensor<131x53xf32>, %c: tensor<53x71xf32>, %d: tensor<71x97xf32>) -> tensor<97x97xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<97x53xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<97x53xf32>) -> tensor<97x53xf32>
  %ab = linalg.matmul ins(%a, %b : tensor<97x131xf32>, tensor<131x53xf32>) outs(%z1 : tensor<97x53xf32>) -> tensor<97x53xf32>
  %e2 = tensor.empty() : tensor<53x97xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<53x97xf32>) -> tensor<53x97xf32>
  %cd = linalg.matmul ins(%c, %d : tensor<53x71xf32>, tensor<71x97xf32>) outs(%z2 : tensor<53x97xf32>) -> tensor<53x97xf32>
  %e3 = tensor.empty() : tensor<97x97xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<97x97xf32>) -> tensor<97x97xf32>
  %r = linalg.matmul ins(%ab, %cd : tensor<97x53xf32>, tensor<53x97xf32>) outs(%z3 : tensor<97x97xf32>) -> tensor<97x97xf32>
  return %r : tensor<97x97xf32>
}
