// RUN: ein-opt %s -split-input-file --ein-lower-to-cuda -verify-diagnostics

// expected-error @+1 {{cannot generate code for chip 'sm_61': chips before sm_70 are not supported}}
module attributes {ein.target = #ein.target<devices = 1, chip = "sm_61">} {
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// expected-error @+1 {{cannot generate code for chip 'host': expected a chip named sm_NN}}
module attributes {ein.target = #ein.target<devices = 1, chip = "host">} {
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// expected-error @+1 {{ein-lower-to-cuda needs the module's #ein.target; run ein-attach-target first}}
module {
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}
