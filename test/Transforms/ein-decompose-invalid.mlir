// RUN: ein-opt %s -split-input-file -ein-decompose -verify-diagnostics
// RUN: not ein-opt %s -split-input-file -ein-decompose=state-cap=0 2>&1 | FileCheck %s --check-prefix=CAP
// CAP: error: state-cap must be at least 1, got 0
// RUN: not ein-opt %s -split-input-file -ein-decompose=search-budget=-1 2>&1 | FileCheck %s --check-prefix=BUDGET
// BUDGET: error: search-budget must be 0 (none) or more, got -1

// expected-error @+1 {{ein-decompose needs the module's #ein.target; run ein-attach-target first}}
module {
}

// -----

module attributes {ein.target = #ein.target<devices = 2>} {
  // expected-error @+1 {{the planner takes ranked tensors of static shape, of integers or floats, got '!ein.rel<4xf32, parts = [2]>'}}
  func.func @planned(%a: !ein.rel<4xf32, parts = [2]>) -> !ein.rel<4xf32, parts = [2]> {
    return %a : !ein.rel<4xf32, parts = [2]>
  }
}

// -----

module attributes {ein.target = #ein.target<devices = 2>} {
  func.func @block_kernel(%a: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error @+1 {{is a device-level block kernel; the planner takes the logical program}}
    %s = ein.softmax %a dim 0 {device = 1 : i64} : tensor<4xf32>
    return %s : tensor<4xf32>
  }
}

// -----

module attributes {ein.target = #ein.target<devices = 2>} {
  func.func @not_ein(%a: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error @+1 {{cannot be planned; the planner takes logical ein ops on tensors}}
    %e = tensor.empty() : tensor<4xf32>
    return %e : tensor<4xf32>
  }
}

// -----

module attributes {ein.target = #ein.target<devices = 2>} {
  // expected-error @+1 {{the planner takes ranked tensors of static shape, of integers or floats, got 'tensor<?xf32>'}}
  func.func @dynamic(%a: tensor<?xf32>) -> tensor<?xf32> {
    return %a : tensor<?xf32>
  }
}
