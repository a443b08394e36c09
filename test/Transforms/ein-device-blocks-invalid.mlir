// RUN: ein-opt %s -split-input-file -verify-diagnostics --ein-device-blocks
// A GPU the target does not have:
// RUN: not ein-opt %s -split-input-file --ein-device-blocks=device=2 2>&1 | FileCheck %s --check-prefix=RANGE
// RUN: not ein-opt %s -split-input-file --ein-device-blocks=device=-2 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RANGE: error: device=2 is not a GPU of the target's 2 (0 to 1, or -1 for each op's slowest block)
// NEGATIVE: error: device=-2 is not a GPU of the target's 2 (0 to 1, or -1 for each op's slowest block)

module attributes {ein.target = #ein.target<devices = 2>} {
  func.func @no_spec(%x: tensor<8xf32>) -> tensor<8xf32> {
    // expected-error @+1 {{has no spec; ein-device-blocks takes a planned program (run ein-decompose first)}}
    %e = ein.join_agg none ins(%x[d0] : tensor<8xf32>) out[d0] : tensor<8xf32> {
    ^bb0(%a: f32):
      %t = math.exp %a : f32
      ein.yield %t : f32
    }
    return %e : tensor<8xf32>
  }
}

// -----

module attributes {ein.target = #ein.target<devices = 2>} {
  func.func @illegal_spec(%x: tensor<8xf32>) -> tensor<8xf32> {
    // expected-error @+1 {{spec #ein.spec<[1]> is not legal on 2 devices}}
    %e = ein.join_agg none ins(%x[d0] : tensor<8xf32>) out[d0] attributes {spec = #ein.spec<[1]>} : tensor<8xf32> {
    ^bb0(%a: f32):
      %t = math.exp %a : f32
      ein.yield %t : f32
    }
    return %e : tensor<8xf32>
  }
}

// -----

// expected-error @+1 {{ein-device-blocks needs}}
module {
  func.func @no_target(%x: tensor<8xf32>) -> tensor<8xf32> {
    return %x : tensor<8xf32>
  }
}
