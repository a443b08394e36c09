// RUN: ein-opt %s -split-input-file -ein-enumerate-specs -verify-diagnostics

// expected-error @+1 {{ein-enumerate-specs needs the module's #ein.target; run ein-attach-target first}}
module {
}

// -----

module attributes {ein.target = #ein.target<devices = 2>} {
  func.func @not_ein(%a: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error @+1 {{cannot be planned; the planner takes logical ein ops on tensors}}
    %e = tensor.empty() : tensor<4xf32>
    return %e : tensor<4xf32>
  }
}
