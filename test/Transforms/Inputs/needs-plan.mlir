// Inputs of ein-synthesize-exchanges-invalid.mlir that need ein-plan first
// (logical programs the lowering refuses once planned).

// The concat's output cut in 3 reads x as [0:4] and [4:6]: not an even cut
// of x, so x cannot arrive as a relation in that layout.
module attributes {ein.target = #ein.target<devices = 3>} {
  // expected-error @+1 {{argument 0 is first read in parts that are not an even cut of it (through a slice or concat); placing such an argument is not lowered yet}}
  func.func @uneven(%x: tensor<6xf32>, %y: tensor<6xf32>) -> tensor<12xf32> {
    %c = ein.concat dim 0 %x, %y : tensor<6xf32>, tensor<6xf32> -> tensor<12xf32>
    return %c : tensor<12xf32>
  }
}

// -----

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
