// RUN: ein-opt %s --split-input-file --verify-diagnostics --ein-export-shard

// expected-error @below {{ein-export-shard needs}}
module {
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

module attributes {ein.target = #ein.target<devices = 2>} {
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error @below {{has no upstream form: ein-export-shard annotates a linalg-on-tensors program}}
    %y = ein.join_agg none ins(%x[d0] : tensor<4xf32>) out[d0] : tensor<4xf32> {
    ^bb0(%a: f32):
      ein.yield %a : f32
    }
    return %y : tensor<4xf32>
  }
}

// -----

// What the planner refuses is refused here, at the op.
module attributes {ein.target = #ein.target<devices = 2>} {
  // expected-error @below {{the planner takes ranked tensors of static shape}}
  func.func @f(%x: tensor<4x?xf32>) -> tensor<4x?xf32> {
    return %x : tensor<4x?xf32>
  }
}
