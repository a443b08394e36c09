// Inputs of ein-synthesize-exchanges-invalid.mlir that need ein-plan first
// (logical programs the lowering refuses once planned).

module attributes {ein.target = #ein.target<devices = 2>} {
  func.func @passthrough(%x: tensor<8xf32>, %y: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
    %r = ein.join_agg none ins(%y[d0] : tensor<8xf32>) out[d0] : tensor<8xf32> {
    ^bb0(%v: f32):
      ein.yield %v : f32
    }
    // expected-error @+1 {{returns arg0, an argument or constant rather than an op's result; lowering that is not done yet}}
    return %x, %r : tensor<8xf32>, tensor<8xf32>
  }
}
