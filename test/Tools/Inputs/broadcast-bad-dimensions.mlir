func.func @f(%b: tensor<4xf32>, %e: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %r = linalg.broadcast ins(%b : tensor<4xf32>) outs(%e : tensor<2x4xf32>) dimensions = [0, 1, 232>
  return %r : tensor<2x4xf32>
}
