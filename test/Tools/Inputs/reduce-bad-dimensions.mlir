// linalg.reduce with its dimensions not an array: MLIR 22 parser crashes on
// it; ein-opt refuses it first (test/Tools/bad-input.test).
func.func @f(%x: tensor<4x8xf32>, %s: tensor<4xf32>) -> tensor<4xf32> {
  %m = linalg.reduce ins(%x : tensor<4x8xf32>) outs(%s : tensor<4xf32>) dimensions = 1
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  return %m : tensor<4xf32>
}
